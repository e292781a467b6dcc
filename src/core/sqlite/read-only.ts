// Read-only access to a data-dir store for the Stop hooks (seed 000): better-sqlite3 opened `readonly`
// and `fileMustExist`, so nothing is created, migrated or switched to another journal mode (SQLite may
// create its own -wal/-shm sidecars to read a WAL database). All reads of one call run in one read
// transaction: one consistent committed snapshot.

import { localState } from '../errors.js';
import { openDatabase, type Database } from './open.js';

/** A store SQLite cannot open or read as a database (not one, damaged, locked past the busy time). */
export const unreadable = (why: string) => localState(`SQLite store unreadable: ${why}`, 'STORE_UNREADABLE');

/**
 * Runs read(db) inside one read transaction of the existing database file, then closes it. SQLite's
 * own failures become STORE_UNREADABLE; errors thrown by read are passed on as they are.
 */
export function readSqlite<T>(file: string, read: (db: Database) => T): T {
  let db: Database;
  try {
    db = openDatabase(file, { readonly: true, fileMustExist: true, timeout: 5000 });
  } catch (e) {
    throw unreadable((e as Error).message);
  }
  try {
    let out: T | undefined;
    let failure: unknown;
    try {
      db.exec('BEGIN');
    } catch (e) {
      throw unreadable((e as Error).message);
    }
    try {
      out = read(db);
    } catch (e) {
      failure = e;
    }
    try {
      db.exec('COMMIT');
    } catch {
      // A read transaction has nothing to commit; ending it cannot lose anything.
    }
    if (failure !== undefined) {
      const code = (failure as { code?: unknown }).code;
      if (typeof code === 'string' && code.startsWith('SQLITE_')) throw unreadable((failure as Error).message);
      throw failure;
    }
    return out as T;
  } finally {
    db.close();
  }
}
