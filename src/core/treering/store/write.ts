// Memory writes inside one immediate transaction: guard, validate, tombstone and operation-claim
// checks, then the row and its FTS entry together. Semantics follow upstream's write path so that a
// store shared with an upstream binary keeps the same idempotency and redaction guarantees.

import { createHash } from 'node:crypto';
import { DOMAINS } from '../../crypto/digest.js';
import { badInput, conflict } from '../../errors.js';
import { eventFromRawJson, eventToJson, isSanitizedRedaction, linksToJson, redactEvent, reviewToJson, sourceToJson, validateEvent, type MemoryEvent } from '../model.js';
import { detectEventSensitivity, isSecretLike, secretBlocked } from '../sensitivity.js';
import type Database from 'better-sqlite3';
import type { Db } from './schema.js';

const UPSERT_MEMORY_SQL = `
INSERT INTO memories (
  id, created_at, updated_at, project, agent_profile, workflow_id, session_id,
  operation_id, scope, ring, event_type, summary, details, source_json,
  tags_json, salience, confidence, sensitivity, retention, expires_at,
  supersedes_json, superseded_by, links_json, review_json, raw_json
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(id) DO UPDATE SET
  created_at = excluded.created_at, updated_at = excluded.updated_at, project = excluded.project,
  agent_profile = excluded.agent_profile, workflow_id = excluded.workflow_id, session_id = excluded.session_id,
  operation_id = excluded.operation_id, scope = excluded.scope, ring = excluded.ring,
  event_type = excluded.event_type, summary = excluded.summary, details = excluded.details,
  source_json = excluded.source_json, tags_json = excluded.tags_json, salience = excluded.salience,
  confidence = excluded.confidence, sensitivity = excluded.sensitivity, retention = excluded.retention,
  expires_at = excluded.expires_at, supersedes_json = excluded.supersedes_json,
  superseded_by = excluded.superseded_by, links_json = excluded.links_json,
  review_json = excluded.review_json, raw_json = excluded.raw_json`;

const statementCache = new WeakMap<Db, Map<string, Database.Statement>>();

/** Prepared statements are cached per connection: bulk writes (import) prepare each SQL text once. */
function stmt(db: Db, sql: string): Database.Statement {
  let m = statementCache.get(db);
  if (!m) statementCache.set(db, (m = new Map()));
  let st = m.get(sql);
  if (!st) m.set(sql, (st = db.prepare(sql)));
  return st;
}

/** Claim hash of (project, workflow, agent, operation id): the idempotency namespace of a write. */
export function operationNamespaceHash(e: MemoryEvent, operationId: string): Buffer {
  const h = createHash('sha256').update(DOMAINS.treeRingOperationNamespace);
  for (const v of [e.project, e.workflow_id, e.agent_profile, operationId]) {
    if (v === null) {
      h.update(Buffer.from([0]));
    } else {
      const bytes = Buffer.from(v, 'utf8');
      const len = Buffer.alloc(8);
      len.writeBigUInt64BE(BigInt(bytes.length));
      h.update(Buffer.from([1])).update(len).update(bytes);
    }
  }
  return h.digest();
}

export function getMemory(db: Db, id: string): MemoryEvent | undefined {
  const row = stmt(db, 'SELECT raw_json FROM memories WHERE id = ?').get(id) as { raw_json: string } | undefined;
  return row ? eventFromRawJson(row.raw_json) : undefined;
}

export function memoryExists(db: Db, id: string): boolean {
  return stmt(db, 'SELECT 1 FROM memories WHERE id = ?').get(id) !== undefined;
}

function isTombstoned(db: Db, id: string): boolean {
  return stmt(db, 'SELECT 1 FROM redaction_tombstones WHERE memory_id = ?').get(id) !== undefined;
}

/** Guard + validation that every stored event passes (secret-like content anywhere is refused). */
export function validateForStorage(e: MemoryEvent): void {
  detectEventSensitivity(e);
  validateEvent(e);
}

/** Checks a write; returns whether a row with this id already exists. */
function prepareMemoryWrite(db: Db, e: MemoryEvent): boolean {
  validateForStorage(e);
  if (isTombstoned(db, e.id) && !isSanitizedRedaction(e)) {
    throw conflict('memory id was redacted and cannot be replaced; hard-delete it before reuse', 'REDACTED_ID');
  }
  const existing = getMemory(db, e.id);
  if (existing?.operation_id) {
    // A replaced row keeps its old claim, so a retry of the old operation cannot restore it.
    const oldHash = operationNamespaceHash(existing, existing.operation_id);
    const newHash = e.operation_id === null ? undefined : operationNamespaceHash(e, e.operation_id);
    if (!newHash || !newHash.equals(oldHash)) {
      stmt(db, 'INSERT OR IGNORE INTO operation_claims (namespace_hash, memory_id) VALUES (?, ?)').run(oldHash, existing.id);
    }
  }
  if (e.operation_id !== null) {
    const claimed = stmt(db, 'SELECT 1 FROM operation_claims WHERE namespace_hash = ?').get(operationNamespaceHash(e, e.operation_id));
    if (claimed !== undefined) throw conflict(`operation_id ${e.operation_id} is already bound to a different memory write (a redacted one)`, 'OPERATION_CLAIMED');
  }
  return existing !== undefined;
}

