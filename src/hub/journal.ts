// The journal: the Hub's durable record of retained tasks, attempts, idempotent requests, assertions
// and receipts, in DATA_DIR/journal.sqlite. Reads never create it: without a journal every task of a
// subject is pending. The first mutation creates it (openJournalForWrite).
//
// This module defines the tables and is the SQLite implementation of JournalStore (src/core/storage/
// stores.ts): every statement the Hub runs against the journal is here. Claims, leases, fences,
// idempotent mutations, results and recovery (src/hub/claims.ts) and the collector route decide what
// is written; this module only knows how.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type Database from 'better-sqlite3';
import { openDatabase } from '../core/sqlite/open.js';
import type { Task } from '../core/authority/plan.js';
import type { Subject } from '../core/authority/types.js';
import { localState } from '../core/errors.js';
import { checkStoreFile, lstatOrUndefined } from '../core/fs/safe.js';
import type {
  AssertionRow,
  AttemptChange,
  AttemptRow,
  CollectorAttemptRow,
  JournalStore,
  NewRequest,
  NewTransfer,
  RequestRow,
  TaskRow,
  TransferBinding,
  TransferRow,
  TransferWithView,
} from '../core/storage/stores.js';

export type { AttemptRow } from '../core/storage/stores.js';

export const JOURNAL_FILE = 'journal.sqlite';
export const JOURNAL_SCHEMA_VERSION = 4;

export const JOURNAL_SCHEMA = `
-- A task is retained (canonical binding bytes) when it is first claimed; reads re-derive it otherwise.
CREATE TABLE tasks (
  task_id TEXT PRIMARY KEY,
  task_digest TEXT NOT NULL,
  repository TEXT NOT NULL,
  profile TEXT NOT NULL,
  change_id TEXT NOT NULL,
  change_version INTEGER NOT NULL,
  policy_epoch INTEGER NOT NULL,
  step_id TEXT NOT NULL,
  canonical BLOB NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX tasks_by_change_step ON tasks (repository, change_id, profile, step_id);
-- One fresh execution of a task. fence increases per task; only the highest fence is current.
CREATE TABLE attempts (
  attempt_id TEXT PRIMARY KEY,
  task_id TEXT NOT NULL REFERENCES tasks(task_id),
  attempt_digest TEXT NOT NULL,
  claim_request_id TEXT NOT NULL,
  execution_operation_id TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  registration_id TEXT,
  registration_epoch INTEGER,
  -- 'agent' (claim) or 'collector' (collector_claim); the executor binding is in canonical.
  kind TEXT NOT NULL DEFAULT 'agent' CHECK (kind IN ('agent', 'collector')),
  executor_id TEXT,
  fence INTEGER NOT NULL,
  lease_ms INTEGER NOT NULL,
  lease_expires_at INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('leased', 'finished', 'cancelled', 'replaced')),
  outcome TEXT CHECK (outcome IS NULL OR outcome IN ('passed', 'failed', 'uncertain')),
  -- A stable failure code for qualification (e.g. collector_not_passed, result_failed).
  outcome_code TEXT,
  superseded_by_fence INTEGER,
  canonical BLOB NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (task_id, fence)
) STRICT;
CREATE INDEX attempts_by_task ON attempts (task_id, fence);
-- Every mutation's request id, scoped to the authenticated owner and agent, bound to its exact bytes.
CREATE TABLE idempotency (
  owner_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  request_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  request_digest TEXT NOT NULL,
  -- The attempt the committed request acted on (recovery finds it from the request id).
  task_id TEXT NOT NULL,
  attempt_id TEXT,
  response BLOB NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (owner_id, agent_id, request_id)
) STRICT;
-- Retained assertions and registered observations: always nonpassing material.
CREATE TABLE assertions (
  request_id TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  task_id TEXT NOT NULL REFERENCES tasks(task_id),
  attempt_id TEXT NOT NULL REFERENCES attempts(attempt_id),
  fence INTEGER NOT NULL,
  registration_id TEXT,
  trust_class TEXT NOT NULL,
  outcome TEXT NOT NULL,
  observation_digest TEXT,
  body BLOB NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (owner_id, agent_id, request_id)
) STRICT;
-- What a collector_claim bound besides the attempt row: the profile installation the descriptor is
-- derived from, and the originating grant (the bearer token's id).
CREATE TABLE collector_attempts (
  attempt_id TEXT PRIMARY KEY REFERENCES attempts(attempt_id),
  install_id TEXT NOT NULL,
  profile_digest TEXT NOT NULL,
  grant_generation TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
-- Imported collector transfers: the original signed bytes, exactly one per attempt, keyed by the
-- uploader's operation id (an exact retry answers from here; changed bytes under the id conflict).
CREATE TABLE transfers (
  transfer_digest TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  upload_request_id TEXT NOT NULL,
  bytes_digest TEXT NOT NULL,
  task_id TEXT NOT NULL REFERENCES tasks(task_id),
  attempt_id TEXT NOT NULL UNIQUE REFERENCES attempts(attempt_id),
  fence INTEGER NOT NULL,
  registration_id TEXT NOT NULL,
  collector_profile_install_id TEXT NOT NULL,
  collector_profile_digest TEXT NOT NULL,
  grant_generation TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('passed', 'failed')),
  length INTEGER NOT NULL,
  bytes BLOB NOT NULL,
  view BLOB NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (owner_id, agent_id, upload_request_id)
) STRICT;
-- Exact-subject receipts (v2 graph receipts from imported collector transfers).
CREATE TABLE receipts (
  receipt_digest TEXT PRIMARY KEY,
  repository TEXT NOT NULL,
  profile TEXT NOT NULL,
  change_id TEXT NOT NULL,
  change_version INTEGER NOT NULL,
  context_digest TEXT NOT NULL,
  policy_epoch INTEGER NOT NULL,
  requirement_digest TEXT NOT NULL,
  revision TEXT NOT NULL,
  body BLOB NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX receipts_by_subject ON receipts (repository, profile, change_id, change_version, policy_epoch);
`;

