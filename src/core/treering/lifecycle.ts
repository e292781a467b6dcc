// Store lifecycle: audit, maintenance and consolidation, as upstream's core and SQLite crates define
// them (tree-ring-memory-core audit.rs, maintenance.rs, consolidation.rs; tree-ring-memory-sqlite
// lib.rs `audit`, `maintain`, `consolidate`; 0.15). Audit and the dry runs only read: a missing store
// gives an empty report and is never created. Reports serialize in upstream's field order.

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { badInput, type AgentscmError } from '../errors.js';
import { eventFromRawJson, eventToJson, newEvent, nowIso, validateEvent, type MemoryEvent } from './model.js';
import { classifyText, detectEventSensitivity } from './sensitivity.js';
import { authorizeCoordinatorAction, type WriteContext } from './store/policy.js';
import { openReadOnly, openWritable, storePath, writeTransaction, type Db } from './store/schema.js';
import { deleteInTransaction, putInTransaction, redactInTransaction } from './store/write.js';

const q = JSON.stringify;

/** Every event of the store, newest first (upstream `list_all`); none when there is no store. */
function listAll(db: Db, includeSuperseded: boolean): MemoryEvent[] {
  const sql = includeSuperseded ? 'SELECT raw_json FROM memories ORDER BY created_at DESC' : 'SELECT raw_json FROM memories WHERE superseded_by IS NULL ORDER BY created_at DESC';
  return (db.prepare(sql).all() as Array<{ raw_json: string }>).map((r) => eventFromRawJson(r.raw_json));
}

