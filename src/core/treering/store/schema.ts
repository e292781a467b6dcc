// The Tree Ring store file: `<root>/memory.sqlite`, SQLite schema version 3 as the upstream CLI
// (0.13–0.15) writes it. Writing connections register `tree_ring_writer_protocol()` (returns 3); the
// triggers on `memories` abort any write from a connection without it, which fences older binaries and
// hand edits. Read-only opens never create a file and never leave sidecar files behind.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { openDatabase, type Database } from '../../sqlite/open.js';
import { AgentscmError, localState, notFound } from '../../errors.js';
import { eventFromObject, eventToJson, normalizeLegacyPrivateScopeIdentity, nowIso, reviewToJson, validateEvent } from '../model.js';

export type Db = Database;

export const STORE_FILE = 'memory.sqlite';
export const SQLITE_SCHEMA_VERSION = 3;
export const WRITER_PROTOCOL_VERSION = 3;
export const WRITER_PROTOCOL_FUNCTION = 'tree_ring_writer_protocol';
const BUSY_TIMEOUT_MS = 30_000;
const WRITE_RETRY_ATTEMPTS = 8;
const WRITE_RETRY_INITIAL_DELAY_MS = 5;
const WRITE_RETRY_MAX_DELAY_MS = 100;

export function storePath(root: string): string {
  return path.join(root, STORE_FILE);
}

function registerWriterProtocol(db: Db): void {
  db.function(WRITER_PROTOCOL_FUNCTION, { deterministic: true }, () => WRITER_PROTOCOL_VERSION);
}

export function userVersion(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}

function ensureSupportedSchemaVersion(db: Db): number {
  const v = userVersion(db);
  if (v > SQLITE_SCHEMA_VERSION) {
    throw new AgentscmError(
      'LOCAL_STATE',
      'STORE_TOO_NEW',
      `unsupported SQLite schema version ${v}; this build supports up to version ${SQLITE_SCHEMA_VERSION}`,
    );
  }
  return v;
}

function sqliteCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : undefined;
}

export function isLockError(e: unknown): boolean {
  const code = sqliteCode(e) ?? '';
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));

/**
 * Runs a write with up to eight attempts when SQLite reports the database busy or locked, backing off
 * 5 ms doubling to at most 100 ms (beyond the 30 s busy timeout, which covers most waits).
 */
export function retryLocked<T>(op: () => T): T {
  let delay = WRITE_RETRY_INITIAL_DELAY_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return op();
    } catch (e) {
      if (!isLockError(e) || attempt + 1 >= WRITE_RETRY_ATTEMPTS) {
        if (isLockError(e)) throw localState('the Tree Ring store stayed locked; retry later', 'STORE_LOCKED');
        throw e;
      }
      Atomics.wait(sleepCell, 0, 0, delay);
      delay = Math.min(delay * 2, WRITE_RETRY_MAX_DELAY_MS);
    }
  }
}

/** One BEGIN IMMEDIATE transaction, retried as a whole on lock errors. */
export function writeTransaction<T>(db: Db, fn: () => T): T {
  const tx = db.transaction(fn);
  return retryLocked(() => tx.immediate());
}

function ensureRootDir(root: string): void {
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(root);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw localState(`cannot inspect ${root}`, 'FS_ERROR');
  }
  if (st === undefined) {
    fs.mkdirSync(root, { recursive: true, mode: 0o700 });
    return;
  }
  if (st.isSymbolicLink()) throw localState(`memory root ${root} is a symlink; refusing it`, 'SYMLINK');
  if (!st.isDirectory()) throw localState(`memory root ${root} is not a directory`, 'NOT_A_DIRECTORY');
}

