// Hand-written acceptance of the common, valid mutation requests (claim, heartbeat, cancel, reconcile,
// and result with an agent assertion), for the Hub's hot path: zod costs more per request than most of
// the mutation itself. The rule that keeps it exact: this only ever *accepts*, and only documents the
// zod schemas in mutations.ts accept too, giving the same output value. Anything it is not sure of
// (every invalid document, and the rarer valid shapes such as registered observations) is left to the
// schemas, which then decide and word the error. test/unit/fast-mutations.test.ts checks the agreement.

import { MAX_CRITERIA, MAX_EVIDENCE_DIGESTS, MAX_FINDING_CHARS, MAX_FINDINGS } from './assertion.js';
import { LEASE_MAX_MS, LEASE_MIN_MS } from './bounds.js';
import type { MutationRequest } from './mutations.js';
import { hasExactly, isCount, isHex64, isId, isIntIn, isObj, type Obj } from './fast-checks.js';
import { isRepository } from './paths.js';

const SUBJECT_KEYS = ['repository', 'profile', 'target', 'change_id', 'change_version', 'revision', 'context_digest', 'policy_epoch', 'requirement_digest', 'plan_digest'] as const;

/** A subject as SubjectSchema gives it (ops.ts), or undefined. */
export function fastSubject(v: unknown) {
  if (!isObj(v) || !hasExactly(v, SUBJECT_KEYS)) return undefined;
  const { repository, profile, target, change_id, change_version, revision, context_digest, policy_epoch, requirement_digest, plan_digest } = v;
  if (typeof repository !== 'string' || repository.length > 165 || !isRepository(repository)) return undefined;
  if (!isId(profile) || !isId(target) || !isId(change_id) || !isCount(change_version) || !isHex64(revision) || !isHex64(context_digest)) return undefined;
  if (!isCount(policy_epoch) || !isHex64(requirement_digest) || !isHex64(plan_digest)) return undefined;
  return { repository, profile, target, change_id, change_version, revision, context_digest, policy_epoch, requirement_digest, plan_digest };
}

const CLAIM_KEYS = ['operation', 'request_id', 'subject', 'task_id', 'task_digest', 'execution_operation_id', 'requested_lease_ms', 'executor_id'] as const;
const BINDING_KEYS = ['operation', 'request_id', 'task_id', 'task_digest', 'attempt_id', 'attempt_digest', 'execution_operation_id', 'executor_id', 'fence'] as const;
const HEARTBEAT_KEYS = [...BINDING_KEYS, 'requested_lease_ms'] as const;
const REASON_KEYS = [...BINDING_KEYS, 'reason'] as const;
const ASSERTION_KEYS = ['version', 'task_id', 'task_digest', 'attempt_id', 'attempt_digest', 'request_id', 'execution_operation_id', 'agent', 'executor', 'fence', 'trust_class', 'outcome', 'criteria', 'executor_provenance'] as const;
const CRITERION_KEYS = ['criterion', 'outcome', 'findings', 'evidence_digests'] as const;
const ASSERTION_OUTCOMES: ReadonlySet<unknown> = new Set(['passed', 'failed', 'uncertain']);
const CRITERION_OUTCOMES: ReadonlySet<unknown> = new Set(['passed', 'failed', 'uncertain', 'not_claimed']);

/** The fields every heartbeat, cancel and reconcile binds, or undefined. */
function binding(d: Obj) {
  const { request_id, task_id, task_digest, attempt_id, attempt_digest, execution_operation_id, executor_id, fence } = d;
  if (!isId(request_id) || !isId(task_id) || !isHex64(task_digest) || !isId(attempt_id) || !isHex64(attempt_digest) || !isId(execution_operation_id)) return undefined;
  if (executor_id !== null && !isId(executor_id)) return undefined;
  if (!isCount(fence)) return undefined;
  return { request_id, task_id, task_digest, attempt_id, attempt_digest, execution_operation_id, executor_id, fence };
}

/** A u64 as the U64 schema gives it (a bigint), for the plain cases only. */
function u64(v: unknown): bigint | undefined {
  if (typeof v === 'number') return isIntIn(v, 0, Number.MAX_SAFE_INTEGER) ? BigInt(v) : undefined;
  if (typeof v === 'bigint') return v >= 0n && v <= 18446744073709551615n ? v : undefined;
  return undefined;
}