/** Reads the store read-only if it exists (never creating or migrating it); otherwise `absent`. */
function readExisting<T>(root: string, absent: () => T, fn: (db: Db) => T): T {
  if (!fs.existsSync(storePath(root))) return absent();
  const db = openReadOnly(root);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** RFC 3339 date-time as chrono's `parse_from_rfc3339` accepts it; NaN when it does not parse. */
function parseRfc3339(value: string): number {
  if (!/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(value)) return Number.NaN;
  return Date.parse(value.replace(' ', 'T'));
}

function suffix12(): string {
  return randomBytes(6).toString('hex');
}

function stamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}_${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

/** The event's effective sensitivity as upstream's planners see it: "secret" when any field is secret-like. */
function effectiveSensitivity(e: MemoryEvent): string {
  let detected: string;
  try {
    detected = detectEventSensitivity(e);
  } catch {
    detected = 'secret';
  }
  if (detected === 'secret' || e.sensitivity === 'secret') return 'secret';
  return e.sensitivity !== 'normal' ? e.sensitivity : detected;
}

// ---- audit --------------------------------------------------------------------------------------------

export const AUDIT_TYPES = ['all', 'stale', 'sensitive', 'low_confidence', 'supersession', 'contradictions'] as const;
export type AuditType = (typeof AUDIT_TYPES)[number];

export interface AuditFinding {
  audit_type: AuditType;
  severity: 'critical' | 'high' | 'medium' | 'low';
  memory_id: string | null;
  related_memory_id: string | null;
  finding: string;
  recommended_action: string;
  tags: string[];
}

export interface AuditReport {
  generated_at: string;
  audit_type: AuditType;
  memory_count: number;
  finding_count: number;
  findings: AuditFinding[];
}

export function parseAuditType(value: string): AuditType {
  const n = value.trim().toLowerCase();
  if (!(AUDIT_TYPES as readonly string[]).includes(n)) throw badInput(`unsupported audit_type: ${n}`, 'BAD_AUDIT_TYPE');
  return n as AuditType;
}

function normalizeWords(value: string): string {
  return value
    .replace(/[^\p{L}\p{N}_]/gu, ' ')
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .join(' ');
}

function directive(summary: string): ['use' | 'avoid', string] | undefined {
  const n = normalizeWords(summary);
  if (n.startsWith('use ')) return ['use', n.slice(4)];
  if (n.startsWith('avoid ')) return ['avoid', n.slice(6)];
  return undefined;
}

/** The audit of a list of events (upstream `audit_memories`). */
export function auditMemories(events: readonly MemoryEvent[], auditTypeText: string, now = Date.now()): AuditReport {
  const auditType = parseAuditType(auditTypeText);
  const findings: AuditFinding[] = [];
  const on = (t: AuditType) => auditType === 'all' || auditType === t;
  const add = (t: AuditType, severity: AuditFinding['severity'], memoryId: string | null, related: string | null, finding: string, action: string, tags: string[]) =>
    findings.push({ audit_type: t, severity, memory_id: memoryId, related_memory_id: related, finding, recommended_action: action, tags });

  if (on('stale')) {
    for (const e of events) {
      if (e.expires_at === null) continue;
      const at = parseRfc3339(e.expires_at);
      if (Number.isNaN(at)) add('stale', 'medium', e.id, null, 'Memory has an invalid expires_at timestamp.', 'Review the memory and set a valid ISO-8601 expires_at value or redact it.', ['retention', 'expiry']);
      else if (at <= now) add('stale', 'medium', e.id, null, 'Memory expires_at is in the past.', 'Review, delete, redact, or refresh this memory.', ['retention', 'expiry']);
    }
  }
  if (on('sensitive')) {
    for (const e of events) {
      if (e.sensitivity === 'normal') continue;
      if (e.sensitivity === 'secret') add('sensitive', 'critical', e.id, null, 'Secret-like memory is retained.', 'Redact or delete this memory.', ['privacy', 'secret']);
      if (e.retention === 'durable' || e.retention === 'user_pinned') add('sensitive', 'high', e.id, null, 'Sensitive memory has durable retention.', 'Review whether this memory should be redacted or assigned an expiry.', ['privacy', 'retention']);
      if (e.expires_at === null) add('sensitive', 'medium', e.id, null, 'Sensitive memory is retained without an expiry.', 'Set expires_at, redact, or delete this memory.', ['privacy', 'expiry']);
    }
  }
  if (on('low_confidence')) {
    for (const e of events) {
      if (e.ring === 'heartwood' && e.confidence < 0.75) add('low_confidence', 'high', e.id, null, 'Heartwood memory has low confidence.', 'Review evidence before treating this as durable truth.', ['confidence', 'heartwood']);
      if ((e.retention === 'durable' || e.retention === 'user_pinned') && e.confidence < 0.5) add('low_confidence', 'medium', e.id, null, 'Durable memory has very low confidence.', 'Review, demote, or supersede this memory.', ['confidence', 'retention']);
    }
  }
  if (on('supersession')) {
    const byId = new Map(events.map((e) => [e.id, e]));
    for (const e of events) {
      if (e.supersedes.includes(e.id)) add('supersession', 'high', e.id, null, 'Memory supersedes itself.', 'Remove the self-supersession link.', ['supersession', 'integrity']);
      if (e.superseded_by !== null && !byId.has(e.superseded_by)) add('supersession', 'high', e.id, e.superseded_by, 'Memory points to a missing superseded_by target.', 'Import, restore, or clear the missing supersession target.', ['supersession', 'integrity']);
      for (const oldId of e.supersedes) {
        const old = byId.get(oldId);
        if (!old) {
          add('supersession', 'medium', e.id, oldId, 'Memory supersedes a missing memory.', 'Import, restore, or remove the missing supersedes reference.', ['supersession', 'integrity']);
        } else if (old.superseded_by !== e.id) {
          add('supersession', 'medium', e.id, oldId, 'Supersedes link is missing a reciprocal superseded_by pointer.', 'Repair the supersession chain.', ['supersession', 'integrity']);
        }
      }
    }
  }
  if (on('contradictions')) {
    // Buckets keyed like upstream's BTreeMap<(project, scope, event_type, tag, subject)>: visited in key order.
    const buckets = new Map<string, { key: string[]; uses: MemoryEvent[]; avoids: MemoryEvent[] }>();
    for (const e of events) {
      const d = directive(e.summary);
      if (!d) continue;
      for (const tag of e.tags) {
        const key = [e.project === null ? '' : `\u0001${e.project}`, e.scope, e.event_type, tag, d[1]];
        const k = JSON.stringify(key);
        let b = buckets.get(k);
        if (!b) buckets.set(k, (b = { key, uses: [], avoids: [] }));
        (d[0] === 'use' ? b.uses : b.avoids).push(e);
      }
    }
    const cmp = (a: string[], b: string[]) => {
      for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
      return 0;
    };
    const emitted = new Set<string>();
    for (const b of [...buckets.values()].sort((x, y) => cmp(x.key, y.key))) {
      for (const u of b.uses) {
        for (const a of b.avoids) {
          const pair = u.id <= a.id ? `${u.id}\n${a.id}` : `${a.id}\n${u.id}`;
          if (emitted.has(pair)) continue;
          emitted.add(pair);
          add('contradictions', 'medium', u.id, a.id, 'Memories contain contradictory use/avoid guidance.', 'Review the pair and supersede the stale or incorrect memory.', ['contradiction', 'review']);
        }
      }
    }
  }
  return { generated_at: nowIso(), audit_type: auditType, memory_count: events.length, finding_count: findings.length, findings };
}

/** `tree-ring audit`: every memory, superseded ones included; a missing store is audited as empty. */
export function auditStore(root: string, auditType: string): AuditReport {
  parseAuditType(auditType);
  return readExisting(root, () => auditMemories([], auditType), (db) => auditMemories(listAll(db, true), auditType));
}

export function auditText(r: AuditReport): string {
  const lines = [`Tree Ring Memory audit: type=${r.audit_type} memories=${r.memory_count} findings=${r.finding_count}`];
  for (const f of r.findings) lines.push(`${f.audit_type} [${f.severity}] memory=${f.memory_id ?? '-'} related=${f.related_memory_id ?? '-'} ${f.finding} -> ${f.recommended_action}`);
  return `${lines.join('\n')}\n`;
}

// ---- maintenance --------------------------------------------------------------------------------------

export interface MaintenanceRequest {
  project: string | undefined;
  includeSuperseded: boolean;
  applyExpired: boolean;
  applySecretRedactions: boolean;
  repairFts: boolean;
}

export interface MaintenanceAction {
  action_type: 'delete_expired' | 'redact_secret' | 'review_expired_protected' | 'review_invalid_expiry';
  memory_id: string;
  severity: 'critical' | 'high' | 'medium' | 'low';
  reason: string;
  applied: boolean;
}

export interface MaintenanceFts {
  memory_rows: number;
  fts_rows: number;
  missing_fts_rows: number;
  orphan_fts_rows: number;
  repaired: boolean;
}

export interface MaintenanceReport {
  id: string;
  generated_at: string;
  memory_count: number;
  planned_action_count: number;
  applied_action_count: number;
  dry_run: boolean;
  status: string;
  actions: MaintenanceAction[];
  fts: MaintenanceFts;
}

const isDryRun = (r: MaintenanceRequest) => !(r.applyExpired || r.applySecretRedactions || r.repairFts);

/** The plan (upstream `plan_maintenance`): nothing is applied here. */
export function planMaintenance(events: readonly MemoryEvent[], request: MaintenanceRequest, now = new Date()): MaintenanceReport {
  const candidates = events.filter((e) => (request.project === undefined || e.project === request.project) && (request.includeSuperseded || e.superseded_by === null));
  const actions: MaintenanceAction[] = [];
  const act = (action_type: MaintenanceAction['action_type'], e: MemoryEvent, severity: MaintenanceAction['severity'], reason: string) =>
    actions.push({ action_type, memory_id: e.id, severity, reason, applied: false });
  for (const e of candidates) {
    if (e.expires_at !== null) {
      const at = parseRfc3339(e.expires_at);
      if (Number.isNaN(at)) act('review_invalid_expiry', e, 'medium', 'Memory has an invalid expires_at timestamp and requires review.');
      else if (at <= now.getTime()) {
        if (e.ring === 'scar' || e.ring === 'heartwood' || e.retention === 'durable' || e.retention === 'user_pinned') {
          act('review_expired_protected', e, 'high', 'Expired protected memory requires manual review before mutation.');
        } else if (e.retention === 'ephemeral' || e.retention === 'forget_after_date') {
          act('delete_expired', e, 'medium', 'Expired memory with temporary retention is eligible for deletion.');
        }
      }
    }
    if (effectiveSensitivity(e) === 'secret') act('redact_secret', e, 'critical', 'Secret-like memory content was detected and should be redacted.');
  }
  return {
    id: `maint_${stamp(now)}_${suffix12()}`,
    generated_at: nowIso(now),
    memory_count: candidates.length,
    planned_action_count: actions.length,
    applied_action_count: 0,
    dry_run: isDryRun(request),
    status: actions.length === 0 ? 'clean' : 'planned',
    actions,
    fts: { memory_rows: 0, fts_rows: 0, missing_fts_rows: 0, orphan_fts_rows: 0, repaired: false },
  };
}

function ftsReport(db: Db, repaired: boolean): MaintenanceFts {
  const n = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
  return {
    memory_rows: n('SELECT count(*) AS n FROM memories'),
    fts_rows: n('SELECT count(*) AS n FROM memory_fts'),
    missing_fts_rows: n('SELECT count(*) AS n FROM memories LEFT JOIN memory_fts ON memories.id = memory_fts.id WHERE memory_fts.id IS NULL'),
    orphan_fts_rows: n('SELECT count(*) AS n FROM memory_fts LEFT JOIN memories ON memories.id = memory_fts.id WHERE memories.id IS NULL'),
    repaired,
  };
}

function maintenanceStatus(r: MaintenanceReport): string {
  const drift = r.fts.missing_fts_rows > 0 || r.fts.orphan_fts_rows > 0;
  const unapplied = r.actions.some((a) => !a.applied);
  if (!drift && !unapplied) return r.applied_action_count > 0 || r.fts.repaired ? 'applied' : 'clean';
  return 'planned';
}

function rebuildFts(db: Db): void {
  const events = listAll(db, true);
  db.prepare('DELETE FROM memory_fts').run();
  const ins = db.prepare('INSERT INTO memory_fts (id, summary, details, tags, source_ref) VALUES (?, ?, ?, ?, ?)');
  for (const e of events) ins.run(e.id, e.summary, e.details, e.tags.join(' '), e.source.ref);
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: AgentscmError };

/**
 * `tree-ring maintain`. Without an apply flag it is a dry run over the existing store (read-only; a
 * missing store plans over nothing). With one, redactions, then deletions, then the FTS rebuild run in
 * one immediate transaction; on a coordinated store the write needs the coordinator capability.
 */
export function maintainStore(root: string, request: MaintenanceRequest, ctx: WriteContext): MaintenanceReport {
  if (isDryRun(request)) {
    return readExisting(
      root,
      () => planMaintenance([], request),
      (db) => {
        const report = planMaintenance(listAll(db, true), request);
        report.fts = ftsReport(db, false);
        report.status = maintenanceStatus(report);
        return report;
      },
    );
  }
  const db = openWritable(root);
  try {
    const report = planMaintenance(listAll(db, true), request);
    report.fts = ftsReport(db, false);
    const needsWrite = request.repairFts || report.actions.some((a) => (a.action_type === 'delete_expired' && request.applyExpired) || (a.action_type === 'redact_secret' && request.applySecretRedactions));
    if (needsWrite) {
      const outcome = writeTransaction(db, (): Outcome<number[]> => {
        const auth = authorizeCoordinatorAction(db, ctx, 'maintain', null);
        if (!auth.allowed) return { ok: false, error: auth.error };
        const applied: number[] = [];
        report.actions.forEach((a, i) => {
          if (a.action_type === 'redact_secret' && request.applySecretRedactions && redactInTransaction(db, a.memory_id)) applied.push(i);
        });
        report.actions.forEach((a, i) => {
          if (a.action_type === 'delete_expired' && request.applyExpired && deleteInTransaction(db, a.memory_id)) applied.push(i);
        });
        if (request.repairFts) rebuildFts(db);
        return { ok: true, value: applied };
      });
      if (!outcome.ok) throw outcome.error;
      for (const i of outcome.value) report.actions[i]!.applied = true;
      report.applied_action_count = report.actions.filter((a) => a.applied).length;
      report.fts = ftsReport(db, request.repairFts);
    }
    report.status = maintenanceStatus(report);
    return report;
  } finally {
    db.close();
  }
}

export function maintenanceText(r: MaintenanceReport): string {
  const lines = [
    `Tree Ring Memory maintenance: memories=${r.memory_count} planned=${r.planned_action_count} applied=${r.applied_action_count} dry_run=${r.dry_run} status=${r.status}`,
    `FTS: memories=${r.fts.memory_rows} index=${r.fts.fts_rows} missing=${r.fts.missing_fts_rows} orphan=${r.fts.orphan_fts_rows} repaired=${r.fts.repaired}`,
  ];
  for (const a of r.actions) lines.push(`${a.action_type} [${a.severity}] memory=${a.memory_id} applied=${a.applied} ${a.reason}`);
  if (r.dry_run) lines.push('Report-only: use --apply-expired, --apply-secret-redactions, or --repair-fts to apply eligible maintenance.');
  return `${lines.join('\n')}\n`;
}

// ---- consolidation ------------------------------------------------------------------------------------

export const CONSOLIDATION_PERIODS = ['daily', 'weekly', 'monthly', 'yearly', 'manual'] as const;
export type ConsolidationPeriod = (typeof CONSOLIDATION_PERIODS)[number];

export interface ConsolidationRequest {
  periodType: ConsolidationPeriod;
  periodKey: string | undefined;
  project: string | undefined;
  agentProfile: string | undefined;
  workflowId: string | undefined;
  sessionId: string | undefined;
  dryRun: boolean;
  force: boolean;
}

export interface ConsolidationOutput {
  memory: MemoryEvent;
  source_memory_ids: string[];
}

export interface ConsolidationReport {
  id: string;
  created_at: string;
  period_type: ConsolidationPeriod;
  period_key: string;
  candidate_count: number;
  source_memory_ids: string[];
  output_memory_ids: string[];
  dry_run: boolean;
  force: boolean;
  status: string;
  notes: string;
  outputs: ConsolidationOutput[];
}

export function parsePeriod(value: string): ConsolidationPeriod {
  const n = value.trim().toLowerCase();
  if (!(CONSOLIDATION_PERIODS as readonly string[]).includes(n)) throw badInput(`unsupported period_type: ${n}`, 'BAD_PERIOD_TYPE');
  return n as ConsolidationPeriod;
}

/** ISO 8601 week-numbering year and week of a UTC instant. */
function isoWeek(d: Date): [number, number] {
  const t = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  const day = t.getUTCDay() || 7;
  t.setUTCDate(t.getUTCDate() + 4 - day);
  const yearStart = Date.UTC(t.getUTCFullYear(), 0, 1);
  return [t.getUTCFullYear(), Math.ceil(((t.getTime() - yearStart) / 86_400_000 + 1) / 7)];
}

/** Upstream `period_key_for_datetime`. */
export function periodKeyFor(period: ConsolidationPeriod, d: Date): string {
  const iso = d.toISOString();
  switch (period) {
    case 'daily':
      return iso.slice(0, 10);
    case 'weekly': {
      const [y, w] = isoWeek(d);
      return `${y}-W${String(w).padStart(2, '0')}`;
    }
    case 'monthly':
      return iso.slice(0, 7);
    case 'yearly':
      return iso.slice(0, 4);
    case 'manual':
      return `manual-${`${iso.slice(0, 19)}Z`.replace(/[-:]/g, '')}`;
  }
}

function isCandidate(e: MemoryEvent, r: ConsolidationRequest, periodKey: string): boolean {
  if (e.superseded_by !== null) return false;
  if (e.event_type === 'summary' && e.source.type === 'consolidation') return false;
  if (r.project !== undefined && e.project !== r.project) return false;
  if (r.agentProfile !== undefined && e.agent_profile !== r.agentProfile) return false;
  if (r.workflowId !== undefined && e.workflow_id !== r.workflowId) return false;
  if (r.sessionId !== undefined && e.session_id !== r.sessionId) return false;
  if (effectiveSensitivity(e) === 'secret') return false;
  if (r.periodType !== 'manual') {
    const at = parseRfc3339(e.created_at);
    if (Number.isNaN(at) || periodKeyFor(r.periodType, new Date(at)) !== periodKey) return false;
  }
  return e.salience >= 0.45 || ['heartwood', 'scar', 'seed'].includes(e.ring) || e.retention === 'durable' || e.retention === 'user_pinned';
}

/** Upstream's GroupKey, in its field order; `None` sorts before any `Some`. */
function groupKey(e: MemoryEvent): Array<string | null> {
  const sens = effectiveSensitivity(e) === 'normal' ? 'normal' : 'sensitive';
  return [
    e.project,
    e.scope,
    e.scope === 'agent' ? e.agent_profile : null,
    e.scope === 'workflow' ? e.workflow_id : null,
    e.scope === 'session' ? e.session_id : null,
    e.ring,
    e.event_type,
    sens,
  ];
}

function compareKeys(a: Array<string | null>, b: Array<string | null>): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (x === null) return -1;
    if (y === null) return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

function average(values: readonly number[]): number {
  if (values.length === 0) return 0.5;
  return Math.min(1, Math.max(0, values.reduce((s, v) => s + v, 0) / values.length));
}

function uniform(values: ReadonlyArray<string | null>): string | null {
  if (values.length === 0) return null;
  return values.every((v) => v === values[0]) ? values[0]! : null;
}

function topTags(events: readonly MemoryEvent[]): string[] {
  const counts = new Map<string, number>();
  for (const e of events) for (const t of e.tags) if (classifyText(t) === 'normal') counts.set(t, (counts.get(t) ?? 0) + 1);
  const ranked = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const tags = new Set(ranked.slice(0, 5).map(([t]) => t));
  tags.add('consolidation');
  return [...tags].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function buildOutput(key: Array<string | null>, events: readonly MemoryEvent[], period: ConsolidationPeriod, periodKey: string): ConsolidationOutput {
  const [project, scope, , , , ring, eventType, bucket] = key as [string | null, string, unknown, unknown, unknown, string, string, string];
  const ids = events.map((e) => e.id);
  const sensitive = bucket === 'sensitive';
  const summary = sensitive
    ? `Consolidated ${events.length} sensitive memory group requiring review.`
    : `Consolidated ${events.length} ${eventType} memory group for project ${project ?? 'global'} in ${ring} ring.`;
  const m = newEvent(summary, 'summary');
  m.project = project;
  m.agent_profile = uniform(events.map((e) => e.agent_profile));
  m.workflow_id = uniform(events.map((e) => e.workflow_id));
  m.session_id = uniform(events.map((e) => e.session_id));
  m.operation_id = null;
  m.scope = scope;
  const conf = average(events.map((e) => e.confidence));
  m.ring = ring === 'scar' ? 'scar' : ring === 'seed' ? 'seed' : ring === 'heartwood' && conf >= 0.75 ? 'heartwood' : period === 'daily' || period === 'manual' ? 'outer' : 'inner';
  m.details = `Period: ${period}:${periodKey}; source_count=${events.length}; source_ids=${ids.join(',')}`;
  m.source = { type: 'consolidation', ref: `${period}:${periodKey}`, quote: '' };
  m.tags = topTags(events);
  m.salience = average(events.map((e) => e.salience));
  m.confidence = conf;
  m.sensitivity = sensitive ? 'private' : 'normal';
  m.retention = 'normal';
  m.links = ids.map((target) => ({ type: 'memory', target }));
  m.review = { needs_review: sensitive, review_reason: sensitive ? 'Sensitive memories contributed to this consolidation.' : null, reviewed_at: null, reviewed_by: null };
  validateEvent(m);
  return { memory: m, source_memory_ids: ids };
}

/** The plan (upstream `consolidate_memories`): one summary memory per group of candidates. */
export function consolidateMemories(events: readonly MemoryEvent[], r: ConsolidationRequest, now = new Date()): ConsolidationReport {
  const periodKey = r.periodKey ?? periodKeyFor(r.periodType, now);
  const candidates = events.filter((e) => isCandidate(e, r, periodKey)).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const base = {
    id: `con_${stamp(now)}_${suffix12()}`,
    created_at: nowIso(now),
    period_type: r.periodType,
    period_key: periodKey,
    candidate_count: candidates.length,
    source_memory_ids: candidates.map((e) => e.id),
    dry_run: r.dryRun,
    force: r.force,
  };
  if (candidates.length === 0) {
    return { ...base, output_memory_ids: [], status: r.dryRun ? 'dry_run' : 'empty', notes: 'No memories matched consolidation criteria.', outputs: [] };
  }
  const groups: Array<{ key: Array<string | null>; events: MemoryEvent[] }> = [];
  for (const e of candidates) {
    const k = groupKey(e);
    const g = groups.find((x) => compareKeys(x.key, k) === 0);
    if (g) g.events.push(e);
    else groups.push({ key: k, events: [e] });
  }
  groups.sort((a, b) => compareKeys(a.key, b.key));
  const outputs = groups.map((g) => buildOutput(g.key, g.events, r.periodType, periodKey));
  return { ...base, output_memory_ids: outputs.map((o) => o.memory.id), status: r.dryRun ? 'dry_run' : 'planned', notes: 'Consolidation plan generated.', outputs };
}

function linkTargets(e: MemoryEvent): Set<string> {
  return new Set(e.links.filter((l) => l.type === 'memory').map((l) => l.target));
}

/** Which new summary replaces each earlier one of the period under --force (upstream's pairing). */
function supersessionPairs(previous: readonly MemoryEvent[], fresh: readonly MemoryEvent[]): Array<[MemoryEvent, string]> {
  if (fresh.length === 0) return [];
  return previous.map((old, i) => {
    const oldTargets = linkTargets(old);
    let best: MemoryEvent | undefined;
    let bestOverlap = 0;
    if (oldTargets.size > 0) {
      for (const c of fresh) {
        const overlap = [...linkTargets(c)].filter((t) => oldTargets.has(t)).length;
        // max_by_key on (overlap, Reverse(id)): the largest overlap, then the smallest id; the last maximum wins ties.
        if (overlap > 0 && (overlap > bestOverlap || (overlap === bestOverlap && best !== undefined && c.id <= best.id))) {
          best = c;
          bestOverlap = overlap;
        }
      }
    }
    return [old, (best ?? fresh[i % fresh.length]!).id];
  });
}

/**
 * `tree-ring consolidate`. A dry run only reads. Otherwise the summaries, the supersession of the
 * period's earlier summaries (with --force) and the `consolidations` record are written in one
 * immediate transaction; without --force a matching earlier consolidation is reported `unchanged`.
 */
export function consolidateStore(root: string, r: ConsolidationRequest, ctx: WriteContext): ConsolidationReport {
  if (r.dryRun) return readExisting(root, () => consolidateMemories([], r), (db) => consolidateMemories(listAll(db, false), r));
  const db = openWritable(root);
  try {
    const report = consolidateMemories(listAll(db, false), r);
    if (report.candidate_count === 0) return report;
    const sourceJson = q(report.source_memory_ids);
    if (!r.force) {
      const existing = db
        .prepare("SELECT id, created_at, output_memory_ids_json FROM consolidations WHERE period_type = ? AND period_key = ? AND source_memory_ids_json = ? AND status = 'created' ORDER BY created_at DESC LIMIT 1")
        .get(report.period_type, report.period_key, sourceJson) as { id: string; created_at: string; output_memory_ids_json: string } | undefined;
      if (existing) {
        return { ...report, id: existing.id, created_at: existing.created_at, output_memory_ids: JSON.parse(existing.output_memory_ids_json) as string[], status: 'unchanged', notes: 'Matching consolidation already exists.', outputs: [] };
      }
    }
    const outcome = writeTransaction(db, (): Outcome<ConsolidationReport> => {
      const auth = authorizeCoordinatorAction(db, ctx, 'consolidate', null);
      if (!auth.allowed) return { ok: false, error: auth.error };
      const outputs = report.outputs.map((o) => o.memory);
      let pairs: Array<[MemoryEvent, string]> = [];
      if (r.force) {
        const previousIds = (db.prepare("SELECT output_memory_ids_json FROM consolidations WHERE period_type = ? AND period_key = ? AND status = 'created' ORDER BY created_at ASC").all(report.period_type, report.period_key) as Array<{ output_memory_ids_json: string }>).flatMap(
          (row) => JSON.parse(row.output_memory_ids_json) as string[],
        );
        const getRow = db.prepare('SELECT raw_json FROM memories WHERE id = ?');
        const previous = previousIds.flatMap((id) => {
          const row = getRow.get(id) as { raw_json: string } | undefined;
          return row ? [eventFromRawJson(row.raw_json)] : [];
        });
        pairs = supersessionPairs(previous, outputs);
      }
      const done: ConsolidationReport = { ...report, status: 'created', notes: 'Consolidation summaries stored.' };
      for (const e of outputs) putInTransaction(db, e);
      const update = db.prepare('UPDATE memories SET superseded_by = ?, raw_json = ? WHERE id = ?');
      for (const [old, newId] of pairs) update.run(newId, eventToJson({ ...old, superseded_by: newId }), old.id);
      db.prepare('INSERT INTO consolidations (id, created_at, period_type, period_key, source_memory_ids_json, output_memory_ids_json, status, notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
        done.id,
        done.created_at,
        done.period_type,
        done.period_key,
        sourceJson,
        q(done.output_memory_ids),
        done.status,
        done.notes,
      );
      return { ok: true, value: done };
    });
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  } finally {
    db.close();
  }
}

/** The report as upstream's serde writes it (memories in event field order, floats as `1.0`). */
export function consolidationJson(r: ConsolidationReport): string {
  const outputs = r.outputs.map((o) => `{"memory":${eventToJson(o.memory)},"source_memory_ids":${q(o.source_memory_ids)}}`).join(',');
  return (
    `{"id":${q(r.id)},"created_at":${q(r.created_at)},"period_type":${q(r.period_type)},"period_key":${q(r.period_key)},` +
    `"candidate_count":${r.candidate_count},"source_memory_ids":${q(r.source_memory_ids)},"output_memory_ids":${q(r.output_memory_ids)},` +
    `"dry_run":${r.dry_run},"force":${r.force},"status":${q(r.status)},"notes":${q(r.notes)},"outputs":[${outputs}]}`
  );
}

export function consolidationText(r: ConsolidationReport): string {
  const head = `Tree Ring Memory consolidation: type=${r.period_type} key=${r.period_key} candidates=${r.candidate_count} outputs=${r.output_memory_ids.length} status=${r.status}`;
  return r.notes === '' ? `${head}\n` : `${head}\n${r.notes}\n`;
}

