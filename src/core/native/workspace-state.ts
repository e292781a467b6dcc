// The read side of the workspace state (workspaces.sqlite): what the Stop hooks need, without the
// native SQLite binding. Reads go through the pure read-only reader: no migration, no journal-mode
// change, no file created (not even SQLite's -wal/-shm sidecars). Writers live in workspace.ts.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { DOMAINS, domainDigest } from '../crypto/digest.js';
import { localState } from '../errors.js';
import { checkStoreFile, lstatOrUndefined } from '../fs/safe.js';
import { readSqlite } from '../sqlite-read/index.js';

export const WORKSPACES_FILE = 'workspaces.sqlite';
export const WORKSPACES_SCHEMA_VERSION = 1;

/** The columns of the workspaces table, in the order workspace.ts declares them. */
const COLUMNS = [
  'workspace_key', 'workspace_path', 'repository', 'change_id', 'status', 'base_revision', 'generation',
  'pending_operation', 'last_scan_revision', 'last_scan_at', 'updated_at',
] as const;

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

/** The row key of a workspace: a digest of its real path (so two spellings of one directory agree). */
export function workspaceKey(workspace: string): string {
  return domainDigest(DOMAINS.workspace, Buffer.from(fs.realpathSync(workspace), 'utf8'));
}

/**
 * Reads one workspace's state read-only. A missing file or an old schema is LOCAL_STATE (the hook
 * blocks on it); nothing is created or migrated.
 */
export function readWorkspaceState(dataDir: string, workspace: string): WorkspaceState | undefined {
  const f = path.join(dataDir, WORKSPACES_FILE);
  if (!checkStoreFile(f, lstatOrUndefined(f), 'the workspace state')) throw localState('the data dir has no workspace state (run `agentscm checkpoint` first)', 'NO_WORKSPACE_STATE');
  const key = workspaceKey(workspace);
  const row = readSqlite(f, (db) => {
    if (db.userVersion !== WORKSPACES_SCHEMA_VERSION) throw localState('workspace state schema is not current', 'SCHEMA_NOT_CURRENT');
    return db.get('workspaces', COLUMNS, ['workspace_key'], [key]);
  });
  if (!row) return undefined;
  const str = (k: string) => typeof row[k] === 'string';
  const strOrNull = (k: string) => row[k] === null || typeof row[k] === 'string';
  const intOrNull = (k: string) => row[k] === null || (typeof row[k] === 'number' && Number.isSafeInteger(row[k]));
  const ok =
    str('workspace_key') && str('workspace_path') && str('repository') && str('change_id') && (row.status === 'ready' || row.status === 'pending') &&
    strOrNull('base_revision') && typeof row.generation === 'number' && intOrNull('generation') && strOrNull('pending_operation') &&
    strOrNull('last_scan_revision') && intOrNull('last_scan_at') && typeof row.updated_at === 'number' && intOrNull('updated_at');
  if (!ok) throw localState('workspace state row of unexpected type', 'STORE_CORRUPT');
  return row as unknown as WorkspaceState;
}
