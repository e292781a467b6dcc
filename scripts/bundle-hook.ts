// Bundles the lifecycle hook (dist/src/commands/tree-ring/hook-main.js and everything it imports from
// this package) into one ES module, dist/hook/tree-ring-hook.js. Hosts start a process per hook event
// and each extra module costs start-up time; the project-local launcher runs this bundle for
// `--root .tree-ring integrations hook …`. Packages (better-sqlite3) stay external.

import { buildSync } from 'esbuild';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
buildSync({
  entryPoints: [path.join(root, 'dist/src/commands/tree-ring/hook-main.js')],
  outfile: path.join(root, 'dist/hook/tree-ring-hook.js'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});
// The task Stop hooks (skill-workflow task-stop|task-codex-stop), registered by install-stop.
buildSync({
  entryPoints: [path.join(root, 'dist/src/commands/skill-workflow/hook-main.js')],
  outfile: path.join(root, 'dist/hook/agentscm-stop-hook.js'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});
