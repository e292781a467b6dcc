// The project-local launcher .tree-ring/bin/tree-ring. Hosts run hooks with a minimal PATH (even
// PATH=/usr/bin:/bin), so it names node and this CLI by absolute path instead of relying on PATH.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const LAUNCHER_PATH = '.tree-ring/bin/tree-ring';

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Absolute path of this package's tree-ring entry (bin/tree-ring.js), resolved through symlinks. */
export function cliEntryPath(): string {
  // dist/src/core/treering/activation/launcher.js -> package root
  const p = fileURLToPath(new URL('../../../../../bin/tree-ring.js', import.meta.url));
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/** The one-file CommonJS bundle of the lifecycle hook beside the CLI (dist/bundles/tree-ring-hook.cjs). */
export function hookBundlePath(cliPath: string): string {
  return path.join(path.dirname(path.dirname(cliPath)), 'dist', 'bundles', 'tree-ring-hook.cjs');
}

export function launcherScript(nodePath = process.execPath, cliPath = cliEntryPath()): string {
  const bundle = hookBundlePath(cliPath);
  return `#!/bin/sh
# Tree Ring project-local launcher: runs this project's tree-ring with absolute paths (no PATH lookup).
# The lifecycle hook runs from its one-file bundle, which starts faster (the CLI picks its own fast
# path for recall).
if [ "$1 $2 $3 $4" = "--root .tree-ring integrations hook" ] && [ -f ${shQuote(bundle)} ]; then
  exec ${shQuote(nodePath)} ${shQuote(bundle)} "$@"
fi
exec ${shQuote(nodePath)} ${shQuote(cliPath)} "$@"
`;
}
