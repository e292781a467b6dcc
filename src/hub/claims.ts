// Claims, leases, fences, idempotent mutations, results and recovery: the journal as the durable
// scheduler and recovery record (seed 000, "Identity and requests", "Trust and criterion results",
// "Recovery", "Phase-two local state machine").
//
// Every mutation runs in one journal transaction opened with BEGIN IMMEDIATE (in the Hub: its own
// savepoint inside a group-commit batch's BEGIN IMMEDIATE transaction, see batch.ts), so claims of one
// logical task serialize (also across processes sharing the data dir). Inside it, in order: the idempotency row
// of (owner, agent, request_id) is checked first (an identical committed retry returns its retained
// outcome even after the subject, policy or enrollment went stale), then the current authority state is
// rechecked through the Hub's authority connection, then the journal rows and the idempotency row are
// written together. A refused request leaves no row: it had no effect, so recovery reports a
// conclusive rejection for it.
//
// `claimAttempt` is the reusable claim core: `claim` (kind 'agent') uses it here, `collector_claim`
// (kind 'collector') builds on it with its own descriptor.

import { randomBytes } from 'node:crypto';
import type { Task } from '../core/authority/plan.js';
import type { RequirementStep, Subject, TokenActor } from '../core/authority/types.js';
import { canonicalJson, canonicalJsonBytes, canonicalSortedJson, parseStrictJson, quote, type JsonValue } from '../core/canonical/json.js';
import { observationDigest, type TaskResultAssertion } from '../core/contract/assertion.js';
import { CAPABILITY } from '../core/contract/common.js';
import { PRIOR_SCAN_LIMIT, type MutationKind } from '../core/contract/mutations.js';
import { DOMAINS, domainDigest, domainDigestOfText, type Domain } from '../core/crypto/digest.js';
import { parsePublicKeyHex, parseSignatureHex, verifyStrict } from '../core/crypto/ed25519.js';
import { HubError, invalidRequest, notFoundError } from './errors.js';
import type { AttemptChange, AttemptRow, AuthorityStore, JournalStore, RequestRow } from '../core/storage/stores.js';

const ENVELOPE = { capability: CAPABILITY, schema_version: 1 } as const;

const REQUEST_DOMAINS: Record<MutationKind, Domain> = {
  claim: DOMAINS.requestClaim,
  heartbeat: DOMAINS.requestHeartbeat,
  cancel: DOMAINS.requestCancel,
  reconcile: DOMAINS.requestReconcile,
  result: DOMAINS.requestResult,
  collector_claim: DOMAINS.requestCollectorClaim,
  collector_finalize: DOMAINS.requestCollectorFinalize,
  reconcile_collector_finalization: DOMAINS.requestReconcileFinalization,
};

const conflict = (code: string, message: string) => new HubError(409, code, message);

// ---- canonical request identity --------------------------------------------------------------------

/**
 * The canonical request digest: domain-separated by action, over the authenticated owner and agent and
 * the request document with sorted keys. A request id is bound to exactly these bytes.
 */
export function requestDigest(kind: MutationKind, actor: TokenActor, request: JsonValue): string {
  // canonicalJson({ owner_id, agent_id, request: <request with sorted keys> }), the request encoded in
  // one pass.
  const text = `{"owner_id":${quote(actor.owner_id)},"agent_id":${quote(actor.agent_id)},"request":${canonicalSortedJson(request)}}`;
  return domainDigestOfText(REQUEST_DOMAINS[kind], text);
}

function lookupRequest(j: JournalStore, actor: TokenActor, requestId: string): RequestRow | undefined {
  return j.requestRow(actor.owner_id, actor.agent_id, requestId);
}

/**
 * The retained outcome of an identical committed request, or undefined when the id is unused. The same
 * id with other bytes, or of another kind, is a conflict.
 */
export function retainedOutcome(j: JournalStore, actor: TokenActor, kind: MutationKind, requestId: string, digest: string): JsonValue | undefined {
  const row = lookupRequest(j, actor, requestId);
  if (!row) return undefined;
  if (row.kind !== kind) throw conflict('request_id_kind_conflict', `request_id was already used for a ${row.kind} request`);
  if (row.request_digest !== digest) throw conflict('request_id_conflict', 'request_id was already used with different request bytes');
  const doc = parseStrictJson(row.response, { maxBytes: 1 << 20, what: 'retained outcome' }) as Record<string, JsonValue>;
  return { ...doc, replayed: true };
}

/**
 * The encoded text of answers whose bytes commitRequest retained, so that the answer sent is encoded
 * once: the same canonical text is stored and sent. Answers are never changed after they are retained.
 */
const retainedTexts = new WeakMap<object, string>();

