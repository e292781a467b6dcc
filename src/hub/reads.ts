// The read operations of the workspace task API. Each is a pure read of the authority, the snapshot
// store and (when it exists) the journal; none writes, and none creates a missing journal.

import type { Task } from '../core/authority/plan.js';
import type { Subject } from '../core/authority/types.js';
import { outputJson, type JsonValue } from '../core/canonical/json.js';
import { sha256Hex } from '../core/crypto/digest.js';
import { CAPABILITY, SUPPORTED_SCHEMA_VERSIONS } from '../core/contract/common.js';
import { MAX_FAILURES, READ_OPERATIONS, REFERENCE_MAX_BYTES, SCHEMA_MISMATCH_ACTION, type ReadRequest } from '../core/contract/ops.js';
import { referencePathProblem } from '../core/contract/paths.js';
import { notFoundError } from './errors.js';
import type { AttemptRow, AuthorityStore, JournalStore } from '../core/storage/stores.js';
import { evidenceCurrent, keepText, priorUnresolved } from './claims.js';
import { liveReceipt, transferLive } from './receipts.js';
import { findTask, resolve, type ReadContext, type Scope } from './subjects.js';

export type TaskState = 'pending' | 'claimed' | 'succeeded' | 'failed' | 'uncertain' | 'blocked';
export type NextStep = { operation: 'collector_claim' | 'reconcile'; task_id: string } | { operation: 'collector_finalize' | 'checkpoint' | 'none' };

const ENVELOPE = { capability: CAPABILITY, schema_version: 1 } as const;

interface TaskView {
  readonly task: Task;
  readonly state: TaskState;
  readonly attempt: AttemptRow | undefined;
  /** Why a task is not done: a stable code (only for states other than succeeded). */
  readonly code: string | undefined;
  /** An older subject's task of the same Change, profile and step whose attempt is unresolved. */
  readonly prior?: string;
}

/** One attempt's projection. Expiry is a read-time observation: an expired lease is uncertain, not free. */
function attemptState(ctx: ReadContext, a: AttemptRow, now: number): { state: TaskState; code: string | undefined } {
  switch (a.state) {
    case 'leased':
      return now < a.lease_expires_at ? { state: 'claimed', code: 'attempt_in_progress' } : { state: 'uncertain', code: 'attempt_expired' };
    case 'finished':
      // Revocation (or a newer epoch) of the executor wins over evidence retained earlier.
      if (a.outcome === 'passed') {
        // The same live checks finalize applies: a collector's transfer also needs its profile
        // installation and its originating grant to be current, or next would offer a finalize that
        // can only be refused.
        if (!evidenceCurrent(ctx.authority, a) || (a.kind === 'collector' && !collectorTransferLive(ctx, a))) return { state: 'failed', code: 'authorization_changed' };
        return { state: 'succeeded', code: undefined };
      }
      // A finished attempt is resolved, whatever it reported: only an expired or cancelled one is
      // uncertain until reconciled (and reconcile refuses a finished attempt).
      if (a.outcome === 'failed') return { state: 'failed', code: a.outcome_code ?? 'result_failed' };
      return { state: 'failed', code: a.outcome_code ?? 'result_uncertain' };
    case 'cancelled':
      return { state: 'uncertain', code: 'attempt_cancelled' };
    case 'replaced':
      return { state: 'pending', code: 'task_pending' };
  }
}

/** Whether a passed collector attempt's retained transfer is still live (transferLive). */
function collectorTransferLive(ctx: ReadContext, a: AttemptRow): boolean {
  const t = ctx.journal()?.transferBindingOfAttempt(a.attempt_id);
  return t !== undefined && transferLive(ctx.authority, t);
}

/** The views of a subject's tasks (keyed by its memoized task list), while what they rest on is unchanged. */
const keptViews = new WeakMap<readonly Task[], { journal: JournalStore | undefined; authority: AuthorityStore; journalGen: number | undefined; authorityGen: number; views: readonly TaskView[] }>();

/**
 * Every task's state from the journal, then graph blocking (a dependency that failed or is unsure).
 * The views rest on journal rows and the authority's memoized lookups only, plus the time for a leased
 * attempt: while neither store changed (both generations) and no attempt is leased, the views computed
 * earlier are the views, so they are kept; a change by any process counts from the next request.
 */