/**
 * Version 4: the forge outbox (src/hub/forge.ts). One row per commit status to publish, in the order
 * queued (seq); a row is queued until delivered, rejected (a 4xx: not retried) or abandoned (retries
 * exhausted). Rows survive a restart, so each status is sent at least once, in order per commit.
 */
export const JOURNAL_SCHEMA_V4 = `
CREATE TABLE forge_outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  repository TEXT NOT NULL,
  profile TEXT NOT NULL,
  change_id TEXT NOT NULL,
  change_version INTEGER NOT NULL,
  policy_epoch INTEGER NOT NULL,
  sha TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'success', 'failure')),
  description TEXT NOT NULL,
  receipt_digest TEXT,
  delivery TEXT NOT NULL CHECK (delivery IN ('queued', 'delivered', 'rejected', 'abandoned')),
  attempts INTEGER NOT NULL,
  next_at INTEGER NOT NULL,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX forge_outbox_by_change ON forge_outbox (repository, profile, change_id, seq);
CREATE INDEX forge_outbox_queued ON forge_outbox (delivery, seq);
`;

/** One forge_outbox row. */
export interface OutboxRow {
  readonly seq: number;
  readonly repository: string;
  readonly profile: string;
  readonly change_id: string;
  readonly change_version: number;
  readonly policy_epoch: number;
  readonly sha: string;
  readonly state: 'pending' | 'success' | 'failure';
  readonly description: string;
  readonly receipt_digest: string | null;
  readonly delivery: 'queued' | 'delivered' | 'rejected' | 'abandoned';
  readonly attempts: number;
  readonly next_at: number;
  readonly last_error: string | null;
  readonly created_at: number;
  readonly updated_at: number;
}

const ATTEMPT_COLUMNS =
  'attempt_id, task_id, attempt_digest, owner_id, agent_id, registration_id, registration_epoch, kind, executor_id, claim_request_id, execution_operation_id, fence, lease_ms, lease_expires_at, superseded_by_fence, canonical, state, outcome, outcome_code, created_at, updated_at';

/** One attempts row in ATTEMPT_COLUMNS order. */
type AttemptTuple = [string, string, string, string, string, string | null, number | null, AttemptRow['kind'], string | null, string, string, number, number, number, number | null, Buffer, AttemptRow['state'], AttemptRow['outcome'], string | null, number, number];