/** The text commitRequest retained for this answer object, if any (what outputJson would give). */
export function retainedText(answer: JsonValue): string | undefined {
  return typeof answer === 'object' && answer !== null ? retainedTexts.get(answer) : undefined;
}

/**
 * Records the text of an answer that is sent again unchanged (outputJson of it), so that it is encoded
 * once. The answer must never be changed afterwards.
 */
export function keepText(answer: JsonValue, text: string): void {
  if (typeof answer === 'object' && answer !== null) retainedTexts.set(answer, text);
}

export function commitRequest(j: JournalStore, actor: TokenActor, kind: MutationKind, requestId: string, digest: string, taskId: string, attemptId: string | null, response: JsonValue, now: number): void {
  const text = canonicalJson(response);
  j.insertRequest({
    owner_id: actor.owner_id,
    agent_id: actor.agent_id,
    request_id: requestId,
    kind,
    request_digest: digest,
    task_id: taskId,
    attempt_id: attemptId,
    response: Buffer.from(text, 'utf8'),
    created_at: now,
  });
  if (typeof response === 'object' && response !== null) retainedTexts.set(response, text);
}

// ---- retained tasks and attempts -------------------------------------------------------------------

/** A task as the journal retained it at claim time: its canonical binding decoded. */
export interface RetainedTask {
  readonly task_id: string;
  readonly task_digest: string;
  readonly subject: Subject;
  readonly step: RequirementStep;
}

export function retainedTask(j: JournalStore, taskId: string): RetainedTask | undefined {
  const row = j.taskRow(taskId);
  if (!row) return undefined;
  return j.decodeOnce(retainedKey(row.task_id, row.task_digest), row.canonical, (canonical) => decodeRetainedTask(row.task_id, row.task_digest, canonical));
}

/**
 * Decodes, before its claim's batch runs, what retainedTask will decode from the row that claim writes
 * (the task's own canonical bytes): its later heartbeat and result then find it decoded.
 */
export function predecodeRetainedTask(j: JournalStore, task: Task): void {
  j.decodeOnce(retainedKey(task.task_id, task.task_digest), task.canonical, (canonical) => decodeRetainedTask(task.task_id, task.task_digest, canonical));
}

const retainedKey = (taskId: string, taskDigest: string): string => `task\0${taskId}\0${taskDigest}`;

function decodeRetainedTask(taskId: string, taskDigest: string, canonical: Buffer): RetainedTask {
  const b = parseStrictJson(canonical, { maxBytes: 1 << 20, what: 'retained task' }) as Record<string, JsonValue>;
  // The stored bytes must still hash to the stored digest: an integrity check before any use.
  if (domainDigest(DOMAINS.task, canonical) !== taskDigest) throw new HubError(500, 'journal_integrity', 'a retained task does not match its digest');
  const step = {
    id: b.step_id,
    skill: b.skill,
    action_class: b.action_class,
    required: b.required,
    depends_on: b.depends_on,
    summary: b.summary,
    criteria: b.criteria,
    references: b.references,
  } as unknown as RequirementStep;
  return { task_id: taskId, task_digest: taskDigest, subject: b.subject as unknown as Subject, step };
}

/** The attempt as issued (WorkflowTaskAttempt) plus its journal state. */
export function attemptWire(a: AttemptRow, j?: JournalStore): JsonValue {
  const decode = (b: Buffer) => parseStrictJson(b, { maxBytes: 1 << 20, what: 'retained attempt' }) as Record<string, JsonValue>;
  const c = j ? j.decodeOnce(`attempt\0${a.attempt_id}`, a.canonical, decode) : decode(a.canonical);
  return {
    task_id: a.task_id,
    task_digest: c.task_digest!,
    attempt_id: a.attempt_id,
    attempt_digest: a.attempt_digest,
    claim_request_id: a.claim_request_id,
    execution_operation_id: a.execution_operation_id,
    kind: a.kind,
    agent: { owner_id: a.owner_id, agent_id: a.agent_id },
    executor: c.executor!,
    fence: a.fence,
    lease_ms: a.lease_ms,
    lease_expires_at: a.lease_expires_at,
    state: a.state,
    outcome: a.outcome,
    superseded_by_fence: a.superseded_by_fence,
  };
}

/**
 * Unresolved attempts of older subjects for the same repository, Change, profile and step: the newest
 * retained task identities first, at most PRIOR_SCAN_LIMIT of them. An attempt is unresolved while it is
 * leased (live or expired) or cancelled: only a result or explicit reconciliation resolves it.
 */
export function priorUnresolved(j: JournalStore, s: Subject, stepId: string, exceptTaskId: string): string | undefined {
  return j.priorUnresolvedTask(s, stepId, exceptTaskId, PRIOR_SCAN_LIMIT);
}

