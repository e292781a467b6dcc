// Bundles the task Stop hooks (dist/src/commands/skill-workflow/hook-main.js and everything it imports
// from this package) into one CommonJS file, dist/hook/agentscm-stop-hook.cjs. Hosts start a process per hook
// event and each extra module costs start-up time. Packages (better-sqlite3) stay external. tree-ring's
// bundles are built by ./bundle-tree-ring.ts (imported below).

import { build, buildSync } from 'esbuild';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import './bundle-tree-ring.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The task Stop hooks (skill-workflow task-stop|task-codex-stop), registered by install-stop. CommonJS
// (.cjs): an ES module entry would start Node's ES module loader, which alone costs the hook more time
// than its whole check.
buildSync({
  entryPoints: [path.join(root, 'dist/src/commands/skill-workflow/hook-main.js')],
  outfile: path.join(root, 'dist/hook/agentscm-stop-hook.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});

// agent-task collect pays for every module it loads on every run: its body (collect-flow.js) and
// everything it imports, zod included, become one module next to it. Kept outside: errors.js (the CLI
// runner maps errors to exit codes by their class, so there must be one AgentscmError), the snapshot
// stager (its worker thread is a file beside it), the ink progress view (a dynamic import, so ink and
// react load only on a terminal: esbuild would hoist the view's package imports to the bundle's top),
// and the packages that are native or lazily loaded. Those imports are rewritten relative to the
// bundle's directory.
const flowDir = path.join(root, 'dist/src/commands/agent-task');
const keepOutside = new Set(
  ['core/errors.js', 'collectors/snapshot-stage.js', 'collectors/progress-view.js'].map((f) => path.join(root, 'dist/src', f)),
);
await build({
  entryPoints: [path.join(flowDir, 'collect-flow.js')],
  outfile: path.join(flowDir, 'collect-flow.bundle.js'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['better-sqlite3', 'dockerode', 'ink', 'react'],
  logLevel: 'warning',
  plugins: [
    {
      name: 'keep-outside',
      setup(b) {
        b.onResolve({ filter: /^\.\.?\// }, (args) => {
          const abs = path.resolve(args.resolveDir, args.path);
          if (!keepOutside.has(abs)) return undefined;
          return { path: './' + path.relative(flowDir, abs).split(path.sep).join('/'), external: true };
        });
      },
    },
  ],
});