function attemptRow(r: AttemptTuple | undefined): AttemptRow | undefined {
  if (!r) return undefined;
  return {
    attempt_id: r[0],
    task_id: r[1],
    attempt_digest: r[2],
    owner_id: r[3],
    agent_id: r[4],
    registration_id: r[5],
    registration_epoch: r[6],
    kind: r[7],
    executor_id: r[8],
    claim_request_id: r[9],
    execution_operation_id: r[10],
    fence: r[11],
    lease_ms: r[12],
    lease_expires_at: r[13],
    superseded_by_fence: r[14],
    canonical: r[15],
    state: r[16],
    outcome: r[17],
    outcome_code: r[18],
    created_at: r[19],
    updated_at: r[20],
  };
}

/**
 * The transfer columns a TransferRow carries: all of them stored before the retained bytes (up to
 * 16 MiB), so a read never walks the bytes' overflow pages (a column after them, like view, would).
 */
const TRANSFER_COLUMNS =
  'transfer_digest, bytes_digest, upload_request_id, task_id, attempt_id, fence, registration_id, collector_profile_install_id, collector_profile_digest, grant_generation, outcome, length';

/** The attempt columns updateAttempt may set (AttemptChange), so that no other key reaches the SQL text. */
const UPDATABLE_ATTEMPT_COLUMNS: ReadonlySet<string> = new Set(['lease_expires_at', 'state', 'outcome', 'outcome_code', 'superseded_by_fence', 'updated_at']);

export function journalPath(dataDir: string): string {
  return path.join(dataDir, JOURNAL_FILE);
}

export class Journal implements JournalStore {
  private readonly latestStmt: Database.Statement<[string], AttemptTuple>;
  private readonly attemptStmt: Database.Statement<[string], AttemptTuple>;
  private readonly receiptStmt: Database.Statement<[string, string, string, number, number, string, string, string], { receipt_digest: string }>;

  private readonly cache = new Map<string, Database.Statement>();
  /** The statements of cache that write. */
  private readonly writers = new Set<Database.Statement>();
  private readonly tx: Database.Transaction<(f: () => unknown) => unknown>;

  private readonly decoded = new Map<string, { bytes: Buffer; value: unknown }>();

  private readonly dataVersionStmt: Database.Statement<[], number>;
  private readonly ownChangesStmt: Database.Statement<[], number>;
  /** Lookups answered from memory while the journal is unchanged (see remembered). */
  private readonly reads = new Map<string, { value: unknown }>();
  private readsDataVersion = -1;
  private readsOwnChanges = -1;

  /**
   * Whether the journal was checked for changes in the current synchronous stretch. This connection's
   * writes (write(), a writing statement from stmt(), the end of immediate()) clear it, so the next
   * lookup checks again: a write commits on this connection only through one of them.
   */
  private readsChecked = false;
  private readonly readsExpire = (): void => {
    this.readsChecked = false;
  };

  /**
   * A lookup answered from memory while nothing changed the journal since it was asked. Checked once
   * per synchronous stretch of code (until the next microtask checkpoint), as the authority's memo is:
   * another connection's commit (in any process) moves PRAGMA data_version, this connection's writes
   * move total_changes(), and each of this connection's writes makes the next lookup check again (see
   * readsChecked), so a lookup after a write in the same stretch never answers from before it. Inside an
   * open transaction nothing is remembered or answered from memory: a savepoint rolled back would leave
   * rows read in it behind.
   */
  remembered<V>(key: string, get: () => V): V {
    if (this.db.inTransaction) return get();
    if (!this.readsChecked) this.checkReads();
    const hit = this.reads.get(key);
    if (hit) return hit.value as V;
    const value = get();
    if (this.reads.size >= 16384) this.reads.clear();
    this.reads.set(key, { value });
    return value;
  }

  /** See JournalStore.readsGeneration: counts the times remembered() forgot everything. */
  readsGeneration(): number | undefined {
    if (this.db.inTransaction) return undefined;
    if (!this.readsChecked) this.checkReads();
    return this.readsGen;
  }

  private readsGen = 0;