/**
 * Whether a passing attempt's registered evidence still counts: its registration must be the current
 * one of that executor (not revoked, not replaced by a newer epoch). Revocation wins over retained
 * evidence; re-enrollment does not rehabilitate it.
 */
export function evidenceCurrent(authority: AuthorityStore, a: AttemptRow): boolean {
  if (a.registration_id === null) return true;
  const e = authority.getEnrollment(a.registration_id);
  if (!e || e.revoked_at !== null) return false;
  return authority.currentRegistration(e.repository, e.profile, e.step_id, e.executor_id)?.registration_id === e.registration_id;
}

function subjectCurrent(authority: AuthorityStore, s: Subject): boolean {
  return authority.resolveSubject(s)?.current === true;
}

const isCollectorStep = (s: RequirementStep) => s.action_class === 'command_collector' || s.action_class === 'review_collector';

// ---- claim -----------------------------------------------------------------------------------------

export interface ClaimOptions {
  readonly kind: 'agent' | 'collector';
  readonly request_id: string;
  /** requestDigest(kind === 'agent' ? 'claim' : 'collector_claim', actor, request body). */
  readonly request_digest: string;
  readonly execution_operation_id: string;
  readonly requested_lease_ms: number;
  readonly executor_id: string | null;
  readonly now: number;
  /**
   * Called inside the transaction after the attempt row is written and before the idempotency row is:
   * extra fields for the answer (e.g. a collector descriptor). Throwing rolls the claim back.
   */
  readonly extend?: (attempt: AttemptRow) => Record<string, JsonValue>;
}

/** The ClaimOptions that a claim or collector_claim request itself names, with its digest, as of now. */
export function requestedClaim(
  req: { readonly request_id: string; readonly execution_operation_id: string; readonly requested_lease_ms: number; readonly executor_id: string | null },
  digest: string,
): Pick<ClaimOptions, 'request_id' | 'request_digest' | 'execution_operation_id' | 'requested_lease_ms' | 'executor_id' | 'now'> {
  return {
    request_id: req.request_id,
    request_digest: digest,
    execution_operation_id: req.execution_operation_id,
    requested_lease_ms: req.requested_lease_ms,
    executor_id: req.executor_id,
    now: Date.now(),
  };
}

/**
 * The claim core. Runs in one BEGIN IMMEDIATE transaction: retained identical retry, current subject,
 * step class, no live or unresolved attempt, completed dependencies, no unresolved older subject,
 * current executor registration, then a fresh attempt with the next fence and a lease no longer than
 * requested. Answers the MutationAnswer document (plus `extend`'s fields).
 */
