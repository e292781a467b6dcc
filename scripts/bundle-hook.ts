// Bundles the task Stop hooks (dist/src/commands/skill-workflow/hook-main.js and everything it imports
// from this package) into one ES module, dist/hook/agentscm-stop-hook.js. Hosts start a process per hook
// event and each extra module costs start-up time. Packages (better-sqlite3) stay external. tree-ring's
// bundles are built by ./bundle-tree-ring.ts (imported below).

import { buildSync } from 'esbuild';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import './bundle-tree-ring.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
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
