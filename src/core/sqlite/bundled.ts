// The one-file bundles' variant of ./open.ts (swapped in by scripts/bundle-tree-ring.ts, never run
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
let addon: string | null | undefined;

/** The installed addon when the installed package matches the bundled JavaScript, else null. */
function matchingAddon(): string | null {
  if (addon !== undefined) return addon;
  addon = null;
  try {
    const manifest = require.resolve(`${PACKAGE}/package.json`);
    const version = (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version?: unknown }).version;
    const file = path.join(path.dirname(manifest), 'build', 'Release', 'better_sqlite3.node');
    if (version === AGENTSCM_BUNDLED_BETTER_SQLITE3_VERSION && fs.existsSync(file)) addon = file;
  } catch {
    addon = null;
  }
  return addon;
}

export function openDatabase(file: string, options: DatabaseOptions): Database {
  const nativeBinding = matchingAddon();
  if (nativeBinding !== null) return new BundledDatabase(file, { ...options, nativeBinding });
  // A variable specifier: esbuild leaves this require to run time instead of bundling it again.
  const Installed = require(PACKAGE) as typeof BundledDatabase;
  return new Installed(file, options);
}