export function claimAttempt(journal: JournalStore, authority: AuthorityStore, actor: TokenActor, task: Task, opts: ClaimOptions): JsonValue {
  const kind: MutationKind = opts.kind === 'agent' ? 'claim' : 'collector_claim';
  return journal.immediate((): JsonValue => {
      const replay = retainedOutcome(journal, actor, kind, opts.request_id, opts.request_digest);
      if (replay) return replay;
      const s = task.subject;
      if (!subjectCurrent(authority, s)) throw conflict('subject_not_current', 'the subject is no longer current: checkpoint gives a new subject');
      const step = task.step;
      if (step.action_class === 'controller_only') throw conflict('controller_only_step', 'a controller-only step cannot be claimed');
      if (opts.kind === 'agent' && isCollectorStep(step)) throw conflict('collector_step', 'a collector step is claimed with collector_claim');
      if (opts.kind === 'collector' && !isCollectorStep(step)) throw conflict('not_a_collector_step', 'collector_claim needs a collector step');

      const latest = journal.latestAttempt(task.task_id);
      if (latest && latest.state !== 'replaced') {
        if (latest.state === 'leased' && opts.now < latest.lease_expires_at) throw conflict('attempt_in_progress', 'the task is claimed under a live lease');
        if (latest.state === 'leased') throw conflict('attempt_unresolved', 'the lease expired but the attempt is unresolved: reconcile it first');
        if (latest.state === 'cancelled') throw conflict('attempt_unresolved', 'the attempt was cancelled but is unresolved: reconcile it first');
        throw conflict('task_finished', 'the task already has a finished attempt: a new checkpoint gives fresh task ids');
      }

      const tasks = authority.tasksFor(s);
      for (const dep of step.depends_on) {
        const d = tasks.find((t) => t.step.id === dep);
        const a = d && journal.latestAttempt(d.task_id);
        if (!a || a.state !== 'finished' || a.outcome !== 'passed' || !evidenceCurrent(authority, a)) {
          throw conflict('dependency_not_satisfied', `dependency ${dep} has not succeeded`);
        }
      }
      const prior = priorUnresolved(journal, s, step.id, task.task_id);
      if (prior !== undefined) throw conflict('prior_subject_unresolved', `an older subject's attempt of this step is unresolved: reconcile task ${prior}`);

      let executor: JsonValue = null;
      let registration: { id: string; epoch: number } | null = null;
      if (opts.executor_id !== null) {
        const e = authority.currentRegistration(s.repository, s.profile, step.id, opts.executor_id);
        if (!e) throw conflict('enrollment_not_current', 'the executor has no current enrollment for this step');
        executor = { registration_id: e.registration_id, executor_id: e.executor_id, registration_epoch: e.registration_epoch, verification_key_id: e.verification_key_id };
        registration = { id: e.registration_id, epoch: e.registration_epoch };
      }

      const fence = latest ? (latest.superseded_by_fence ?? latest.fence + 1) : 1;
      const leaseMs = opts.requested_lease_ms;
      const attemptId = `att-${randomHex16()}`;
      const issued = {
        version: 1,
        task_id: task.task_id,
        task_digest: task.task_digest,
        attempt_id: attemptId,
        claim_request_id: opts.request_id,
        execution_operation_id: opts.execution_operation_id,
        kind: opts.kind,
        agent: { owner_id: actor.owner_id, agent_id: actor.agent_id },
        executor,
        fence,
        lease_ms: leaseMs,
        issued_at: opts.now,
      };
      const canonical = canonicalJsonBytes(issued);
      // What attemptWire would decode from these bytes is the object they were encoded from.
      journal.decodeOnce(`attempt\0${attemptId}`, canonical, () => issued);
      const attemptDigest = domainDigest(DOMAINS.attempt, canonical);
      journal.retainTask(task, opts.now);
      // The row as inserted (all of its columns), not read back: better-sqlite3 builds a wide row slowly.
      const row: AttemptRow = {
        attempt_id: attemptId,
        task_id: task.task_id,
        attempt_digest: attemptDigest,
        claim_request_id: opts.request_id,
        execution_operation_id: opts.execution_operation_id,
        owner_id: actor.owner_id,
        agent_id: actor.agent_id,
        registration_id: registration?.id ?? null,
        registration_epoch: registration?.epoch ?? null,
        kind: opts.kind,
        executor_id: opts.executor_id,
        fence,
        lease_ms: leaseMs,
        lease_expires_at: opts.now + leaseMs,
        state: 'leased',
        outcome: null,
        outcome_code: null,
        superseded_by_fence: null,
        canonical,
        created_at: opts.now,
        updated_at: opts.now,
      };
      journal.insertAttempt(row);
      const answer: Record<string, JsonValue> = {
        ...ENVELOPE,
        operation: kind === 'claim' ? 'claim' : 'collector_claim',
        request_id: opts.request_id,
        request_digest: opts.request_digest,
        replayed: false,
        attempt: attemptWire(row, journal),
        supersession: null,
        retained: null,
        ...(opts.extend ? opts.extend(row) : {}),
      };
      commitRequest(journal, actor, kind, opts.request_id, opts.request_digest, task.task_id, attemptId, answer, opts.now);
      return answer;
    });
}

/** 16 random bytes as hex, cut from a pooled CSPRNG draw (one draw per 256 ids). */
let randomPool = Buffer.alloc(0);
let randomAt = 0;
function randomHex16(): string {
  if (randomAt + 16 > randomPool.length) {
    randomPool = randomBytes(4096);
    randomAt = 0;
  }
  randomAt += 16;
  return randomPool.toString('hex', randomAt - 16, randomAt);
}

// ---- heartbeat, cancel, reconcile ------------------------------------------------------------------

/**
 * Updates the attempt row read earlier in this same transaction and answers the row as it now is,
 * built from the row and the change rather than read back (better-sqlite3 builds a wide row slowly).
 */
function updateAttempt(j: JournalStore, attempt: AttemptRow, change: AttemptChange): AttemptRow {
  // The row was read in this transaction and nothing else writes the journal meanwhile.
  if (j.updateAttempt(attempt.attempt_id, change) !== 1) throw new Error('the attempt row changed under its transaction');
  return { ...attempt, ...change };
}

export interface AttemptBinding {
  readonly task_id: string;
  readonly task_digest: string;
  readonly attempt_id: string;
  readonly attempt_digest: string;
  readonly execution_operation_id: string;
  readonly executor_id: string | null;
  readonly fence: number;
}

export interface Scope {
  readonly repository: string;
  readonly profile: string;
}