/** Opens (creating if needed) the store for writing and brings it to schema version 3. */
export function openWritable(root: string): Db {
  ensureRootDir(root);
  const file = storePath(root);
  const existed = fs.existsSync(file);
  let db: Db;
  try {
    db = openDatabase(file, { timeout: BUSY_TIMEOUT_MS });
  } catch (e) {
    throw localState(`cannot open Tree Ring store ${file}: ${(e as Error).message}`, 'STORE_OPEN');
  }
  try {
    if (!existed) fs.chmodSync(file, 0o600);
    registerWriterProtocol(db);
    ensureSupportedSchemaVersion(db);
    retryLocked(() => {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    });
    migrate(db);
    ensureOwnIndexes(db);
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

/**
 * The ring order of startup briefs (scars, heartwood, the rest), written exactly as the session query
 * writes it so that SQLite can use the index below.
 */
export const BRIEF_RING_ORDER = "CASE ring WHEN 'scar' THEN 0 WHEN 'heartwood' THEN 1 ELSE 2 END";

/**
 * Indexes of our own, beside upstream's schema (which they do not change: upstream binaries read and
 * write such a store as before, and SQLite keeps the index current on their writes too). Named
 * `agentscm_*` so that no upstream name can collide. The session-brief index covers every column the
 * startup brief filters and sorts on, in its sort order: the brief then reads its few candidates from
 * the index instead of scanning every visible row of the wide `memories` table. Read-only opens never
 * add it; a store that lacks it is still recalled correctly, only slower.
 */
const OWN_INDEXES: ReadonlyArray<readonly [name: string, ddl: string]> = [
  [
    'agentscm_memories_session_brief',
    `CREATE INDEX IF NOT EXISTS agentscm_memories_session_brief ON memories(project, sensitivity, (${BRIEF_RING_ORDER}),
       salience DESC, confidence DESC, created_at DESC, id, superseded_by, expires_at, scope, agent_profile, workflow_id, session_id)`,
  ],
];

function ensureOwnIndexes(db: Db): void {
  const present = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name GLOB 'agentscm_*'").all() as Array<{ name: string }>).map((r) => r.name));
  const missing = OWN_INDEXES.filter(([name]) => !present.has(name));
  if (missing.length > 0) writeTransaction(db, () => missing.forEach(([, ddl]) => db.exec(ddl)));
}

/**
 * Opens an existing store for reading only. A missing store is NOT_FOUND (nothing is created). With no
 * `-wal` beside the file a plain read-only handle would leave fresh `-wal`/`-shm` files behind, so the
 * file is then opened read-write with `query_only`: SQLite removes the sidecars when it closes.
 */
export function openReadOnly(root: string): Db {
  const file = storePath(root);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch {
    throw notFound(`no Tree Ring store at ${file} (run tree-ring init)`, 'NO_STORE');
  }
  if (!st.isFile()) throw localState(`${file} is not a regular file`, 'NOT_A_FILE');
  const walPresent = fs.existsSync(`${file}-wal`);
  let db: Db;
  try {
    db = openDatabase(file, { readonly: walPresent, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  } catch (e) {
    throw localState(`cannot open Tree Ring store ${file}: ${(e as Error).message}`, 'STORE_OPEN');
  }
  try {
    db.pragma('query_only = ON');
    registerWriterProtocol(db);
    ensureSupportedSchemaVersion(db);
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

/**
 * Opens a store for a reading command. A store at schema 3 is opened read-only; an older one (written
 * by an upstream release before 0.13) is first migrated in place, as upstream's own readers do, since
 * the version-3 columns and tables are what recall filters on. A missing store is never created.
 */
export function openForReading(root: string): Db {
  const db = openReadOnly(root);
  if (userVersion(db) >= SQLITE_SCHEMA_VERSION) return db;
  db.close();
  return openWritable(root);
}

export function memoryColumnExists(db: Db, column: string): boolean {
  return (db.prepare('PRAGMA table_info(memories)').all() as Array<{ name: string }>).some((c) => c.name === column);
}

export function tableExists(db: Db, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

const CORE_DDL = `
CREATE TABLE IF NOT EXISTS memories (
  id TEXT PRIMARY KEY,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  project TEXT,
  agent_profile TEXT,
  workflow_id TEXT,
  session_id TEXT,
  operation_id TEXT,
  scope TEXT NOT NULL,
  ring TEXT NOT NULL,
  event_type TEXT NOT NULL,
  summary TEXT NOT NULL,
  details TEXT NOT NULL,
  source_json TEXT NOT NULL,
  tags_json TEXT NOT NULL,
  salience REAL NOT NULL,
  confidence REAL NOT NULL,
  sensitivity TEXT NOT NULL,
  retention TEXT NOT NULL,
  expires_at TEXT,
  supersedes_json TEXT NOT NULL,
  superseded_by TEXT,
  links_json TEXT NOT NULL,
  review_json TEXT NOT NULL,
  raw_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS operation_claims (
  namespace_hash BLOB PRIMARY KEY NOT NULL
    CHECK(length(namespace_hash) = 32),
  memory_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS redaction_tombstones (
  memory_id TEXT PRIMARY KEY NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(
  id UNINDEXED,
  summary,
  details,
  tags,
  source_ref
);
CREATE TABLE IF NOT EXISTS consolidations (
  id TEXT PRIMARY KEY,
  created_at TEXT NOT NULL,
  period_type TEXT NOT NULL,
  period_key TEXT NOT NULL,
  source_memory_ids_json TEXT NOT NULL,
  output_memory_ids_json TEXT NOT NULL,
  status TEXT NOT NULL,
  notes TEXT NOT NULL
);
`;

const INDEX_DDL = `
CREATE INDEX IF NOT EXISTS idx_memories_project
  ON memories(project);
CREATE INDEX IF NOT EXISTS idx_memories_agent_profile
  ON memories(agent_profile);
CREATE INDEX IF NOT EXISTS idx_memories_workflow_id
  ON memories(workflow_id);
CREATE INDEX IF NOT EXISTS idx_memories_session_id
  ON memories(session_id);
CREATE UNIQUE INDEX IF NOT EXISTS idx_memories_operation_namespace
  ON memories(
    COALESCE(project, ''),
    COALESCE(workflow_id, ''),
    COALESCE(agent_profile, ''),
    operation_id
  )
  WHERE operation_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_operation_claims_memory_id
  ON operation_claims(memory_id);
INSERT OR IGNORE INTO redaction_tombstones (memory_id)
  SELECT id
  FROM memories
  WHERE summary = '[REDACTED]';
`;

const POLICY_DDL = `
CREATE TABLE IF NOT EXISTS store_policy (
  id INTEGER PRIMARY KEY NOT NULL CHECK(id = 1),
  mode TEXT NOT NULL CHECK(mode IN ('open', 'coordinated')),
  capability_hash BLOB
    CHECK(capability_hash IS NULL OR length(capability_hash) = 32),
  coordinator_label TEXT,
  enabled_at TEXT,
  updated_at TEXT NOT NULL,
  CHECK(
    (mode = 'open' AND capability_hash IS NULL)
    OR (mode = 'coordinated' AND capability_hash IS NOT NULL)
  )
);
CREATE TABLE IF NOT EXISTS authorization_audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  created_at TEXT NOT NULL,
  action TEXT NOT NULL,
  decision TEXT NOT NULL CHECK(decision IN ('allowed', 'denied')),
  reason TEXT NOT NULL,
  actor_profile TEXT,
  origin TEXT NOT NULL,
  target_memory_id TEXT
);
CREATE INDEX IF NOT EXISTS idx_authorization_audit_created_at
  ON authorization_audit(created_at DESC, id DESC);
`;

/** Writer-protocol fence: a connection without the function (or with another version) cannot write. */
const WRITER_TRIGGERS_DDL = ['INSERT', 'UPDATE', 'DELETE']
  .map(
    (op) => `
CREATE TRIGGER IF NOT EXISTS memories_writer_protocol_${op.toLowerCase()}
BEFORE ${op} ON memories
WHEN ${WRITER_PROTOCOL_FUNCTION}() IS NOT ${WRITER_PROTOCOL_VERSION}
BEGIN
  SELECT RAISE(ABORT, 'tree-ring writer protocol ${WRITER_PROTOCOL_VERSION} required');
END;`,
  )
  .join('\n');

/** Brings a store at user_version < 3 to version 3 in one immediate transaction; no-op at 3. */
export function migrate(db: Db): void {
  if (userVersion(db) >= SQLITE_SCHEMA_VERSION) return;
  writeTransaction(db, () => {
    if (userVersion(db) >= SQLITE_SCHEMA_VERSION) return;
    db.exec(CORE_DDL);
    for (const column of ['workflow_id', 'session_id', 'operation_id']) {
      if (!memoryColumnExists(db, column)) db.exec(`ALTER TABLE memories ADD COLUMN ${column} TEXT`);
    }
    db.exec(WRITER_TRIGGERS_DDL);
    normalizeLegacyPrivateScopeRows(db);
    db.exec(INDEX_DDL);
    db.exec(POLICY_DDL);
    db.prepare(
      `INSERT OR IGNORE INTO store_policy (id, mode, capability_hash, coordinator_label, enabled_at, updated_at)
       VALUES (1, 'open', NULL, NULL, NULL, ?)`,
    ).run(nowIso());
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
  });
}

function normalizeLegacyPrivateScopeRows(db: Db): void {
  const rows = db.prepare("SELECT raw_json FROM memories WHERE scope IN ('agent', 'workflow', 'session')").all() as Array<{ raw_json: string }>;
  const update = db.prepare('UPDATE memories SET agent_profile = ?, workflow_id = ?, session_id = ?, review_json = ?, raw_json = ? WHERE id = ?');
  for (const row of rows) {
    const e = eventFromObject(JSON.parse(row.raw_json) as unknown, 'stored memory');
    if (!normalizeLegacyPrivateScopeIdentity(e)) continue;
    validateEvent(e);
    update.run(e.agent_profile, e.workflow_id, e.session_id, reviewToJson(e.review), eventToJson(e), e.id);
  }
}
