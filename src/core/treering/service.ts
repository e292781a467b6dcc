// The write and maintenance operations behind the tree-ring commands. Every input is validated and
// screened by the sensitivity guard before the store is opened, so a refused write leaves no trace
// (not even a new store). Authorization denials commit their audit row, then fail.

import * as fs from 'node:fs';
import { AgentscmError, badInput, conflict, notFound } from '../errors.js';
import { newEvent, type MemoryEvent } from './model.js';
import { decodeJsonl, encodeJsonl, isImportedRedaction, normalizeImportEvent } from './portable.js';
import { detectEventSensitivity } from './sensitivity.js';
import { authorizeCoordinatorAction, authorizeEventCreates, type WriteContext } from './store/policy.js';
import { openForReading, openWritable, storePath, writeTransaction, type Db } from './store/schema.js';
import {
  deleteInTransaction,
  findByOperationNamespace,
  memoryExists,
  putInTransaction,
  redactInTransaction,
  sameWriteIntent,
  supersedeInTransaction,
  tombstoneInTransaction,
  validateForStorage,
} from './store/write.js';
import { eventFromRawJson } from './model.js';

export interface EventInput {
  summary: string;
  eventType: string;
  ring?: string | undefined;
  scope?: string | undefined;
  project?: string | undefined;
  agentProfile?: string | undefined;
  workflowId?: string | undefined;
  sessionId?: string | undefined;
  operationId?: string | undefined;
  sourceType?: string | undefined;
  sourceRef?: string | undefined;
  details?: string | undefined;
  tags?: readonly string[] | undefined;
  salience?: number | undefined;
  confidence?: number | undefined;
  retention?: string | undefined;
}

/** Builds and screens an event: secret-like content throws; sensitive words reclassify it. */
export function buildEvent(input: EventInput): MemoryEvent {
  const e = newEvent(input.summary, input.eventType);
  e.ring = input.ring ?? 'cambium';
  e.scope = input.scope ?? 'global';
  e.project = input.project ?? null;
  e.agent_profile = input.agentProfile ?? null;
  e.workflow_id = input.workflowId ?? null;
  e.session_id = input.sessionId ?? null;
  e.operation_id = input.operationId ?? null;
  e.details = input.details ?? '';
  e.tags = [...(input.tags ?? [])];
  if (input.sourceRef !== undefined) e.source = { type: input.sourceType ?? 'agent', ref: input.sourceRef, quote: '' };
  else if (input.sourceType !== undefined) e.source.type = input.sourceType;
  if (input.salience !== undefined) e.salience = input.salience;
  if (input.confidence !== undefined) e.confidence = input.confidence;
  if (input.retention !== undefined) e.retention = input.retention;
  const detected = detectEventSensitivity(e);
  if (detected !== 'normal') e.sensitivity = detected;
  validateForStorage(e);
  return e;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: AgentscmError };