/** Loads the exact bound attempt and its retained task; every binding field must match. */
function boundAttempt(j: JournalStore, scope: Scope, b: AttemptBinding): { task: RetainedTask; attempt: AttemptRow } {
  const task = retainedTask(j, b.task_id);
  if (!task || task.subject.repository !== scope.repository || task.subject.profile !== scope.profile) throw notFoundError('task_not_found', 'no such claimed task in this repository and profile');
  const attempt = j.attempt(b.attempt_id);
  if (!attempt || attempt.task_id !== task.task_id) throw notFoundError('attempt_not_found', 'no such attempt of this task');
  if (task.task_digest !== b.task_digest) throw conflict('task_digest_mismatch', 'the task digest does not match the retained task');
  if (attempt.attempt_digest !== b.attempt_digest) throw conflict('attempt_digest_mismatch', 'the attempt digest does not match the retained attempt');
  // An old fence never touches a replacement: the fence must be the attempt's own, and a replaced
  // attempt's fence is stale by definition.
  if (attempt.fence !== b.fence || attempt.state === 'replaced') throw conflict('stale_fence', 'the fence is stale: the attempt was superseded');
  if (attempt.execution_operation_id !== b.execution_operation_id || attempt.executor_id !== b.executor_id) {
    throw conflict('binding_mismatch', 'the execution identity or executor does not match the attempt');
  }
  return { task, attempt };
}

function mutationAnswer(j: JournalStore, kind: MutationKind, requestId: string, digest: string, a: AttemptRow, extra: { supersession?: JsonValue; retained?: JsonValue } = {}): Record<string, JsonValue> {
  return {
    ...ENVELOPE,
    operation: kind,
    request_id: requestId,
    request_digest: digest,
    replayed: false,
    attempt: attemptWire(a, j),
    supersession: extra.supersession ?? null,
    retained: extra.retained ?? null,
  };
}

export interface MutationInput extends AttemptBinding {
  readonly kind: 'heartbeat' | 'cancel' | 'reconcile';
  readonly request_id: string;
  readonly request_digest: string;
  readonly requested_lease_ms?: number;
  readonly now: number;
}

export function mutateAttempt(journal: JournalStore, authority: AuthorityStore, actor: TokenActor, scope: Scope, m: MutationInput): JsonValue {
  return journal.immediate((): JsonValue => {
      const replay = retainedOutcome(journal, actor, m.kind, m.request_id, m.request_digest);
      if (replay) return replay;
      const { task, attempt } = boundAttempt(journal, scope, m);
      const holder = attempt.owner_id === actor.owner_id && attempt.agent_id === actor.agent_id;
      let supersession: JsonValue = null;
      let updated: AttemptRow;
      switch (m.kind) {
        case 'heartbeat': {
          if (!holder) throw conflict('not_attempt_holder', 'only the agent holding the attempt may heartbeat it');
          if (attempt.state !== 'leased') throw conflict('attempt_not_leased', `the attempt is ${attempt.state}`);
          if (m.now >= attempt.lease_expires_at) throw conflict('lease_expired', 'the lease expired: expiry is not termination, reconcile the attempt');
          if (!subjectCurrent(authority, task.subject)) throw conflict('subject_not_current', 'the subject is no longer current');
          if (!evidenceCurrent(authority, attempt)) throw conflict('enrollment_not_current', 'the attempt\'s executor enrollment is no longer current');
          const ms = Math.min(m.requested_lease_ms ?? attempt.lease_ms, attempt.lease_ms);
          updated = updateAttempt(journal, attempt, { lease_expires_at: m.now + ms, updated_at: m.now });
          break;
        }
        case 'cancel':
          if (!holder) throw conflict('not_attempt_holder', 'only the agent holding the attempt may cancel it');
          if (attempt.state !== 'leased') throw conflict('attempt_not_leased', `the attempt is ${attempt.state}`);
          updated = updateAttempt(journal, attempt, { state: 'cancelled', outcome: 'uncertain', outcome_code: 'attempt_cancelled', updated_at: m.now });
          break;
        case 'reconcile': {
          // Authorized reconciliation: any agent of the attempt's owner, even after the subject went
          // stale or the executor was revoked, as long as the Change still exists in the authority.
          if (attempt.owner_id !== actor.owner_id) throw conflict('not_attempt_owner', 'only the attempt\'s owner may reconcile it');
          if (attempt.state === 'finished') throw conflict('attempt_finished', 'a finished attempt needs no reconciliation');
          if (!authority.getChangeVersion(task.subject.repository, task.subject.change_id, task.subject.change_version)) throw notFoundError('subject_not_found', 'the Change no longer exists');
          const newFence = attempt.fence + 1;
          updated = updateAttempt(journal, attempt, { state: 'replaced', superseded_by_fence: newFence, updated_at: m.now });
          supersession = { old_fence: attempt.fence, new_fence: newFence };
          break;
        }
      }
      const answer = mutationAnswer(journal, m.kind, m.request_id, m.request_digest, updated, { supersession });
      commitRequest(journal, actor, m.kind, m.request_id, m.request_digest, task.task_id, attempt.attempt_id, answer, m.now);
      return answer;
    });
}