export function taskViews(ctx: ReadContext, tasks: readonly Task[]): readonly TaskView[] {
  const journal = ctx.journal();
  const authorityGen = ctx.authority.memoGeneration();
  const journalGen = journal?.readsGeneration();
  // Without a journal yet (no task was ever claimed) every view is pending: kept until a journal appears.
  if (authorityGen === undefined || (journal !== undefined && journalGen === undefined)) return computeViews(ctx, journal, tasks);
  const kept = keptViews.get(tasks);
  if (kept && kept.journal === journal && kept.authority === ctx.authority && kept.journalGen === journalGen && kept.authorityGen === authorityGen) return kept.views;
  const views = computeViews(ctx, journal, tasks);
  if (views.every((v) => v.attempt?.state !== 'leased')) keptViews.set(tasks, { journal, authority: ctx.authority, journalGen, authorityGen, views });
  return views;
}

function computeViews(ctx: ReadContext, journal: JournalStore | undefined, tasks: readonly Task[]): TaskView[] {
  const byStep = new Map<string, TaskView>();
  const out: TaskView[] = [];
  for (const task of tasks) {
    const attempt = journal?.latestAttempt(task.task_id);
    let { state, code } = attempt ? attemptState(ctx, attempt, ctx.now) : { state: 'pending' as TaskState, code: 'task_pending' as string | undefined };
    let prior: string | undefined;
    if (state === 'pending') {
      const deps = task.step.depends_on.map((d) => byStep.get(d)!);
      if (deps.some((d) => d.state === 'failed' || d.state === 'uncertain' || d.state === 'blocked')) {
        state = 'blocked';
        code = 'dependency_not_satisfied';
      } else if (journal && (prior = priorUnresolved(journal, task.subject, task.step.id, task.task_id)) !== undefined) {
        // The claim path would refuse this task: the older attempt must be reconciled first.
        state = 'blocked';
        code = 'prior_subject_unresolved';
      }
    }
    const view: TaskView = prior === undefined ? { task, state, attempt, code } : { task, state, attempt, code, prior };
    byStep.set(task.step.id, view);
    out.push(view);
  }
  return out;
}

const isCollector = (t: Task) => t.step.action_class === 'command_collector' || t.step.action_class === 'review_collector';

function depsSucceeded(views: readonly TaskView[], v: TaskView): boolean {
  return v.task.step.depends_on.every((d) => views.find((x) => x.task.step.id === d)?.state === 'succeeded');
}

/**
 * The typed next step shared by `next` and `qualification`, so that they always agree: reconcile the
 * first unsure required task, else claim the first ready required collector task, else finalize when
 * every required task succeeded without a receipt, else none.
 */
export function nextStep(views: readonly TaskView[], receipt: string | undefined, current: boolean): NextStep {
  if (!current) return { operation: 'checkpoint' };
  const required = views.filter((v) => v.task.step.required);
  const unsure = required.find((v) => v.state === 'uncertain');
  if (unsure) return { operation: 'reconcile', task_id: unsure.task.task_id };
  const older = required.find((v) => v.prior !== undefined);
  if (older) return { operation: 'reconcile', task_id: older.prior! };
  const ready = required.find((v) => v.state === 'pending' && isCollector(v.task) && depsSucceeded(views, v));
  if (ready) return { operation: 'collector_claim', task_id: ready.task.task_id };
  if (required.every((v) => v.state === 'succeeded') && receipt === undefined) return { operation: 'collector_finalize' };
  return { operation: 'none' };
}

/** Qualification answers kept per views (taskViews keeps those), with the receipt check they used. */
const keptQualifications = new WeakMap<readonly TaskView[], { live: ReturnType<typeof liveReceipt>; answer: JsonValue }>();

/** The qualification answer of a current subject from its task views and its receipt check. */
function qualificationAnswer(subject: Subject, views: readonly TaskView[], live: ReturnType<typeof liveReceipt>): JsonValue {
  const receipt = live.digest;
  const failures = views
    .filter((v) => v.task.step.required && v.state !== 'succeeded')
    .slice(0, MAX_FAILURES)
    .map((v) => ({ task_id: v.task.task_id, code: v.code ?? 'task_pending' }));
  const allDone = views.every((v) => !v.task.step.required || v.state === 'succeeded');
  if (allDone && live.code !== undefined && failures.length < MAX_FAILURES) failures.push({ task_id: views.find((v) => v.task.step.required)!.task.task_id, code: live.code });
  const qualified = allDone && receipt !== undefined;
  return {
    ...ENVELOPE,
    qualified,
    subject_current: true,
    receipt_digest: qualified ? receipt! : null,
    revision: subject.revision,
    tasks: views.map((v) => ({ task_id: v.task.task_id, task_digest: v.task.task_digest, step_id: v.task.step.id, required: v.task.step.required, state: v.state })),
    failures,
    // A receipt that no longer passes the live checks cannot be finalized again into a current one.
    next: nextStep(views, receipt ?? live.code, true),
  };
}

