// Bundles after tsc, for the commands whose start-up time matters: hosts start a process per hook event
// and each extra module costs start-up time. The task Stop hooks are built by ./bundle-stop-hook.ts
// (CommonJS body, loader and code cache), tree-ring's bundles by ./bundle-tree-ring.ts, agent-task
// collect's body below.

import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import './bundle-tree-ring.js';
import './bundle-stop-hook.js';
import { cacheFileOf } from '../src/cli/code-cache.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A CommonJS copy of a compiled module, for the launchers (CommonJS) to require. */
const cjsCopy = (entry: string, out: string) =>
  build({ entryPoints: [path.join(root, entry)], outfile: path.join(root, out), bundle: true, format: 'cjs', platform: 'node', target: 'node20', logLevel: 'warning' });

// The launchers answer a bare --version from this copy of src/version.ts: an import() of the ES module
// would start the ES module loader, about a quarter of a bare node start.
await cjsCopy('dist/src/version.js', 'dist/hook/version.cjs');

// The snapshot staging worker (stager.ts) as one CommonJS file: a worker thread boots without Node's
// start-up snapshot, and an ES module entry would also make it load the ES module loader, tens of
// milliseconds of CPU that collect's first half second shares with the engine answering its facts.
await cjsCopy('dist/src/collectors/stage-worker.js', 'dist/hook/stage-worker.cjs');

// agent-task collect pays for every module it loads on every run: its body (collect-flow.js) and
// everything it imports, zod included, become one CommonJS file, dist/hook/agentscm-collect.body.cjs,
// which collect.ts runs with V8's code cache (src/cli/code-cache.ts; made below by loading the body once).
// Kept outside and handed in by collect.ts under fixed ids (SHARED_WITH_BODY): errors.js (the CLI runner
// maps errors to exit codes by their class, so there must be one AgentscmError) and the progress reporter
// (its ink view is a dynamic import, so ink and react load only on a terminal). The staging worker is
// started by collect.ts (stager.ts finds the worker's file beside it). Packages that are native or lazily
// loaded stay packages.
const shared: Record<string, string> = {
  [path.join(root, 'dist/src/core/errors.js')]: 'agentscm:errors',
  [path.join(root, 'dist/src/collectors/progress.js')]: 'agentscm:progress',
};
const collectBody = path.join(root, 'dist/hook/agentscm-collect.body.cjs');
await build({
  entryPoints: [path.join(root, 'dist/src/commands/agent-task/collect-flow.js')],
  outfile: collectBody,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external: ['better-sqlite3', 'dockerode', 'ink', 'react'],
  // Whitespace and comments out (about a quarter of a megabyte): every collect reads and compiles the
  // whole body. Names stay, for stack traces.
  minifyWhitespace: true,
  logLevel: 'warning',
  plugins: [
    {
      name: 'shared-with-collect',
      setup(b) {
        b.onResolve({ filter: /^\.\.?\// }, (args) => {
          const id = shared[path.resolve(args.resolveDir, args.path)];
          return id === undefined ? undefined : { path: id, external: true };
        });
      },
    },
  ],
});
if (/\bimport\(/.test(fs.readFileSync(collectBody, 'utf8').replace(/\/\/.*$/gm, ''))) throw new Error(`${collectBody}: a dynamic import() cannot run in a vm.Script body`);
const collectCache = cacheFileOf(collectBody);
fs.rmSync(collectCache, { force: true });
const warmed = spawnSync(process.execPath, [path.join(root, 'dist/scripts/warm-collect-cache.js'), collectCache], { env: { PATH: process.env.PATH }, encoding: 'utf8' });
if (warmed.status !== 0) {
  fs.rmSync(collectCache, { force: true });
  process.stderr.write(`bundle-hook: no code cache for agent-task collect (${warmed.stderr.trim()}); it works without it\n`);
}

// agent-task collect's one-file entry (src/commands/agent-task/collect-main.ts), which bin/agentscm.js
// runs for a plain collect instead of importing the ES module command table. Its modules' own URLs
// (import.meta.url: where collect.ts finds the body, stager.ts the worker) are their places under
// dist/src, computed from the bundle's directory at run time; collect-flow.js, which collect.ts imports
// only when the body bundle is missing, stays outside.
const entryOut = path.join(root, 'dist/hook/agentscm-collect-entry.cjs');
const entryResult = await build({
  entryPoints: [path.join(root, 'dist/src/commands/agent-task/collect-main.js')],
  outfile: entryOut,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external: ['better-sqlite3', 'dockerode', 'ink', 'react', 'zod'],
  banner: { js: 'const __agentscmModuleUrl = (rel) => require("node:url").pathToFileURL(require("node:path").join(__dirname, rel)).href;' },
  metafile: true,
  logLevel: 'warning',
  plugins: [
    {
      name: 'collect-entry',
      setup(b) {
        b.onResolve({ filter: /\/collect-flow\.js$/ }, () => ({ path: '../src/commands/agent-task/collect-flow.js', external: true }));
        b.onLoad({ filter: /\/dist\/src\/.*\.js$/ }, async (args) => {
          const text = await fs.promises.readFile(args.path, 'utf8');
          if (!text.includes('import.meta.url')) return undefined;
          const rel = path.relative(path.dirname(entryOut), args.path);
          return { contents: text.replaceAll('import.meta.url', `__agentscmModuleUrl(${JSON.stringify(rel)})`), loader: 'js' };
        });
      },
    },
  ],
});
// commander (the argv parser, src/cli/argv.ts) is the one package bundled in.
const entryForeign = Object.keys(entryResult.metafile.inputs).filter((f) => f.includes('node_modules/') && !f.includes('node_modules/commander/'));
if (entryForeign.length > 0) throw new Error(`${entryOut} would bundle packages other than commander: ${entryForeign.join(', ')}`);