// ---- result ----------------------------------------------------------------------------------------

/**
 * Task-aware validation of a TaskResultAssertion against its retained task (the schema already refused
 * duplicates): exactly one row per criterion, controller-only rows not_claimed, and a pass needs at least
 * one eligible required criterion and every eligible required row passed.
 */
export function checkCriteria(step: RequirementStep, a: TaskResultAssertion): void {
  const byId = new Map(step.criteria.map((c) => [c.id, c]));
  for (const row of a.criteria) {
    const c = byId.get(row.criterion);
    if (!c) throw invalidRequest(`unknown criterion ${row.criterion}`);
    if (c.controller_only && row.outcome !== 'not_claimed') throw new HubError(400, 'controller_only_criterion', `criterion ${c.id} is controller-only: its row must be not_claimed`);
  }
  const given = new Set(a.criteria.map((r) => r.criterion));
  const omitted = step.criteria.find((c) => !given.has(c.id));
  if (omitted) throw invalidRequest(`criterion ${omitted.id} is omitted: the assertion carries one row per task criterion`);
  if (a.outcome === 'passed') {
    const eligible = a.criteria.filter((r) => {
      const c = byId.get(r.criterion)!;
      return c.required && !c.controller_only;
    });
    if (eligible.length === 0) throw new HubError(400, 'no_eligible_criterion', 'a pass needs at least one eligible required criterion');
    if (eligible.some((r) => r.outcome !== 'passed')) throw invalidRequest('a pass needs every eligible required criterion passed');
  }
}

/** The bytes an assertion is retained as: its canonical form (sorted keys). */
export const assertionBody = (a: TaskResultAssertion): Buffer => Buffer.from(canonicalSortedJson(a as unknown as JsonValue), 'utf8');

/** `body` is assertionBody(a), which depends only on the request: computed before the batch. */
export function submitResult(journal: JournalStore, authority: AuthorityStore, actor: TokenActor, scope: Scope, a: TaskResultAssertion, digest: string, body: Buffer, now: number): JsonValue {
  return journal.immediate((): JsonValue => {
      const replay = retainedOutcome(journal, actor, 'result', a.request_id, digest);
      if (replay) return replay;
      if (a.agent.owner_id !== actor.owner_id || a.agent.agent_id !== actor.agent_id) throw conflict('agent_mismatch', 'the assertion names another agent than the authenticated one');
      const fence = a.fence > BigInt(Number.MAX_SAFE_INTEGER) ? -1 : Number(a.fence);
      const { task, attempt } = boundAttempt(journal, scope, { ...a, executor_id: attempt_executor(a), fence });
      if (attempt.owner_id !== actor.owner_id || attempt.agent_id !== actor.agent_id) throw conflict('not_attempt_holder', 'only the agent holding the attempt may submit its result');
      if (attempt.state !== 'leased') throw conflict('attempt_not_leased', `the attempt is ${attempt.state}`);
      if (now >= attempt.lease_expires_at) throw conflict('lease_expired', 'the lease expired: reconcile the attempt');
      if (!subjectCurrent(authority, task.subject)) throw conflict('subject_not_current', 'the subject is no longer current');
      if (task.step.action_class === 'controller_only') throw conflict('controller_only_step', 'results for a controller-only step are refused');
      checkCriteria(task.step, a);

      let obsDigest: string | null = null;
      if (a.trust_class === 'registered_executor_observation') {
        const ex = a.executor!;
        const c = parseStrictJson(attempt.canonical, { maxBytes: 1 << 20, what: 'retained attempt' }) as Record<string, JsonValue>;
        const bound = c.executor as Record<string, JsonValue> | null;
        if (!bound || bound.registration_id !== ex.registration_id || BigInt(bound.registration_epoch as number) !== ex.registration_epoch || bound.verification_key_id !== ex.verification_key_id) {
          throw conflict('binding_mismatch', 'the observation\'s executor is not the attempt\'s executor');
        }
        // The current registration, looked up now: revocation or a newer epoch wins.
        const e = authority.currentRegistration(task.subject.repository, task.subject.profile, task.step.id, ex.executor_id);
        if (!e || e.registration_id !== ex.registration_id || BigInt(e.registration_epoch) !== ex.registration_epoch || e.verification_key_id !== ex.verification_key_id) {
          throw conflict('enrollment_not_current', 'the executor\'s enrollment is revoked or no longer current');
        }
        const p = a.executor_provenance;
        if (!p) throw invalidRequest('a registered observation carries executor_provenance');
        obsDigest = observationDigest(a);
        if (p.observation_digest !== obsDigest) throw new HubError(400, 'observation_digest_mismatch', 'executor_provenance.observation_digest is not the observation digest');
        if (!verifyStrict(parseSignatureHex(p.signature), Buffer.from(obsDigest, 'hex'), parsePublicKeyHex(e.public_key))) {
          throw new HubError(400, 'signature_invalid', 'the observation signature does not verify under the enrolled key');
        }
      }

      // Retained as nonpassing material. Only a registered observation of an observation step that
      // passes its criteria completes the step for graph progression; it never creates a receipt.
      let outcome: 'passed' | 'failed' | 'uncertain';
      let code: string | null;
      if (a.outcome === 'failed') [outcome, code] = ['failed', 'result_failed'];
      else if (a.outcome === 'uncertain') [outcome, code] = ['uncertain', 'result_uncertain'];
      else if (a.trust_class === 'registered_executor_observation' && task.step.action_class === 'observation') [outcome, code] = ['passed', null];
      else [outcome, code] = ['failed', 'assertion_nonpassing'];

      journal.insertAssertion({
        request_id: a.request_id,
        owner_id: actor.owner_id,
        agent_id: actor.agent_id,
        task_id: task.task_id,
        attempt_id: attempt.attempt_id,
        fence: attempt.fence,
        registration_id: a.executor?.registration_id ?? null,
        trust_class: a.trust_class,
        outcome: a.outcome,
        observation_digest: obsDigest,
        body,
        created_at: now,
      });
      const updated = updateAttempt(journal, attempt, { state: 'finished', outcome, outcome_code: code, updated_at: now });
      const retained = { trust_class: a.trust_class, asserted_outcome: a.outcome, observation_digest: obsDigest, passing: false };
      const answer = mutationAnswer(journal, 'result', a.request_id, digest, updated, { retained });
      commitRequest(journal, actor, 'result', a.request_id, digest, task.task_id, attempt.attempt_id, answer, now);
      return answer;
    });
}

