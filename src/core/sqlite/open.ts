// How the project loads better-sqlite3. Through `require` rather than an ES `import`: an import of a
// CommonJS package makes the ESM loader lex and translate each of its files (measured ≈ 13 ms of a
// cold start here). The one-file bundles (scripts/build-bundles.ts) swap this module for
// ./bundled.ts, which carries better-sqlite3's JavaScript inside the bundle.

import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

export type Database = BetterSqlite3.Database;
export type DatabaseOptions = BetterSqlite3.Options;
type DatabaseConstructor = typeof BetterSqlite3;

let ctor: DatabaseConstructor | undefined;

export function openDatabase(file: string, options: DatabaseOptions = {}): Database {
  ctor ??= createRequire(import.meta.url)('better-sqlite3') as DatabaseConstructor;
  return new ctor(file, options);
}
