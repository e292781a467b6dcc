// Workspace state: which snapshot a checked-out directory was last checkpointed at, and the stat cache
// of that checkpoint's files. One SQLite file in the data dir, one row per workspace. Checkpoint writes
// it (here); the Stop hook reads it through workspace-state.ts (read-only) and compares the files
// against the base snapshot itself.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type Database from 'better-sqlite3';
import { openDatabase } from '../sqlite/open.js';
import { localState } from '../errors.js';
import { checkStoreFile, lstatOrUndefined } from '../fs/safe.js';
import { decodeStatCache, type RecordedSnapshot, type StatCache } from './snapshot.js';
import { WORKSPACES_FILE, WORKSPACES_SCHEMA_VERSION, workspaceKey, type WorkspaceState } from './workspace-state.js';

export { readWorkspaceState, readWorkspaceStateWithCache, WORKSPACES_FILE, WORKSPACES_SCHEMA_VERSION, workspaceKey, type WorkspaceState } from './workspace-state.js';

const SCHEMA = `
CREATE TABLE workspaces (
  workspace_key TEXT PRIMARY KEY,
  workspace_path TEXT NOT NULL,
  repository TEXT NOT NULL,
  change_id TEXT NOT NULL,
  -- ready: base_revision describes the last completed checkpoint; pending_operation is set while one runs.
  status TEXT NOT NULL CHECK (status IN ('ready', 'pending')),
  base_revision TEXT,
  generation INTEGER NOT NULL,
  pending_operation TEXT,
  last_scan_revision TEXT,
  last_scan_at INTEGER,
  updated_at INTEGER NOT NULL
) STRICT;
`;

/**
 * Version 2: the stat cache of each workspace's last completed checkpoint (snapshot.ts,
 * encodeStatCache), written with its row in one transaction. revision is the snapshot it describes.
 */
const STAT_CACHES = `
CREATE TABLE stat_caches (
  workspace_key TEXT PRIMARY KEY,
  revision TEXT NOT NULL,
  scanned_at_ms INTEGER NOT NULL,
  entries BLOB NOT NULL
) STRICT;
`;

function file(dataDir: string): string {
  return path.join(dataDir, WORKSPACES_FILE);
}

/** Opens (creating on first use) the workspace state for writing: only `checkpoint` does this. */
export function openWorkspacesForWrite(dataDir: string): Database.Database {
  const f = file(dataDir);
  const fresh = !checkStoreFile(f, lstatOrUndefined(f), 'the workspace state');
  const db = openDatabase(f);
  if (fresh) fs.chmodSync(f, 0o600);
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  const v = db.pragma('user_version', { simple: true }) as number;
  if (v === 0 || v === 1) {
    db.transaction(() => {
      // Checked again inside the write lock: another checkpoint may have migrated it meanwhile.
      const now = db.pragma('user_version', { simple: true }) as number;
      if (now === 0) db.exec(SCHEMA);
      // Version 1 (no stat cache) gains the table; its rows stay as they are.
      if (now === 0 || now === 1) {
        db.exec(STAT_CACHES);
        db.pragma(`user_version = ${WORKSPACES_SCHEMA_VERSION}`);
      }
    }).immediate();
  } else if (v !== WORKSPACES_SCHEMA_VERSION) {
    db.close();
    throw localState(`workspace state schema is version ${v}, this program needs ${WORKSPACES_SCHEMA_VERSION}`, 'SCHEMA_NOT_CURRENT');
  }
  return db;
}

/** A checkpoint marked as running: its workspace row as it was before (if any) and as marked. */
export interface PendingCheckpoint {
  readonly key: string;
  readonly before: WorkspaceState | undefined;
  readonly begun: WorkspaceState;
}