  private checkReads(): void {
    const own = this.ownChangesStmt.get()!;
    const dv = this.dataVersionStmt.get()!;
    this.readsChecked = true;
    queueMicrotask(this.readsExpire);
    if (dv !== this.readsDataVersion || own !== this.readsOwnChanges) {
      this.reads.clear();
      this.readsGen++;
      this.readsDataVersion = dv;
      this.readsOwnChanges = own;
    }
  }

  /**
   * Stored canonical bytes decoded once per handle: a hit needs the identical bytes under the same key
   * (the key names everything else the decoding checked, e.g. the digest it was verified against).
   */
  decodeOnce<T>(key: string, bytes: Buffer, decode: (bytes: Buffer) => T): T {
    const hit = this.decoded.get(key);
    if (hit && hit.bytes.equals(bytes)) return hit.value as T;
    const value = decode(bytes);
    if (this.decoded.size >= 4096) this.decoded.clear();
    this.decoded.set(key, { bytes, value });
    return value;
  }

  /**
   * Runs f in a BEGIN IMMEDIATE transaction. Inside an open transaction (a group-commit batch, which
   * already runs every mutation in its own savepoint, see batch.ts) f runs in that savepoint: a second
   * one per mutation would only cost statements. One wrapper per handle: better-sqlite3 builds its
   * transaction functions per call.
   */
  immediate<T>(f: () => T): T {
    if (this.db.inTransaction) return f();
    try {
      return this.tx.immediate(f) as T;
    } finally {
      this.readsChecked = false;
    }
  }

