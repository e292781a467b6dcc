// Coordinated write policy. In `open` mode every write is allowed. In `coordinated` mode a process
// without the coordinator capability may only create new, non-heartwood, agent-scoped memories under
// the profile it asserts; everything else needs the capability. The capability is shown once (at
// enable/rotate) and only its domain-separated SHA-256 is stored. Every decision in coordinated mode is
// audited. Callers pass the capability in from TREE_RING_COORDINATOR_TOKEN; it never reaches an output.

import { randomUUID, timingSafeEqual } from 'node:crypto';
import { DOMAINS, domainDigestBytes, domainDigest } from '../../crypto/digest.js';
import { AgentscmError, badInput } from '../../errors.js';
import { hasControlChars, nowIso, type MemoryEvent } from '../model.js';
import { isSecretLike, secretBlocked } from '../sensitivity.js';
import { tableExists, type Db } from './schema.js';

const MAX_CONTEXT_VALUE_LENGTH = 256;
const MAX_CAPABILITY_LENGTH = 4096;

/** Who is writing. Holds only the capability's hash, never the capability. */
export interface WriteContext {
  readonly actorProfile: string | null;
  readonly capabilityHash: Buffer | null;
  readonly origin: string;
}

export interface PolicyStatus {
  mode: 'open' | 'coordinated';
  coordinator_label: string | null;
  enabled_at: string | null;
  updated_at: string;
}

export interface PolicyGrant {
  capability: string;
  status: PolicyStatus;
}

export interface AuditEvent {
  id: number;
  created_at: string;
  action: string;
  decision: string;
  reason: string;
  actor_profile: string | null;
  origin: string;
  target_memory_id: string | null;
}

function validateContextValue(field: string, value: string): void {
  if (value.trim() === '') throw badInput(`${field} cannot be blank`);
  if ([...value].length > MAX_CONTEXT_VALUE_LENGTH) throw badInput(`${field} must be at most ${MAX_CONTEXT_VALUE_LENGTH} characters`);
  if (hasControlChars(value)) throw badInput(`${field} cannot contain control characters`);
  if (isSecretLike(value)) throw secretBlocked();
}

export function capabilityHash(capability: string): Buffer {
  return domainDigestBytes(DOMAINS.treeRingCapability, Buffer.from(capability, 'utf8'));
}

export function writeContext(actorProfile: string | null, capability: string | undefined, origin: string): WriteContext {
  if (actorProfile !== null) validateContextValue('actor_profile', actorProfile);
  validateContextValue('audit origin', origin);
  let hash: Buffer | null = null;
  if (capability !== undefined) {
    if (capability === '') throw badInput('coordinator capability cannot be empty');
    if (Buffer.byteLength(capability) > MAX_CAPABILITY_LENGTH) throw badInput(`coordinator capability must be at most ${MAX_CAPABILITY_LENGTH} bytes`);
    hash = capabilityHash(capability);
  }
  return { actorProfile, capabilityHash: hash, origin };
}

function denied(message: string): AgentscmError {
  return new AgentscmError('AUTH_REJECTED', 'AUTHORIZATION_DENIED', `authorization denied: ${message}`);
}

interface PolicyRow {
  mode: 'open' | 'coordinated';
  capability_hash: Buffer | null;
}

function policyRow(db: Db): PolicyRow {
  const row = db.prepare('SELECT mode, capability_hash FROM store_policy WHERE id = 1').get() as PolicyRow | undefined;
  if (!row) throw new AgentscmError('LOCAL_STATE', 'POLICY_MISSING', 'store policy singleton row is missing');
  if (row.mode !== 'open' && row.mode !== 'coordinated') throw new AgentscmError('LOCAL_STATE', 'POLICY_CORRUPT', 'unknown store policy mode');
  return row;
}

/** Status of a store; a store whose schema predates the policy tables reads as open. */
export function policyStatus(db: Db): PolicyStatus {
  if (!tableExists(db, 'store_policy')) return { mode: 'open', coordinator_label: null, enabled_at: null, updated_at: '' };
  const row = db.prepare('SELECT mode, coordinator_label, enabled_at, updated_at FROM store_policy WHERE id = 1').get() as PolicyStatus | undefined;
  if (!row) throw new AgentscmError('LOCAL_STATE', 'POLICY_MISSING', 'store policy singleton row is missing');
  return { mode: row.mode, coordinator_label: row.coordinator_label, enabled_at: row.enabled_at, updated_at: row.updated_at };
}

export function policyAudit(db: Db, limit: number): AuditEvent[] {
  if (!tableExists(db, 'authorization_audit')) return [];
  return db
    .prepare('SELECT id, created_at, action, decision, reason, actor_profile, origin, target_memory_id FROM authorization_audit ORDER BY id DESC LIMIT ?')
    .all(limit) as AuditEvent[];
}

/** Safe ids are kept; anything else (control chars, over-long, secret-like) is stored as a hash. */
export function normalizeAuditTarget(value: string): string {
  const safe = value.length > 0 && value.length <= MAX_CONTEXT_VALUE_LENGTH && /^[A-Za-z0-9_.:-]+$/.test(value) && !isSecretLike(value);
  return safe ? value : `sha256:${domainDigest(DOMAINS.treeRingAuditTarget, Buffer.from(value, 'utf8'))}`;
}