/** The executor id an assertion binds (null for an agent assertion), compared with the attempt's. */
function attempt_executor(a: TaskResultAssertion): string | null {
  return a.executor?.executor_id ?? null;
}

// ---- recovery --------------------------------------------------------------------------------------

const CONFIRMED_EFFECT: Record<string, string> = {
  claim: 'claim_recorded',
  collector_claim: 'claim_recorded',
  heartbeat: 'lease_extended',
  cancel: 'attempt_cancelled',
  reconcile: 'attempt_superseded',
  result: 'assertion_retained',
  collector_finalize: 'receipt_created',
  reconcile_collector_finalization: 'receipt_created',
};

/** Request kinds whose effect is a result the Hub accepts or not (an assertion, a receipt). */
const RESULT_KINDS = new Set(['result', 'collector_finalize', 'reconcile_collector_finalization']);

export interface RecoveryInput {
  readonly task_id: string;
  readonly attempt_id: string | null;
  readonly request_id: string | null;
  /** The task derived from a caller-named subject, when the journal has not retained it. */
  readonly derived?: Task;
  readonly now: number;
}

/** Whether the newest receipt of the subject names this transfer (metadata only, no transfer bytes). */
function receiptNames(journal: JournalStore, subject: Subject, transferDigest: string): boolean {
  const digest = journal.receiptFor(subject);
  const body = digest === undefined ? undefined : journal.receiptBody(digest);
  if (body === undefined) return false;
  const doc = JSON.parse(body.toString('utf8')) as { tasks: { transfer_digest: string }[] };
  return doc.tasks.some((t) => t.transfer_digest === transferDigest);
}

/**
 * TaskRecoveryEnvelope, side effect free (seed 000, "Recovery"). A committed request reports its
 * confirmed effect and every unresolved one: execution_may_still_run while its attempt could still be
 * executing (leased, expired, cancelled or replaced); for a collector attempt, resource_custody_unknown
 * until a retained transfer confirms the container's removal, and result_acceptance_unknown while a
 * passing retained transfer is named by no receipt (reconcile_collector_finalization resolves it).
 * A committed request whose attempt the journal no longer holds is observed `unknown`. A request id
 * with no committed row had no effect: conclusive_rejection, whose identical retry is permitted only
 * when the task is observed pending.
 */
