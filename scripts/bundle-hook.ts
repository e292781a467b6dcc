// Bundles after tsc, for the commands whose start-up time matters: hosts start a process per hook event
// and each extra module costs start-up time. The task Stop hooks are built by ./bundle-stop-hook.ts
// (CommonJS body, loader and code cache), tree-ring's bundles by ./bundle-tree-ring.ts, agent-task
// collect's body below.

import { build } from 'esbuild';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import './bundle-tree-ring.js';
import './bundle-stop-hook.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// The launchers (CommonJS) answer a bare --version from this copy of src/version.ts: an import() of the
// ES module would start the ES module loader, about a quarter of a bare node start.
await build({
  entryPoints: [path.join(root, 'dist/src/version.js')],
  outfile: path.join(root, 'dist/hook/version.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
});

// agent-task collect's early engine reads, which the launcher (CommonJS) starts before anything else.
await build({
  entryPoints: [path.join(root, 'dist/src/collectors/collect-early.js')],
  outfile: path.join(root, 'dist/hook/collect-early.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
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