  /**
   * A prepared statement, prepared once per handle (preparing costs more than most queries here). A
   * writing one makes the next lookup check the journal again (remembered); write() does so after it ran.
   */
  stmt(sql: string): Database.Statement {
    let st = this.cache.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.cache.set(sql, st);
      if (!st.reader) this.writers.add(st);
    }
    if (this.writers.has(st)) this.readsChecked = false;
    return st;
  }

  /** Runs a writing statement; the next lookup checks the journal again (remembered). */
  private write(sql: string, ...params: unknown[]): Database.RunResult {
    try {
      return this.stmt(sql).run(...params);
    } finally {
      this.readsChecked = false;
    }
  }

  constructor(readonly db: Database.Database) {
    this.tx = db.transaction((f: () => unknown) => f());
    this.dataVersionStmt = db.prepare<[], number>('PRAGMA data_version').pluck();
    this.ownChangesStmt = db.prepare<[], number>('SELECT total_changes()').pluck();
    // Rows come back as arrays and become objects here: better-sqlite3 builds a wide row object slowly.
    this.latestStmt = db.prepare<[string], AttemptTuple>(`SELECT ${ATTEMPT_COLUMNS} FROM attempts WHERE task_id = ? ORDER BY fence DESC LIMIT 1`).raw();
    this.attemptStmt = db.prepare<[string], AttemptTuple>(`SELECT ${ATTEMPT_COLUMNS} FROM attempts WHERE attempt_id = ?`).raw();
    this.receiptStmt = db.prepare(
      `SELECT receipt_digest FROM receipts WHERE repository = ? AND profile = ? AND change_id = ? AND change_version = ? AND policy_epoch = ?
         AND context_digest = ? AND requirement_digest = ? AND revision = ? ORDER BY created_at DESC LIMIT 1`,
    );
  }

  /** The current (highest-fence) attempt of a task, if any. */
  latestAttempt(taskId: string): AttemptRow | undefined {
    return this.remembered(`latest\0${taskId}`, () => attemptRow(this.latestStmt.get(taskId)));
  }

  attempt(attemptId: string): AttemptRow | undefined {
    return attemptRow(this.attemptStmt.get(attemptId));
  }

  taskRow(taskId: string): TaskRow | undefined {
    return this.stmt('SELECT task_id, task_digest, canonical FROM tasks WHERE task_id = ?').get(taskId) as TaskRow | undefined;
  }

  retainTask(task: Task, now: number): void {
    const s = task.subject;
    this.write(
      'INSERT OR IGNORE INTO tasks (task_id, task_digest, repository, profile, change_id, change_version, policy_epoch, step_id, canonical, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      task.task_id, task.task_digest, s.repository, s.profile, s.change_id, s.change_version, s.policy_epoch, task.step.id, task.canonical, now,
    );
  }

  priorUnresolvedTask(s: Subject, stepId: string, exceptTaskId: string, scanLimit: number): string | undefined {
    const row = this.stmt(
      `SELECT t.task_id AS task_id FROM (
         SELECT task_id, created_at FROM tasks WHERE repository = ? AND change_id = ? AND profile = ? AND step_id = ? AND task_id != ?
         ORDER BY created_at DESC LIMIT ${Math.trunc(scanLimit)}) t
       JOIN attempts a ON a.task_id = t.task_id AND a.fence = (SELECT MAX(fence) FROM attempts WHERE task_id = t.task_id)
       WHERE a.state IN ('leased', 'cancelled') ORDER BY t.created_at DESC LIMIT 1`,
    ).get(s.repository, s.change_id, s.profile, stepId, exceptTaskId) as { task_id: string } | undefined;
    return row?.task_id;
  }

  insertAttempt(row: AttemptRow): void {
    this.write(
      `INSERT INTO attempts (attempt_id, task_id, attempt_digest, claim_request_id, execution_operation_id, owner_id, agent_id, registration_id, registration_epoch,
         kind, executor_id, fence, lease_ms, lease_expires_at, state, outcome, outcome_code, superseded_by_fence, canonical, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      row.attempt_id, row.task_id, row.attempt_digest, row.claim_request_id, row.execution_operation_id, row.owner_id, row.agent_id, row.registration_id,
      row.registration_epoch, row.kind, row.executor_id, row.fence, row.lease_ms, row.lease_expires_at, row.state, row.outcome, row.outcome_code,
      row.superseded_by_fence, row.canonical, row.created_at, row.updated_at,
    );
  }

  updateAttempt(attemptId: string, change: AttemptChange): number {
    // Only the columns the change names; each distinct set of columns is one statement, prepared once.
    const cols = (Object.keys(change) as (keyof AttemptChange)[]).filter((c) => UPDATABLE_ATTEMPT_COLUMNS.has(c));
    const sql = `UPDATE attempts SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE attempt_id = ?`;
    return this.write(sql, ...cols.map((c) => change[c]), attemptId).changes;
  }

  requestRow(ownerId: string, agentId: string, requestId: string): RequestRow | undefined {
    return this.stmt('SELECT kind, request_digest, task_id, attempt_id, response FROM idempotency WHERE owner_id = ? AND agent_id = ? AND request_id = ?').get(ownerId, agentId, requestId) as
      | RequestRow
      | undefined;
  }

  insertRequest(r: NewRequest): void {
    this.write(
      'INSERT INTO idempotency (owner_id, agent_id, request_id, kind, request_digest, task_id, attempt_id, response, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      r.owner_id, r.agent_id, r.request_id, r.kind, r.request_digest, r.task_id, r.attempt_id, r.response, r.created_at,
    );
  }

  insertAssertion(r: AssertionRow): void {
    this.write(
      'INSERT INTO assertions (request_id, owner_id, agent_id, task_id, attempt_id, fence, registration_id, trust_class, outcome, observation_digest, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      r.request_id, r.owner_id, r.agent_id, r.task_id, r.attempt_id, r.fence, r.registration_id, r.trust_class, r.outcome, r.observation_digest, r.body, r.created_at,
    );
  }

  collectorAttempt(attemptId: string): CollectorAttemptRow | undefined {
    return this.stmt('SELECT attempt_id, install_id, profile_digest, grant_generation FROM collector_attempts WHERE attempt_id = ?').get(attemptId) as CollectorAttemptRow | undefined;
  }

  insertCollectorAttempt(r: CollectorAttemptRow, now: number): void {
    this.write(
      'INSERT INTO collector_attempts (attempt_id, install_id, profile_digest, grant_generation, created_at) VALUES (?, ?, ?, ?, ?)',
      r.attempt_id, r.install_id, r.profile_digest, r.grant_generation, now,
    );
  }

  transferByUpload(ownerId: string, agentId: string, uploadRequestId: string): TransferWithView | undefined {
    return this.stmt(`SELECT ${TRANSFER_COLUMNS}, view FROM transfers WHERE owner_id = ? AND agent_id = ? AND upload_request_id = ?`).get(ownerId, agentId, uploadRequestId) as
      | TransferWithView
      | undefined;
  }

  transferOfAttempt(attemptId: string): TransferRow | undefined {
    return this.stmt(`SELECT ${TRANSFER_COLUMNS} FROM transfers WHERE attempt_id = ?`).get(attemptId) as TransferRow | undefined;
  }

  transferBindingOfAttempt(attemptId: string): TransferBinding | undefined {
    return this.remembered(`binding\0${attemptId}`, () => this.bindingOfAttempt(attemptId));
  }

  private bindingOfAttempt(attemptId: string): TransferBinding | undefined {
    return this.stmt('SELECT registration_id, collector_profile_install_id, grant_generation FROM transfers WHERE attempt_id = ?').get(attemptId) as TransferBinding | undefined;
  }

  transfer(transferDigest: string): TransferRow | undefined {
    return this.remembered(`transfer\0${transferDigest}`, () => this.stmt(`SELECT ${TRANSFER_COLUMNS} FROM transfers WHERE transfer_digest = ?`).get(transferDigest) as TransferRow | undefined);
  }

  transferStoredLength(transferDigest: string): number | undefined {
    // length() of a BLOB column reads the record header only, not the value's overflow pages.
    const row = this.stmt('SELECT length(bytes) AS n FROM transfers WHERE transfer_digest = ?').get(transferDigest) as { n: number } | undefined;
    return row?.n;
  }

  transferBytes(transferDigest: string): Buffer | undefined {
    return (this.stmt('SELECT bytes FROM transfers WHERE transfer_digest = ?').get(transferDigest) as { bytes: Buffer } | undefined)?.bytes;
  }

  insertTransfer(r: NewTransfer): void {
    this.write(
      `INSERT INTO transfers (transfer_digest, owner_id, agent_id, upload_request_id, bytes_digest, task_id, attempt_id, fence, registration_id,
         collector_profile_install_id, collector_profile_digest, grant_generation, outcome, length, bytes, view, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      r.transfer_digest, r.owner_id, r.agent_id, r.upload_request_id, r.bytes_digest, r.task_id, r.attempt_id, r.fence, r.registration_id,
      r.collector_profile_install_id, r.collector_profile_digest, r.grant_generation, r.outcome, r.length, r.bytes, r.view, r.created_at,
    );
  }

  receiptCreatedAt(receiptDigest: string): number | undefined {
    return (this.stmt('SELECT created_at FROM receipts WHERE receipt_digest = ?').get(receiptDigest) as { created_at: number } | undefined)?.created_at;
  }

  receiptBody(receiptDigest: string): Buffer | undefined {
    return (this.stmt('SELECT body FROM receipts WHERE receipt_digest = ?').get(receiptDigest) as { body: Buffer } | undefined)?.body;
  }

  insertReceipt(receiptDigest: string, s: Subject, body: Buffer, now: number): void {
    this.write(
      `INSERT OR IGNORE INTO receipts (receipt_digest, repository, profile, change_id, change_version, context_digest, policy_epoch, requirement_digest, revision, body, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      receiptDigest, s.repository, s.profile, s.change_id, s.change_version, s.context_digest, s.policy_epoch, s.requirement_digest, s.revision, body, now,
    );
  }

  /** The receipt for exactly this subject, if one was finalized. */
  receiptFor(s: Subject): string | undefined {
    const key = `receipt\0${s.repository}\0${s.profile}\0${s.change_id}\0${s.change_version}\0${s.policy_epoch}\0${s.context_digest}\0${s.requirement_digest}\0${s.revision}`;
    return this.remembered(key, () => this.receiptStmt.get(s.repository, s.profile, s.change_id, s.change_version, s.policy_epoch, s.context_digest, s.requirement_digest, s.revision)?.receipt_digest);
  }

  // ---- forge outbox (schema version 4) -----------------------------------------------------------

  /** The (repository, profile, change) triples that have retained tasks: the Changes a forge follows. */
  changesWithTasks(): { repository: string; profile: string; change_id: string }[] {
    return this.stmt('SELECT DISTINCT repository, profile, change_id FROM tasks').all() as { repository: string; profile: string; change_id: string }[];
  }

  /** The newest status queued for a Change. */
  lastOutbox(repository: string, profile: string, changeId: string): OutboxRow | undefined {
    return this.stmt('SELECT * FROM forge_outbox WHERE repository = ? AND profile = ? AND change_id = ? ORDER BY seq DESC LIMIT 1').get(repository, profile, changeId) as OutboxRow | undefined;
  }

  insertOutbox(r: Omit<OutboxRow, 'seq' | 'delivery' | 'attempts' | 'last_error' | 'updated_at'>): void {
    this.write(
      `INSERT INTO forge_outbox (repository, profile, change_id, change_version, policy_epoch, sha, state, description, receipt_digest, delivery, attempts, next_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?)`,
      r.repository, r.profile, r.change_id, r.change_version, r.policy_epoch, r.sha, r.state, r.description, r.receipt_digest, r.next_at, r.created_at, r.created_at,
    );
  }

  /** Queued rows in queue order (at most limit). */
  queuedOutbox(limit: number): OutboxRow[] {
    return this.stmt("SELECT * FROM forge_outbox WHERE delivery = 'queued' ORDER BY seq LIMIT ?").all(limit) as OutboxRow[];
  }

  updateOutbox(seq: number, change: Pick<OutboxRow, 'delivery' | 'attempts' | 'next_at' | 'last_error' | 'updated_at'>): void {
    this.write(
      'UPDATE forge_outbox SET delivery = ?, attempts = ?, next_at = ?, last_error = ?, updated_at = ? WHERE seq = ?',
      change.delivery, change.attempts, change.next_at, change.last_error, change.updated_at, seq,
    );
  }

  close(): void {
    this.db.close();
  }
}

/** Opens the journal read-only, or returns undefined when there is none yet (never creates it). */
export function openJournalReadOnly(dataDir: string): Journal | undefined {
  const f = journalPath(dataDir);
  if (!checkStoreFile(f, lstatOrUndefined(f), 'the journal')) return undefined;
  const db = openDatabase(f, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  // A version-3 journal reads the same (only the forge outbox is new); the first write migrates it.
  checkVersion(db, [3, JOURNAL_SCHEMA_VERSION]);
  return new Journal(db);
}

/** Opens the journal for mutations, creating it (0600, WAL) on first use. */
export function openJournalForWrite(dataDir: string): Journal {
  const f = journalPath(dataDir);
  const fresh = !checkStoreFile(f, lstatOrUndefined(f), 'the journal');
  const db = openDatabase(f);
  if (fresh) fs.chmodSync(f, 0o600);
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  // A mutation is answered only once it is durable: every commit syncs the WAL. Set explicitly because
  // this SQLite build defaults WAL connections to NORMAL when it opens an existing WAL database.
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  if ((db.pragma('user_version', { simple: true }) as number) === 0) {
    db.transaction(() => {
      db.exec(JOURNAL_SCHEMA);
      db.exec(JOURNAL_SCHEMA_V4);
      db.pragma(`user_version = ${JOURNAL_SCHEMA_VERSION}`);
    }).immediate();
  }
  if ((db.pragma('user_version', { simple: true }) as number) === 3) {
    // Version 3 gains the forge outbox; its rows stay as they are.
    db.transaction(() => {
      if ((db.pragma('user_version', { simple: true }) as number) !== 3) return;
      db.exec(JOURNAL_SCHEMA_V4);
      db.pragma(`user_version = ${JOURNAL_SCHEMA_VERSION}`);
    }).immediate();
  }
  checkVersion(db);
  return new Journal(db);
}

function checkVersion(db: Database.Database, accepted: readonly number[] = [JOURNAL_SCHEMA_VERSION]): void {
  const v = db.pragma('user_version', { simple: true }) as number;
  if (!accepted.includes(v)) {
    db.close();
    throw localState(`journal schema is version ${v}, this program needs ${JOURNAL_SCHEMA_VERSION}`, 'SCHEMA_NOT_CURRENT');
  }
}
