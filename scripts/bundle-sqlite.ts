// better-sqlite3 inside a one-file bundle: its JavaScript is bundled, its native addon is loaded from
// the installed package (src/core/sqlite/bundled.ts, which this plugin swaps in for ./open.ts).

import type { Plugin } from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The esbuild options that give a bundle better-sqlite3 this way. */
export function bundledSqliteOptions(root: string): { plugins: Plugin[]; define: Record<string, string>; external: string[] } {
  const sqliteDir = path.join(root, 'dist/src/core/sqlite');
  const version = (JSON.parse(fs.readFileSync(path.join(root, 'node_modules/better-sqlite3/package.json'), 'utf8')) as { version: string }).version;
  /** Swaps the require-based loader (open.js) for the bundled variant (bundled.js). */
  const plugin: Plugin = {
    name: 'bundled-sqlite',
    setup(build) {
      build.onResolve({ filter: /(^|\/)open\.js$/ }, (args) => {
        const resolved = path.resolve(args.resolveDir, args.path);
        return resolved === path.join(sqliteDir, 'open.js') ? { path: path.join(sqliteDir, 'bundled.js') } : undefined;
      });
    },
  };
  return {
    plugins: [plugin],
    define: { AGENTSCM_BUNDLED_BETTER_SQLITE3_VERSION: JSON.stringify(version) },
    // better-sqlite3 loads `bindings` only when it is not given its addon; bundled.ts always gives it
    // one unless the installed package differs, and then it uses that package whole.
    external: ['bindings'],
  };
}

/**
 * Refuses a bundle that took in any package but better-sqlite3's JavaScript, commander (the argv parser,
 * src/cli/argv.ts) and the packages named in `also`.
 */
export function checkOnlySqliteBundled(outfile: string, inputs: Record<string, unknown>, also: readonly string[] = []): void {
  const allowed = ['better-sqlite3/lib/', 'commander/', ...also].map((p) => `node_modules/${p}`);
  const foreign = Object.keys(inputs).filter((f) => f.includes('node_modules/') && !allowed.some((a) => f.includes(a)));
  if (foreign.length > 0) throw new Error(`${outfile} would bundle packages other than ${allowed.join(', ')}: ${foreign.join(', ')}`);
}