function withWritable<T>(root: string, fn: (db: Db) => T): T {
  const db = openWritable(root);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

function withExisting<T>(root: string, fn: (db: Db) => T): T {
  if (!fs.existsSync(storePath(root))) throw notFound(`no Tree Ring store at ${storePath(root)} (run tree-ring init)`, 'NO_STORE');
  return withWritable(root, fn);
}

function unwrap<T>(o: Outcome<T>): T {
  if (!o.ok) throw o.error;
  return o.value;
}

/**
 * Upstream's text for a reused operation id with another write intent (put_with_idempotency in the
 * upstream SQLite crate, 0.15.x); coordinated clients match on it.
 */
export function operationConflictMessage(operationId: string): string {
  return `operation_id ${operationId} is already bound to a different memory write`;
}

export interface StoredEvent {
  memory: MemoryEvent;
  /** False when an idempotent retry returned the event stored by an earlier attempt. */
  created: boolean;
}

/** Stores one screened event; with an operation id a retry returns the first attempt's event. */
export function storeEvent(root: string, e: MemoryEvent, ctx: WriteContext, action: string): StoredEvent {
  return withWritable(root, (db) =>
    unwrap(
      writeTransaction(db, (): Outcome<StoredEvent> => {
        if (e.operation_id !== null) {
          const existing = findByOperationNamespace(db, e, e.operation_id);
          if (existing) {
            if (!sameWriteIntent(existing, e)) return { ok: false, error: conflict(operationConflictMessage(e.operation_id), 'OPERATION_CONFLICT') };
            return { ok: true, value: { memory: existing, created: false } };
          }
        }
        const auth = authorizeEventCreates(db, ctx, action, [e]);
        if (!auth.allowed) return { ok: false, error: auth.error };
        putInTransaction(db, e);
        return { ok: true, value: { memory: e, created: true } };
      }),
    ),
  );
}

// ---- capture ------------------------------------------------------------------------------------------

/** The event-type/ring pairs an automatic capture checkpoint may write. */
export const CAPTURE_PAIRS: Readonly<Record<string, string>> = {
  preference: 'cambium',
  decision: 'cambium',
  lesson: 'cambium',
  correction: 'cambium',
  warning: 'scar',
  seed: 'seed',
};
export const CAPTURE_SOURCE_PREFIX = 'agent-checkpoint:';

export function buildCaptureEvent(input: EventInput & { ring: string; project: string; agentProfile: string; workflowId: string; sessionId: string; operationId: string; sourceRef: string }): MemoryEvent {
  const ring = CAPTURE_PAIRS[input.eventType];
  if (ring === undefined) throw badInput(`capture event type must be one of ${Object.keys(CAPTURE_PAIRS).join(', ')}`, 'CAPTURE_REFUSED');
  if (input.ring !== ring) throw badInput(`capture stores ${input.eventType} memories in the ${ring} ring`, 'CAPTURE_REFUSED');
  if (!input.sourceRef.startsWith(CAPTURE_SOURCE_PREFIX) || input.sourceRef.length === CAPTURE_SOURCE_PREFIX.length) {
    throw badInput(`capture requires --source-ref ${CAPTURE_SOURCE_PREFIX}<checkpoint id>`, 'CAPTURE_REFUSED');
  }
  const e = buildEvent({ ...input, scope: 'agent', sourceType: 'agent' });
  if (e.sensitivity !== 'normal') throw badInput('capture accepts only normal-sensitivity memories', 'CAPTURE_REFUSED');
  return e;
}

// ---- evidence -----------------------------------------------------------------------------------------

const EVIDENCE_OUTCOMES: Record<string, { outcome: string; ring: string; eventType: string; salience: number; confidence: (s?: number) => number; retention: string }> = {};
for (const [names, ring, eventType, salience, confidence, retention] of [
  [['promoted', 'promotion'], 'heartwood', 'evaluation_promotion', 0.86, (s?: number) => Math.max(s ?? 0.84, 0.75), 'durable'],
  [['rejected', 'rejection'], 'scar', 'evaluation_rejection', 0.9, (s?: number) => s ?? 0.78, 'durable'],
  [['deferred', 'seed', 'hypothesis'], 'seed', 'evaluation_hypothesis', 0.68, (s?: number) => s ?? 0.6, 'normal'],
  [['observed', 'observation', 'result'], 'outer', 'evaluation_result', 0.72, (s?: number) => s ?? 0.7, 'normal'],
] as const) {
  for (const n of names) EVIDENCE_OUTCOMES[n] = { outcome: n, ring, eventType, salience, confidence, retention };
}

export interface EvidenceInput {
  summary: string;
  outcome: string;
  evidenceRef: string;
  project?: string | undefined;
  agentProfile?: string | undefined;
  workflowId?: string | undefined;
  sessionId?: string | undefined;
  operationId?: string | undefined;
  details?: string | undefined;
  score?: number | undefined;
  tags?: readonly string[] | undefined;
}

/** Maps an evaluated outcome to ring, event type, salience, confidence and retention. */
export function buildEvidenceEvent(input: EvidenceInput): MemoryEvent {
  if (input.summary.trim() === '') throw badInput('evidence summary is required');
  if (input.evidenceRef.trim() === '') throw badInput('evidence-ref is required');
  if (input.score !== undefined && !(Number.isFinite(input.score) && input.score >= 0 && input.score <= 1)) throw badInput('evidence score must be between 0 and 1');
  const outcome = input.outcome.trim().toLowerCase();
  const m = EVIDENCE_OUTCOMES[outcome];
  if (!m) throw badInput('evidence outcome must be observed, promoted, rejected, or deferred');
  const lines = [`Outcome: ${outcome}`];
  if (input.score !== undefined) lines.push(`Score: ${input.score.toFixed(3)}`);
  const extra = input.details?.trim();
  if (extra) lines.push(extra);
  const tags = [...new Set([...(input.tags ?? []), 'evidence', 'improvement-loop', `outcome:${outcome}`])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const ref = input.evidenceRef.trim();
  const e = buildEvent({
    summary: input.summary.trim(),
    eventType: m.eventType,
    ring: m.ring,
    scope: 'eval',
    project: input.project,
    agentProfile: input.agentProfile,
    workflowId: input.workflowId,
    sessionId: input.sessionId,
    operationId: input.operationId,
    details: lines.join('\n'),
    sourceType: 'evidence',
    sourceRef: ref,
    tags,
    salience: m.salience,
    confidence: Math.min(1, Math.max(0, m.confidence(input.score))),
    retention: m.retention,
  });
  e.links.push({ type: 'evidence', target: ref });
  validateForStorage(e);
  return e;
}

// ---- forget ---------------------------------------------------------------------------------------------

export function forgetMemory(root: string, id: string, mode: 'delete' | 'redact', reason: string, ctx: WriteContext): boolean {
  if (reason.trim() === '') throw badInput('forget reason is required');
  return withExisting(root, (db) =>
    unwrap(
      writeTransaction(db, (): Outcome<boolean> => {
        const auth = authorizeCoordinatorAction(db, ctx, mode === 'delete' ? 'forget_delete' : 'forget_redact', id);
        if (!auth.allowed) return { ok: false, error: auth.error };
        return { ok: true, value: mode === 'delete' ? deleteInTransaction(db, id) : redactInTransaction(db, id) };
      }),
    ),
  );
}

// ---- export / import ------------------------------------------------------------------------------------

export interface ExportReport {
  memory_count: number;
  sensitive_included: boolean;
  superseded_included: boolean;
}

export function exportStore(root: string, includeSensitive: boolean, includeSuperseded: boolean): { jsonl: string; report: ExportReport } {
  const db = openForReading(root);
  try {
    const sql = includeSuperseded ? 'SELECT raw_json FROM memories ORDER BY created_at DESC' : 'SELECT raw_json FROM memories WHERE superseded_by IS NULL ORDER BY created_at DESC';
    const events = (db.prepare(sql).all() as Array<{ raw_json: string }>).map((r) => eventFromRawJson(r.raw_json)).filter((e) => includeSensitive || e.sensitivity === 'normal');
    return { jsonl: encodeJsonl(events, includeSensitive), report: { memory_count: events.length, sensitive_included: includeSensitive, superseded_included: includeSuperseded } };
  } finally {
    db.close();
  }
}

export interface ImportReport {
  valid_count: number;
  inserted_count: number;
  replaced_count: number;
  skipped_duplicate_count: number;
  dry_run: boolean;
}

/** Decodes and normalizes every line first; nothing is written unless all of them are valid. */
export function importJsonl(root: string, input: string, dryRun: boolean, replaceExisting: boolean, ctx: WriteContext): ImportReport {
  const events = decodeJsonl(input).events.map(normalizeImportEvent);
  const report: ImportReport = { valid_count: events.length, inserted_count: 0, replaced_count: 0, skipped_duplicate_count: 0, dry_run: dryRun };
  if (dryRun) return report;
  return withWritable(root, (db) =>
    unwrap(
      writeTransaction(db, (): Outcome<ImportReport> => {
        const auth = authorizeCoordinatorAction(db, ctx, 'import', null);
        if (!auth.allowed) return { ok: false, error: auth.error };
        const known = new Set<string>();
        const batch: MemoryEvent[] = [];
        for (const e of events) {
          if (known.has(e.id) || memoryExists(db, e.id)) {
            if (replaceExisting) {
              batch.push(e);
              report.replaced_count++;
            } else {
              report.skipped_duplicate_count++;
            }
          } else {
            known.add(e.id);
            batch.push(e);
            report.inserted_count++;
          }
        }
        for (const e of batch) {
          // Tombstoned as it is written, so that a later line with content under the same id is refused.
          putInTransaction(db, e);
          if (isImportedRedaction(e)) tombstoneInTransaction(db, e.id);
        }
        for (const e of batch) for (const old of e.supersedes) supersedeInTransaction(db, old, e.id);
        return { ok: true, value: report };
      }),
    ),
  );
}
