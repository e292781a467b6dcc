// The one-file bundles' variant of ./open.ts (swapped in by scripts/build-bundles.ts, never run
// unbundled). better-sqlite3's JavaScript is bundled: resolving and compiling its fourteen small files
// cost more of a cold start than opening and querying the database. Only its native addon is loaded
// from the installed package, and only when that package is the version the bundle was built with;
// otherwise the installed package is used whole.

import BundledDatabase from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Database, DatabaseOptions } from './open.js';

/** better-sqlite3's version at bundle time (an esbuild `define`). */
declare const AGENTSCM_BUNDLED_BETTER_SQLITE3_VERSION: string;

const PACKAGE = 'better-sqlite3';
let addon: object | null | undefined;

/**
 * The installed package's directory as require() would find it from this bundle: node_modules in this
 * directory or an ancestor. Walked by hand because require.resolve brings the module resolver and its
 * package.json reader into a cold process for this one path; a package found elsewhere (NODE_PATH,
 * global folders) is not missed, only used whole (see openDatabase).
 */
function packageDir(): string | undefined {
  for (let dir = __dirname; ; ) {
    const candidate = path.join(dir, 'node_modules', PACKAGE);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * The installed addon, loaded with process.dlopen (not require, which would bring the module loader
 * too), when the installed package matches the bundled JavaScript; else null.
 */
function matchingAddon(): object | null {
  if (addon !== undefined) return addon;
  addon = null;
  try {
    const dir = packageDir();
    if (dir === undefined) return null;
    const version = (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: unknown }).version;
    const file = path.join(dir, 'build', 'Release', 'better_sqlite3.node');
    if (version === AGENTSCM_BUNDLED_BETTER_SQLITE3_VERSION && fs.existsSync(file)) {
      const m = { exports: {} };
      process.dlopen(m, file);
      addon = m.exports;
    }
  } catch {
    addon = null;
  }
  return addon;
}

export function openDatabase(file: string, options: DatabaseOptions = {}): Database {
  const nativeBinding = matchingAddon();
  // better-sqlite3 takes the loaded addon object as well as a path; its type declarations name only the path.
  if (nativeBinding !== null) return new BundledDatabase(file, { ...options, nativeBinding: nativeBinding as unknown as string });
  // A variable specifier: esbuild leaves this require to run time instead of bundling it again.
  const Installed = require(PACKAGE) as typeof BundledDatabase;
  return new Installed(file, options);
}
