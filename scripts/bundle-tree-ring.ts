// Bundles tree-ring's hot entries into one CommonJS file each, under dist/hook/:
//   tree-ring-hook.cjs    the lifecycle hook (src/commands/tree-ring/hook-main.ts), which the project-local
//                         launcher .tree-ring/bin/tree-ring runs for `--root .tree-ring integrations hook …`;
//   tree-ring-recall.cjs  `tree-ring recall`'s entry, which bin/tree-ring.js runs for a plain recall
//                         invocation: a small loader (recall-loader-main.ts) that runs
//   tree-ring-recall.body.cjs  (recall-main.ts and everything it imports) with
//   tree-ring-recall.body.cjs.cache  V8's code cache of the body after one real recall.
// Hosts and agents start a process for each, and a cold start pays per module: CommonJS skips the ES
// module loader, and better-sqlite3's JavaScript is bundled too (src/core/sqlite/bundled.ts), so the only
// files loaded besides the bundle are its native addon and package.json. Nothing else from node_modules
// may enter a bundle; the build fails if something does.

import { build, type Plugin } from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import * as os from 'node:os';
import { fileURLToPath } from 'node:url';
import { cacheFileOf } from '../src/cli/code-cache.js';
import { useBuiltinsDirectly } from './bundle-builtins.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sqliteDir = path.join(root, 'dist/src/core/sqlite');
const betterSqlite3 = path.join(root, 'node_modules/better-sqlite3');
const version = (JSON.parse(fs.readFileSync(path.join(betterSqlite3, 'package.json'), 'utf8')) as { version: string }).version;

/** Swaps the require-based loader (open.js) for the bundled variant (bundled.js). */
const bundledSqlite: Plugin = {
  name: 'bundled-sqlite',
  setup(build) {
    build.onResolve({ filter: /\/sqlite\/open\.js$/ }, (args) => {
      const resolved = path.resolve(args.resolveDir, args.path);
      return resolved === path.join(sqliteDir, 'open.js') ? { path: path.join(sqliteDir, 'bundled.js') } : undefined;
    });
  },
};

async function bundle(entry: string, outfile: string): Promise<void> {
  const result = await build({
    entryPoints: [path.join(root, entry)],
    outfile: path.join(root, outfile),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    // better-sqlite3 loads `bindings` only when it is not given its addon; bundled.ts always gives it
    // one unless the installed package differs, and then it uses that package whole.
    external: ['bindings'],
    define: { AGENTSCM_BUNDLED_BETTER_SQLITE3_VERSION: JSON.stringify(version) },
    plugins: [bundledSqlite],
    metafile: true,
    logLevel: 'warning',
  });
  const foreign = Object.keys(result.metafile.inputs).filter((f) => f.includes('node_modules/') && !f.includes('node_modules/better-sqlite3/lib/'));
  if (foreign.length > 0) throw new Error(`${outfile} would bundle packages other than better-sqlite3: ${foreign.join(', ')}`);
  useBuiltinsDirectly(path.join(root, outfile));
}

// The asynchronous API: plugins cannot run in esbuild's synchronous one.
await bundle('dist/src/commands/tree-ring/hook-main.js', 'dist/hook/tree-ring-hook.cjs');
await bundle('dist/src/commands/tree-ring/recall-main.js', 'dist/hook/tree-ring-recall.body.cjs');
await bundle('dist/src/commands/tree-ring/recall-loader-main.js', 'dist/hook/tree-ring-recall.cjs');
warmRecall();
// Launchers written by an earlier `tree-ring init` name the former ES module bundle: keep that path
// working and hand over to the CommonJS bundle.
fs.writeFileSync(
  path.join(root, 'dist/hook/tree-ring-hook.js'),
  "// Former path of the lifecycle hook bundle, named by launchers from earlier releases.\nimport { createRequire } from 'node:module';\ncreateRequire(import.meta.url)('./tree-ring-hook.cjs');\n",
);

/**
 * V8's code cache of the recall body after one real recall over a throwaway store (src/cli/code-cache.ts):
 * it spares every later recall most of its compiling. When this fails the build goes on without it.
 */
function warmRecall(): void {
  const body = path.join(root, 'dist/hook/tree-ring-recall.body.cjs');
  const cache = cacheFileOf(body);
  fs.rmSync(cache, { force: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tree-ring-recall-cache-'));
  const env = { PATH: process.env.PATH };
  const cli = (args: string[]) => {
    const r = spawnSync(process.execPath, [path.join(root, 'bin/tree-ring.js'), ...args], { cwd: tmp, env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`tree-ring ${args[0]} failed: ${r.stderr}`);
    return r.stdout;
  };
  try {
    cli(['init']);
    cli(['remember', 'Run database migrations before the integration tests.', '--project', 'cache', '--event-type', 'lesson', '--scope', 'project']);
    cli(['remember', 'Prefer small reversible migrations.', '--project', 'cache', '--event-type', 'decision', '--scope', 'project']);
    const r = spawnSync(process.execPath, [path.join(root, 'dist/scripts/warm-code-cache.js'), body, cache, 'recall', 'migrations', '--project', 'cache', '--json'], { cwd: tmp, env, encoding: 'utf8' });
    if (r.status !== 0 || !r.stdout.startsWith('[{')) throw new Error(`warm-up recall failed: ${r.stderr}`);
  } catch (e) {
    fs.rmSync(cache, { force: true });
    process.stderr.write(`bundle-tree-ring: no code cache for recall (${(e as Error).message}); recall works without it\n`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
