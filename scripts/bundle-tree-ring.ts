// Bundles tree-ring's hot entries into one CommonJS file each, under dist/hook/:
//   tree-ring-hook.cjs    the lifecycle hook (src/commands/tree-ring/hook-main.ts), which the project-local
//                         launcher .tree-ring/bin/tree-ring runs for `--root .tree-ring integrations hook …`;
//   tree-ring-recall.cjs  `tree-ring recall` (src/commands/tree-ring/recall-main.ts), which bin/tree-ring.js
//                         runs for a plain recall invocation.
// Hosts and agents start a process for each, and a cold start pays per module: CommonJS skips the ES
// module loader, and better-sqlite3's JavaScript is bundled too (src/core/sqlite/bundled.ts), so the only
// files loaded besides the bundle are its native addon and package.json. Nothing else from node_modules
// may enter a bundle; the build fails if something does.

import { build, type Plugin } from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
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
await bundle('dist/src/commands/tree-ring/recall-main.js', 'dist/hook/tree-ring-recall.cjs');
// Launchers written by an earlier `tree-ring init` name the former ES module bundle: keep that path
// working and hand over to the CommonJS bundle.
fs.writeFileSync(
  path.join(root, 'dist/hook/tree-ring-hook.js'),
  "// Former path of the lifecycle hook bundle, named by launchers from earlier releases.\nimport { createRequire } from 'node:module';\ncreateRequire(import.meta.url)('./tree-ring-hook.cjs');\n",
);