export function recoveryEnvelope(journal: JournalStore | undefined, authority: AuthorityStore, actor: TokenActor, scope: Scope, r: RecoveryInput): JsonValue {
  const retained = journal ? retainedTask(journal, r.task_id) : undefined;
  const task = retained ?? (r.derived ? { task_id: r.derived.task_id, task_digest: r.derived.task_digest, subject: r.derived.subject } : undefined);
  if (!task || task.subject.repository !== scope.repository || task.subject.profile !== scope.profile) throw notFoundError('task_not_found', 'no such task in this repository and profile');

  const row = journal && r.request_id !== null ? lookupRequest(journal, actor, r.request_id) : undefined;
  if (row && row.task_id !== task.task_id) throw conflict('request_id_other_task', 'request_id belongs to another task');
  const latest = journal?.latestAttempt(task.task_id);
  let attempt: AttemptRow | undefined;
  let lost = false;
  const wanted = row?.attempt_id ?? r.attempt_id;
  if (wanted !== null && wanted !== undefined) {
    attempt = journal?.attempt(wanted);
    if (attempt && attempt.task_id !== task.task_id) throw notFoundError('attempt_not_found', 'no such attempt of this task');
    // A committed request's attempt that the journal no longer holds: its state cannot be known.
    if (!attempt && row?.attempt_id) lost = true;
    else if (!attempt) throw notFoundError('attempt_not_found', 'no such attempt of this task');
  } else attempt = latest;
  const current = authority.resolveSubject(task.subject)?.current === true;

  const observed = lost ? 'unknown' : !attempt ? 'pending' : attempt.state === 'leased' ? (r.now < attempt.lease_expires_at ? 'leased' : 'expired') : attempt.state;
  const supersession = attempt?.superseded_by_fence != null ? { old_fence: attempt.fence, new_fence: attempt.superseded_by_fence } : null;

  let confirmed: string[] = [];
  const unresolved: string[] = [];
  let disposition: 'confirmed' | 'conclusive_rejection' | 'uncertain_effect';
  let actions: string[];
  if (r.request_id !== null && !row) {
    disposition = 'conclusive_rejection';
    actions = observed === 'pending' ? ['inspect', 'stop', 'retry_identical'] : ['inspect', 'stop'];
  } else if (lost) {
    confirmed = [CONFIRMED_EFFECT[row!.kind]!];
    unresolved.push('execution_may_still_run');
    if (RESULT_KINDS.has(row!.kind)) unresolved.push('result_acceptance_unknown');
    disposition = 'uncertain_effect';
    actions = ['inspect', 'stop'];
  } else if (!attempt) {
    disposition = 'conclusive_rejection';
    actions = ['inspect', 'stop'];
  } else {
    confirmed = [row ? CONFIRMED_EFFECT[row.kind]! : 'claim_recorded'];
    if (attempt.state !== 'finished') unresolved.push('execution_may_still_run');
    let unaccepted = false;
    if (attempt.kind === 'collector') {
      const tr = journal!.transferOfAttempt(attempt.attempt_id);
      if (!tr) unresolved.push('resource_custody_unknown');
      else {
        if (!confirmed.includes('receipt_created')) confirmed.push('transfer_retained');
        if (tr.outcome === 'passed' && !receiptNames(journal!, task.subject, tr.transfer_digest)) unaccepted = true;
      }
    }
    if (unaccepted) unresolved.push('result_acceptance_unknown');
    if (unresolved.length === 0) {
      disposition = 'confirmed';
      actions = ['inspect', 'stop'];
    } else {
      disposition = 'uncertain_effect';
      const freshOk = attempt.state === 'replaced' && supersession !== null && supersession.new_fence > supersession.old_fence && unresolved.length === 1 && unresolved[0] === 'execution_may_still_run';
      actions = ['inspect', 'stop'];
      if (freshOk) actions.push('prepare_fresh_attempt');
      else if (attempt.state === 'leased' || attempt.state === 'cancelled') actions.push('reconcile');
      if (unaccepted && current) actions.push('reconcile_collector_finalization');
    }
  }
  return {
    ...ENVELOPE,
    task_id: task.task_id,
    task_digest: task.task_digest,
    request_id: r.request_id,
    request_kind: row ? row.kind : null,
    attempt_id: attempt?.attempt_id ?? (lost ? row!.attempt_id : null),
    attempt_digest: attempt?.attempt_digest ?? null,
    execution_operation_id: attempt?.execution_operation_id ?? null,
    fence: attempt?.fence ?? null,
    disposition,
    confirmed_effects: confirmed,
    unresolved_effects: unresolved,
    supersession,
    observed_state: observed,
    currently_applicable:
      current && attempt !== undefined && attempt.attempt_id === latest?.attempt_id && attempt.state === 'leased' && r.now < attempt.lease_expires_at && evidenceCurrent(authority, attempt),
    permitted_actions: actions,
    attempt: attempt ? attemptWire(attempt) : null,
  };
}