function insertAudit(db: Db, ctx: WriteContext, action: string, decision: 'allowed' | 'denied', reason: string, target: string | null): void {
  db.prepare(
    'INSERT INTO authorization_audit (created_at, action, decision, reason, actor_profile, origin, target_memory_id) VALUES (?, ?, ?, ?, ?, ?, ?)',
  ).run(nowIso(), action, decision, reason, ctx.actorProfile, ctx.origin, target === null ? null : normalizeAuditTarget(target));
}

/**
 * The outcome of an authorization check. A denial is returned, not thrown, so that the caller can
 * commit the audit row before failing.
 */
export type Authorization = { allowed: true } | { allowed: false; error: AgentscmError };

function authorizeWithPolicy(db: Db, ctx: WriteContext, action: string, target: string | null, policy: PolicyRow): Authorization {
  const expected = policy.capability_hash;
  const supplied = ctx.capabilityHash;
  if (supplied && expected && expected.length === 32 && timingSafeEqual(supplied, expected)) {
    insertAudit(db, ctx, action, 'allowed', 'valid_coordinator_capability', target);
    return { allowed: true };
  }
  insertAudit(db, ctx, action, 'denied', supplied ? 'invalid_coordinator_capability' : 'missing_coordinator_capability', target);
  return { allowed: false, error: denied('coordinator capability required by coordinated store policy') };
}

/** Protected actions (shared writes, import, forget, supersede, policy changes) in coordinated mode. */
export function authorizeCoordinatorAction(db: Db, ctx: WriteContext, action: string, target: string | null): Authorization {
  const policy = policyRow(db);
  if (policy.mode === 'open') return { allowed: true };
  return authorizeWithPolicy(db, ctx, action, target, policy);
}

function unprivilegedCreateAllowed(ctx: WriteContext, e: MemoryEvent): boolean {
  return e.scope === 'agent' && e.ring !== 'heartwood' && ctx.actorProfile !== null && ctx.actorProfile === e.agent_profile;
}

/** New events: a worker may add its own agent-scoped, non-heartwood memories; the rest is protected. */
export function authorizeEventCreates(db: Db, ctx: WriteContext, action: string, events: readonly MemoryEvent[]): Authorization {
  const policy = policyRow(db);
  if (policy.mode === 'open' || events.length === 0) return { allowed: true };
  const seen = new Set<string>();
  const exists = db.prepare('SELECT 1 FROM memories WHERE id = ?');
  let protectedTarget: string | null = null;
  for (const e of events) {
    const repeated = seen.has(e.id);
    seen.add(e.id);
    if (exists.get(e.id) !== undefined || repeated || !unprivilegedCreateAllowed(ctx, e)) {
      protectedTarget = e.id;
      break;
    }
  }
  if (protectedTarget === null) return { allowed: true };
  return authorizeWithPolicy(db, ctx, action, protectedTarget, policy);
}

function validateLabel(label: string | null): void {
  if (label !== null) validateContextValue('coordinator label', label);
}

function generatedCapability(): string {
  return `trcap_v1_${randomUUID().replaceAll('-', '')}${randomUUID().replaceAll('-', '')}`;
}

export function enablePolicy(db: Db, ctx: WriteContext, label: string | null): PolicyGrant | AgentscmError {
  validateLabel(label);
  if (policyRow(db).mode === 'coordinated') {
    insertAudit(db, ctx, 'policy_enable', 'denied', 'coordinated_policy_already_enabled', null);
    return denied('coordinated policy is already enabled; rotate the coordinator capability instead');
  }
  const capability = generatedCapability();
  const now = nowIso();
  db.prepare("UPDATE store_policy SET mode = 'coordinated', capability_hash = ?, coordinator_label = ?, enabled_at = ?, updated_at = ? WHERE id = 1").run(
    capabilityHash(capability),
    label,
    now,
    now,
  );
  insertAudit(db, ctx, 'policy_enable', 'allowed', 'coordinated_policy_enabled', null);
  return { capability, status: policyStatus(db) };
}

export function rotatePolicy(db: Db, ctx: WriteContext, label: string | null): PolicyGrant | AgentscmError {
  validateLabel(label);
  const policy = policyRow(db);
  if (policy.mode === 'open') {
    insertAudit(db, ctx, 'policy_rotate', 'denied', 'coordinated_policy_not_enabled', null);
    return denied('coordinated policy must be enabled before rotating its capability');
  }
  const auth = authorizeWithPolicy(db, ctx, 'policy_rotate', null, policy);
  if (!auth.allowed) return auth.error;
  const capability = generatedCapability();
  db.prepare("UPDATE store_policy SET capability_hash = ?, coordinator_label = COALESCE(?, coordinator_label), updated_at = ? WHERE id = 1 AND mode = 'coordinated'").run(
    capabilityHash(capability),
    label,
    nowIso(),
  );
  return { capability, status: policyStatus(db) };
}

export function disablePolicy(db: Db, ctx: WriteContext): PolicyStatus | AgentscmError {
  // Disabling needs the current capability, and an open store has none to present: refuse like rotate,
  // but write nothing (no audit row, no updated_at), so that a repeated disable leaves the store as it was.
  if (policyRow(db).mode === 'open') return denied('coordinated policy is not enabled; there is nothing to disable');
  const auth = authorizeCoordinatorAction(db, ctx, 'policy_disable', null);
  if (!auth.allowed) return auth.error;
  db.prepare("UPDATE store_policy SET mode = 'open', capability_hash = NULL, coordinator_label = NULL, enabled_at = NULL, updated_at = ? WHERE id = 1").run(nowIso());
  return policyStatus(db);
}