function writeRow(db: Db, e: MemoryEvent, existed: boolean): void {
  stmt(db, UPSERT_MEMORY_SQL).run(
    e.id,
    e.created_at,
    e.updated_at,
    e.project,
    e.agent_profile,
    e.workflow_id,
    e.session_id,
    e.operation_id,
    e.scope,
    e.ring,
    e.event_type,
    e.summary,
    e.details,
    sourceToJson(e.source),
    JSON.stringify(e.tags),
    e.salience,
    e.confidence,
    e.sensitivity,
    e.retention,
    e.expires_at,
    JSON.stringify(e.supersedes),
    e.superseded_by,
    linksToJson(e.links),
    reviewToJson(e.review),
    eventToJson(e),
  );
  // memory_fts.id is UNINDEXED, so this delete scans the index: only a replaced row can have an entry.
  if (existed) stmt(db, 'DELETE FROM memory_fts WHERE id = ?').run(e.id);
  stmt(db, 'INSERT INTO memory_fts (id, summary, details, tags, source_ref) VALUES (?, ?, ?, ?, ?)').run(e.id, e.summary, e.details, e.tags.join(' '), e.source.ref);
}

/** Writes one event (insert or replace). Call inside a write transaction. */
export function putInTransaction(db: Db, e: MemoryEvent): void {
  writeRow(db, e, prepareMemoryWrite(db, e));
}

/** The live event that already holds this operation namespace, if any (a retry finds it). */
export function findByOperationNamespace(db: Db, e: MemoryEvent, operationId: string): MemoryEvent | undefined {
  const row = db
    .prepare(
      `SELECT raw_json FROM memories
       WHERE COALESCE(project, '') = COALESCE(?, '') AND COALESCE(workflow_id, '') = COALESCE(?, '')
         AND COALESCE(agent_profile, '') = COALESCE(?, '') AND operation_id = ? LIMIT 1`,
    )
    .get(e.project, e.workflow_id, e.agent_profile, operationId) as { raw_json: string } | undefined;
  if (row) return eventFromRawJson(row.raw_json);
  const claimed = db
    .prepare('SELECT memories.raw_json FROM operation_claims JOIN memories ON memories.id = operation_claims.memory_id WHERE operation_claims.namespace_hash = ? LIMIT 1')
    .get(operationNamespaceHash(e, operationId)) as { raw_json: string } | undefined;
  return claimed ? eventFromRawJson(claimed.raw_json) : undefined;
}

/**
 * Whether a retry carries the same write as the stored event. Timestamps and the generated id differ
 * between attempts by nature; everything the caller chose must match.
 */
export function sameWriteIntent(stored: MemoryEvent, retry: MemoryEvent): boolean {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return (
    stored.summary === retry.summary &&
    stored.details === retry.details &&
    stored.event_type === retry.event_type &&
    stored.ring === retry.ring &&
    stored.scope === retry.scope &&
    stored.project === retry.project &&
    stored.agent_profile === retry.agent_profile &&
    stored.workflow_id === retry.workflow_id &&
    stored.session_id === retry.session_id &&
    stored.source.type === retry.source.type &&
    stored.source.ref === retry.source.ref &&
    same(stored.tags, retry.tags) &&
    stored.salience === retry.salience &&
    stored.confidence === retry.confidence &&
    stored.retention === retry.retention
  );
}

export function deleteInTransaction(db: Db, id: string): boolean {
  const r = stmt(db, 'DELETE FROM memories WHERE id = ?').run(id);
  stmt(db, 'DELETE FROM memory_fts WHERE id = ?').run(id);
  stmt(db, 'DELETE FROM operation_claims WHERE memory_id = ?').run(id);
  stmt(db, 'DELETE FROM redaction_tombstones WHERE memory_id = ?').run(id);
  return r.changes > 0;
}

/** Marks an id redacted: from now on it only accepts the sanitized placeholder until hard-deleted. */
export function tombstoneInTransaction(db: Db, id: string): void {
  stmt(db, 'INSERT OR IGNORE INTO redaction_tombstones (memory_id) VALUES (?)').run(id);
}

/** Replaces the payload with the sanitized placeholder and tombstones the id. */
export function redactInTransaction(db: Db, id: string): boolean {
  const e = getMemory(db, id);
  if (!e) return false;
  const supersededBy = e.superseded_by;
  // putInTransaction keeps the old operation claim, so the same operation cannot write it again.
  redactEvent(e);
  e.superseded_by = supersededBy;
  putInTransaction(db, e);
  tombstoneInTransaction(db, e.id);
  return true;
}

export function supersedeInTransaction(db: Db, oldId: string, newId: string): boolean {
  if (isSecretLike(newId)) throw secretBlocked();
  const e = getMemory(db, oldId);
  if (!e) return false;
  e.superseded_by = newId;
  stmt(db, 'UPDATE memories SET superseded_by = ?, raw_json = ? WHERE id = ?').run(newId, eventToJson(e), oldId);
  return true;
}

export function requireNonBlank(value: string, message: string): void {
  if (value.trim() === '') throw badInput(message);
}