function wireTask(v: TaskView): JsonValue {
  const s = v.task.step;
  return {
    task_id: v.task.task_id,
    task_digest: v.task.task_digest,
    step_id: s.id,
    skill: s.skill,
    action_class: s.action_class,
    required: s.required,
    depends_on: [...s.depends_on],
    criteria: s.criteria.map((c) => ({ id: c.id, text: c.text, required: c.required, controller_only: c.controller_only })),
    entrypoint: { capability: CAPABILITY, schema_version: 1, summary: s.summary, reference_names: s.references.map((r) => r.name) },
    state: v.state,
  };
}

export function handleRead(ctx: ReadContext, scope: Scope, req: ReadRequest): JsonValue {
  switch (req.operation) {
    case 'capabilities':
      return { capability: CAPABILITY, supported_schema_versions: [...SUPPORTED_SCHEMA_VERSIONS], operations: [...ctx.operations].sort() };

    case 'requirements': {
      const { subject, current, tasks } = resolve(ctx, scope, req.subject);
      const { requirement, plan_digest } = ctx.authority.loadRequirement(subject.requirement_digest);
      return {
        ...ENVELOPE,
        subject_current: current,
        workflow: requirement.workflow,
        requirement_digest: subject.requirement_digest,
        plan_digest,
        tasks: taskViews(ctx, tasks).map(wireTask),
      };
    }

    case 'next': {
      const { subject, current, tasks } = resolve(ctx, scope, req.subject);
      if (!current) return { ...ENVELOPE, subject_current: false, task: null, next: { operation: 'checkpoint' } };
      const views = taskViews(ctx, tasks);
      const live = liveReceipt(ctx.journal(), ctx.authority, subject);
      const next = nextStep(views, live.digest ?? (live.code !== undefined ? live.code : undefined), true);
      let task: TaskView | undefined;
      if (next.operation === 'collector_claim' || next.operation === 'reconcile') task = views.find((v) => v.task.task_id === next.task_id);
      else {
        // No collector step to take: offer the first ready task an agent can do (required first).
        const ready = views.filter((v) => v.state === 'pending' && v.task.step.action_class !== 'controller_only' && depsSucceeded(views, v));
        task = ready.find((v) => v.task.step.required) ?? ready[0];
      }
      return { ...ENVELOPE, subject_current: true, task: task ? wireTask(task) : null, next };
    }

    case 'qualification': {
      const { subject, current, tasks } = resolve(ctx, scope, req.subject);
      if (!current) {
        return { ...ENVELOPE, qualified: false, subject_current: false, receipt_digest: null, revision: subject.revision, tasks: [], failures: [], next: { operation: 'checkpoint' } };
      }
      const views = taskViews(ctx, tasks);
      // The receipt counts only while it passes the live checks admission uses (registration, profile
      // installation, originating grant); a stale one reads as authorization_changed.
      const live = liveReceipt(ctx.journal(), ctx.authority, subject);
      // The answer is a function of the views and the receipt check alone: when both are the ones kept
      // earlier (the same objects: neither store changed), so is the answer, and its text.
      const kept = keptQualifications.get(views);
      if (kept !== undefined && kept.live === live) return kept.answer;
      const answer = qualificationAnswer(subject, views, live);
      if (keptViews.get(tasks)?.views === views) {
        keptQualifications.set(views, { live, answer });
        keepText(answer, outputJson(answer));
      }
      return answer;
    }

    case 'instructions': {
      if (!req.supported_schema_versions.includes(1)) return schemaMismatch(req.supported_schema_versions);
      const { subject, tasks } = resolve(ctx, scope, req.subject);
      const t = findTask(tasks, req.task_id, req.task_digest);
      const s = t.step;
      const progression = s.action_class === 'controller_only' ? 'none' : isCollector(t) ? 'collector_claim' : 'claim';
      return {
        ...ENVELOPE,
        status: 'entrypoint',
        entrypoint: {
          capability: CAPABILITY,
          schema_version: 1,
          task_id: t.task_id,
          task_digest: t.task_digest,
          step_id: s.id,
          workflow: t.workflow,
          workflow_digest: subject.plan_digest,
          policy_digest: subject.requirement_digest,
          policy_epoch: subject.policy_epoch,
          summary: s.summary,
          criteria: s.criteria.map((c) => ({ id: c.id, text: c.text, required: c.required, controller_only: c.controller_only })),
          references: s.references.map((r) => ({ name: r.name, path: r.path, sha256: r.sha256 })),
          progression: { operation: progression },
        },
      };
    }

    case 'reference': {
      if (req.expected_schema_version !== 1) return schemaMismatch([req.expected_schema_version]);
      const { subject, tasks } = resolve(ctx, scope, req.subject);
      const t = findTask(tasks, req.task_id, req.task_digest);
      return readReference(ctx, subject, t, req.name, req.expected_sha256);
    }

    case 'status': {
      const { current, tasks } = resolve(ctx, scope, req.subject);
      const t = findTask(tasks, req.task_id, req.task_digest);
      const view = taskViews(ctx, tasks).find((v) => v.task.task_id === t.task_id)!;
      let attempt: AttemptRow | undefined;
      if (req.attempt_id !== null) {
        attempt = ctx.journal()?.attempt(req.attempt_id);
        if (!attempt || attempt.task_id !== t.task_id) throw notFoundError('attempt_not_found', 'no such attempt of this task');
      } else attempt = view.attempt;
      return {
        ...ENVELOPE,
        subject_current: current,
        task_id: t.task_id,
        task_digest: t.task_digest,
        step_id: t.step.id,
        state: view.state,
        attempt: attempt
          ? {
              attempt_id: attempt.attempt_id,
              attempt_digest: attempt.attempt_digest,
              fence: attempt.fence,
              state: attempt.state,
              outcome: attempt.outcome,
              currently_applicable: current && attempt.attempt_id === view.attempt?.attempt_id && attempt.state === 'leased' && ctx.now < attempt.lease_expires_at,
            }
          : null,
      };
    }
  }
}