function criterion(v: unknown) {
  if (!isObj(v) || !hasExactly(v, CRITERION_KEYS)) return undefined;
  const { criterion: id, outcome, findings, evidence_digests } = v;
  if (!isId(id) || !CRITERION_OUTCOMES.has(outcome)) return undefined;
  if (!Array.isArray(findings) || findings.length > MAX_FINDINGS || !Array.isArray(evidence_digests) || evidence_digests.length > MAX_EVIDENCE_DIGESTS) return undefined;
  for (const f of findings) if (typeof f !== 'string' || f.length > MAX_FINDING_CHARS || f.includes('\u0000')) return undefined;
  for (const e of evidence_digests) if (!isHex64(e)) return undefined;
  return { criterion: id, outcome: outcome as 'passed' | 'failed' | 'uncertain' | 'not_claimed', findings: [...(findings as string[])], evidence_digests: [...(evidence_digests as string[])] };
}

/** An agent assertion (no executor, no provenance); undefined for anything else. */
function agentAssertion(v: unknown) {
  if (!isObj(v) || !hasExactly(v, ASSERTION_KEYS)) return undefined;
  const { version, task_id, task_digest, attempt_id, attempt_digest, request_id, execution_operation_id, agent, executor, fence, trust_class, outcome, criteria, executor_provenance } = v;
  if (version !== 1 || !isId(task_id) || !isHex64(task_digest) || !isId(attempt_id) || !isHex64(attempt_digest) || !isId(request_id) || !isId(execution_operation_id)) return undefined;
  if (!isObj(agent) || !hasExactly(agent, ['owner_id', 'agent_id']) || !isId(agent.owner_id) || !isId(agent.agent_id)) return undefined;
  if (trust_class !== 'agent_assertion' || executor !== null || executor_provenance !== null || !ASSERTION_OUTCOMES.has(outcome)) return undefined;
  const f = u64(fence);
  if (f === undefined) return undefined;
  if (!Array.isArray(criteria) || criteria.length < 1 || criteria.length > MAX_CRITERIA) return undefined;
  const rows = [];
  const seen = new Set<string>();
  for (const c of criteria) {
    const row = criterion(c);
    if (!row || seen.has(row.criterion)) return undefined;
    seen.add(row.criterion);
    rows.push(row);
  }
  return {
    version: 1 as const,
    task_id,
    task_digest,
    attempt_id,
    attempt_digest,
    request_id,
    execution_operation_id,
    agent: { owner_id: agent.owner_id, agent_id: agent.agent_id },
    executor: null,
    fence: f,
    trust_class: 'agent_assertion' as const,
    outcome: outcome as 'passed' | 'failed' | 'uncertain',
    criteria: rows,
    executor_provenance: null,
  };
}

/**
 * The request as MutationRequest.parse would give it, for the common valid documents; undefined means
 * "ask the schema" (which then accepts or refuses with its own message).
 */
export function fastMutationRequest(doc: unknown): MutationRequest | undefined {
  if (!isObj(doc)) return undefined;
  switch (doc.operation) {
    case 'claim': {
      if (!hasExactly(doc, CLAIM_KEYS)) return undefined;
      const { request_id, task_id, task_digest, execution_operation_id, requested_lease_ms, executor_id } = doc;
      const s = fastSubject(doc.subject);
      if (!s || !isId(request_id) || !isId(task_id) || !isHex64(task_digest) || !isId(execution_operation_id) || !isIntIn(requested_lease_ms, LEASE_MIN_MS, LEASE_MAX_MS)) return undefined;
      if (executor_id !== null && !isId(executor_id)) return undefined;
      return { operation: 'claim', request_id, subject: s, task_id, task_digest, execution_operation_id, requested_lease_ms, executor_id };
    }
    case 'heartbeat': {
      if (!hasExactly(doc, HEARTBEAT_KEYS)) return undefined;
      const b = binding(doc);
      if (!b || !isIntIn(doc.requested_lease_ms, LEASE_MIN_MS, LEASE_MAX_MS)) return undefined;
      return { operation: 'heartbeat', ...b, requested_lease_ms: doc.requested_lease_ms };
    }
    case 'cancel':
    case 'reconcile': {
      if (!hasExactly(doc, REASON_KEYS)) return undefined;
      const b = binding(doc);
      if (!b || typeof doc.reason !== 'string' || doc.reason.length > 1024) return undefined;
      return { operation: doc.operation, ...b, reason: doc.reason };
    }
    case 'result': {
      if (!hasExactly(doc, ['operation', 'assertion'])) return undefined;
      const assertion = agentAssertion(doc.assertion);
      return assertion && { operation: 'result', assertion };
    }
    default:
      return undefined;
  }
}
