// The read side of the workspace state (workspaces.sqlite): what the Stop hooks need. Reads open the
// file read-only (src/core/sqlite/read-only.ts): no migration, no journal-mode change, no store file
// created (SQLite's own -wal/-shm sidecars aside). Writers live in workspace.ts.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { DOMAINS, domainDigest } from '../crypto/digest.js';
import { localState } from '../errors.js';
import { checkStoreFile, lstatOrUndefined } from '../fs/safe.js';
import { readSqlite } from '../sqlite/read-only.js';

export const WORKSPACES_FILE = 'workspaces.sqlite';
/**
 * 2: the stat cache (table stat_caches). A version-1 file (no stat cache) is still read here, as a
 * workspace without one; the first checkpoint on it migrates it.
 */
export const WORKSPACES_SCHEMA_VERSION = 2;
const READABLE_VERSIONS: readonly number[] = [1, 2];

export interface WorkspaceState {
  readonly workspace_key: string;
  readonly workspace_path: string;
  readonly repository: string;
  readonly change_id: string;
  readonly status: 'ready' | 'pending';
  readonly base_revision: string | null;
  readonly generation: number;
  readonly pending_operation: string | null;
  readonly last_scan_revision: string | null;
  readonly last_scan_at: number | null;
  readonly updated_at: number;
}

/**
 * What the last checkpoint saw of each file (snapshot.ts, encodeStatCache): the snapshot it describes,
 * the time its scan began (for racily clean entries) and the encoded entries.
 */
export interface StoredStatCache {
  readonly revision: string;
  readonly scanned_at_ms: number;
  readonly entries: Buffer;
}

/** The row key of a workspace: a digest of its real path (so two spellings of one directory agree). */
export function workspaceKey(workspace: string): string {
  return domainDigest(DOMAINS.workspace, Buffer.from(fs.realpathSync(workspace), 'utf8'));
}

const COLUMNS =
  'workspace_key, workspace_path, repository, change_id, status, base_revision, generation, pending_operation, last_scan_revision, last_scan_at, updated_at';

/**
 * Reads one workspace's state read-only, with its stat cache when the file has one for that base. A
 * missing file or a schema this program cannot read is LOCAL_STATE (the hook blocks on it); nothing is
 * created or migrated.
 */
export function readWorkspaceStateWithCache(dataDir: string, workspace: string): { state: WorkspaceState; cache: StoredStatCache | undefined } | undefined {
  const f = path.join(dataDir, WORKSPACES_FILE);
  if (!checkStoreFile(f, lstatOrUndefined(f), 'the workspace state')) throw localState('the data dir has no workspace state (run `agentscm checkpoint` first)', 'NO_WORKSPACE_STATE');
  const key = workspaceKey(workspace);
  const read = readSqlite(f, (db) => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (!READABLE_VERSIONS.includes(version)) throw localState('workspace state schema is not current', 'SCHEMA_NOT_CURRENT');
    const row = db.prepare(`SELECT ${COLUMNS} FROM workspaces WHERE workspace_key = ?`).get(key) as Record<string, unknown> | undefined;
    const cache =
      row && version >= 2
        ? (db.prepare('SELECT revision, scanned_at_ms, entries FROM stat_caches WHERE workspace_key = ?').get(key) as Record<string, unknown> | undefined)
        : undefined;
    return { row, cache };
  });
  const row = read.row;
  if (!row) return undefined;
  const str = (k: string) => typeof row[k] === 'string';
  const strOrNull = (k: string) => row[k] === null || typeof row[k] === 'string';
  const intOrNull = (k: string) => row[k] === null || (typeof row[k] === 'number' && Number.isSafeInteger(row[k]));
  const ok =
    str('workspace_key') && str('workspace_path') && str('repository') && str('change_id') && (row.status === 'ready' || row.status === 'pending') &&
    strOrNull('base_revision') && typeof row.generation === 'number' && intOrNull('generation') && strOrNull('pending_operation') &&
    strOrNull('last_scan_revision') && intOrNull('last_scan_at') && typeof row.updated_at === 'number' && intOrNull('updated_at');
  if (!ok) throw localState('workspace state row of unexpected type', 'STORE_CORRUPT');
  const state = row as unknown as WorkspaceState;
  const c = read.cache;
  if (c && !(typeof c.revision === 'string' && typeof c.scanned_at_ms === 'number' && Number.isSafeInteger(c.scanned_at_ms) && Buffer.isBuffer(c.entries))) {
    throw localState('workspace stat cache of unexpected type', 'STORE_CORRUPT');
  }
  // A cache of another snapshot than the base (it cannot be: checkpoint writes both together) is not used.
  const cache = c && c.revision === state.base_revision ? (c as unknown as StoredStatCache) : undefined;
  return { state, cache };
}

/** readWorkspaceStateWithCache without the cache. */
export function readWorkspaceState(dataDir: string, workspace: string): WorkspaceState | undefined {
  return readWorkspaceStateWithCache(dataDir, workspace)?.state;
}