function schemaMismatch(offered: readonly number[]): JsonValue {
  return {
    status: 'schema_mismatch',
    capability: CAPABILITY,
    required_schema_version: 1,
    supported_schema_versions: [...offered],
    server_schema_versions: [...SUPPORTED_SCHEMA_VERSIONS],
    action: SCHEMA_MISMATCH_ACTION,
  };
}

/**
 * A named reference of a stored task, read from the subject's immutable snapshot. The caller names only
 * the reference; the path and revision come from the task. Outcomes stay distinct: denied (not this
 * task's reference, or the caller's digest differs from the stored one), missing (not in the
 * snapshot), limit (over 128 KiB: refused from the manifest size and the blob's fstat, before reading),
 * uncertain (the content does not hash to the stored digest, or the store cannot tell), available.
 */
function readReference(ctx: ReadContext, subject: Subject, task: Task, name: string, expected: string): JsonValue {
  const out = (status: 'missing' | 'denied' | 'uncertain', reason: string): JsonValue => ({ ...ENVELOPE, status, name, reason });
  const ref = task.step.references.find((r) => r.name === name);
  if (!ref) return out('denied', 'not_a_task_reference');
  if (ref.sha256 !== expected) return out('denied', 'digest_not_committed');
  if (referencePathProblem(ref.path) !== undefined) return out('denied', 'path_not_canonical');
  const manifest = ctx.snapshots.manifest(subject.revision);
  if (!manifest) return out('uncertain', 'snapshot_unavailable');
  const entry = manifest.entries.find((e) => e.path === ref.path);
  if (!entry) return out('missing', 'not_in_snapshot');
  if (entry.mode !== 0o100644 && entry.mode !== 0o100755) return out('denied', 'not_a_regular_file');
  if (entry.size > REFERENCE_MAX_BYTES) return { ...ENVELOPE, status: 'limit', name, size: entry.size, max_bytes: REFERENCE_MAX_BYTES };
  if (entry.sha256 !== ref.sha256) return out('uncertain', 'content_digest_mismatch');
  const body = ctx.snapshots.readBlob(entry.sha256, REFERENCE_MAX_BYTES);
  if (body === 'limit') return { ...ENVELOPE, status: 'limit', name, size: entry.size, max_bytes: REFERENCE_MAX_BYTES };
  if (body === undefined) return out('uncertain', 'content_unavailable');
  if (sha256Hex(body) !== ref.sha256 || sha256Hex(body) !== expected) return out('uncertain', 'content_digest_mismatch');
  let content: string;
  try {
    content = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return out('denied', 'not_utf8');
  }
  return { ...ENVELOPE, status: 'available', name, sha256: ref.sha256, size: body.length, content };
}

export { READ_OPERATIONS };