/** Marks a checkpoint as running (write-ahead), so a crash mid-checkpoint is visible to the hook. */
export function beginCheckpoint(db: Database.Database, workspace: string, repository: string, changeId: string): PendingCheckpoint {
  const key = workspaceKey(workspace);
  const now = Date.now();
  return db.transaction(() => {
    const before = db.prepare('SELECT * FROM workspaces WHERE workspace_key = ?').get(key) as WorkspaceState | undefined;
    db.prepare(
      `INSERT INTO workspaces (workspace_key, workspace_path, repository, change_id, status, base_revision, generation, pending_operation, updated_at)
       VALUES (?, ?, ?, ?, 'pending', NULL, 0, 'checkpoint', ?)
       ON CONFLICT (workspace_key) DO UPDATE SET status = 'pending', pending_operation = 'checkpoint', repository = excluded.repository,
         change_id = excluded.change_id, updated_at = excluded.updated_at`,
    ).run(key, fs.realpathSync(workspace), repository, changeId, now);
    return { key, before, begun: db.prepare('SELECT * FROM workspaces WHERE workspace_key = ?').get(key) as WorkspaceState };
  }).immediate();
}

/**
 * Undoes beginCheckpoint for a checkpoint refused before it recorded anything (bad input in the
 * workspace): the row goes back to what it was, or away if the checkpoint made it. A row that something
 * else has written since is left as it is.
 */
export function abandonCheckpoint(db: Database.Database, pending: PendingCheckpoint): void {
  db.transaction(() => {
    const now = db.prepare('SELECT * FROM workspaces WHERE workspace_key = ?').get(pending.key) as WorkspaceState | undefined;
    if (!now || !sameRow(now, pending.begun)) return;
    const b = pending.before;
    if (!b) {
      db.prepare('DELETE FROM workspaces WHERE workspace_key = ?').run(pending.key);
      return;
    }
    db.prepare(
      `UPDATE workspaces SET workspace_path = ?, repository = ?, change_id = ?, status = ?, base_revision = ?, generation = ?,
         pending_operation = ?, last_scan_revision = ?, last_scan_at = ?, updated_at = ? WHERE workspace_key = ?`,
    ).run(b.workspace_path, b.repository, b.change_id, b.status, b.base_revision, b.generation, b.pending_operation, b.last_scan_revision, b.last_scan_at, b.updated_at, pending.key);
  }).immediate();
}

function sameRow(a: WorkspaceState, b: WorkspaceState): boolean {
  const keys = Object.keys(a) as (keyof WorkspaceState)[];
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

/**
 * The stat cache of the workspace's last completed checkpoint, when it describes the row's base (a
 * cache that does not decode is not used: the checkpoint then reads every file).
 */
export function readStatCache(db: Database.Database, workspace: string): StatCache | undefined {
  const key = workspaceKey(workspace);
  const row = db
    .prepare('SELECT c.revision, c.scanned_at_ms, c.entries FROM stat_caches c JOIN workspaces w USING (workspace_key) WHERE c.workspace_key = ? AND c.revision = w.base_revision')
    .get(key) as { revision: string; scanned_at_ms: number; entries: Buffer } | undefined;
  if (!row) return undefined;
  try {
    return decodeStatCache(row.revision, row.scanned_at_ms, row.entries);
  } catch {
    return undefined;
  }
}

export function completeCheckpoint(db: Database.Database, workspace: string, snapshot: RecordedSnapshot): WorkspaceState {
  const key = workspaceKey(workspace);
  const now = Date.now();
  const { revision, statCache } = snapshot;
  return db.transaction(() => {
    db.prepare(
      `UPDATE workspaces SET status = 'ready', pending_operation = NULL, base_revision = ?, generation = generation + 1,
         last_scan_revision = ?, last_scan_at = ?, updated_at = ? WHERE workspace_key = ?`,
    ).run(revision, revision, now, now, key);
    db.prepare(
      `INSERT INTO stat_caches (workspace_key, revision, scanned_at_ms, entries) VALUES (?, ?, ?, ?)
       ON CONFLICT (workspace_key) DO UPDATE SET revision = excluded.revision, scanned_at_ms = excluded.scanned_at_ms, entries = excluded.entries`,
    ).run(key, revision, statCache.scannedAtMs, statCache.entries);
    return db.prepare('SELECT * FROM workspaces WHERE workspace_key = ?').get(key) as WorkspaceState;
  }).immediate();
}
