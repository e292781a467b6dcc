// Admission: the recheck that approval and landing run under the authority's write lock. Qualification
// is advisory; this is the gate. It takes the Change's current subject (never one a caller names), the
// installed policy and requirement, the exact receipt of that subject with the retained signed transfers
// it names, and the current executor registrations, collector profile installations and originating
// grants, and either admits the subject with its receipt digest or refuses with one stable reason.
// Shared by the trusted-local `approve` and `land` commands and by the Hub's operations of the same
// names; it reads the journal through the narrow interface below and prints nothing.

import { subjectToJson } from '../authority/plan.js';
import type { Authority } from '../authority/store.js';
import type { ApprovalRow, IntegrationRow, Subject } from '../authority/types.js';
import { canonicalJsonBytes } from '../canonical/json.js';
import { DOMAINS, domainDigest } from '../crypto/digest.js';
import { AgentscmError, type ErrorKind } from '../errors.js';
import type { AttemptRow, TransferRow } from '../storage/stores.js';

/** The journal reads admission makes (the Hub's Journal and the read-only reader both provide them). */
export interface AdmissionJournal {
  receiptFor(s: Subject): string | undefined;
  receiptBody(receiptDigest: string): Buffer | undefined;
  transfer(transferDigest: string): Pick<TransferRow, 'attempt_id' | 'task_id' | 'outcome' | 'bytes_digest' | 'registration_id' | 'collector_profile_install_id' | 'grant_generation'> | undefined;
  latestAttempt(taskId: string): Pick<AttemptRow, 'attempt_id' | 'state' | 'outcome' | 'registration_id'> | undefined;
}

/** The stable refusal reasons, each with its error kind (and so its exit code). */
export const REFUSALS = {
  subject_superseded: 'SUBJECT_SUPERSEDED',
  policy_changed: 'POLICY_CHANGED',
  executor_revoked: 'EXECUTOR_REVOKED',
  origin_revoked: 'ORIGIN_REVOKED',
  profile_changed: 'PROFILE_CHANGED',
  target_moved: 'TARGET_MOVED',
  not_qualified: 'NOT_QUALIFIED',
  not_approved: 'NOT_APPROVED',
} as const satisfies Record<string, ErrorKind>;

export type Refusal = keyof typeof REFUSALS;

export function refusal(reason: Refusal, message: string, detail: Record<string, unknown> = {}): AgentscmError {
  return new AgentscmError(REFUSALS[reason], reason.toUpperCase(), message, { refusal: reason, ...detail });
}

export interface Admitted {
  readonly subject: Subject;
  readonly receipt_digest: string;
}

interface ReceiptBody {
  readonly version: number;
  readonly subject: unknown;
  readonly tasks: readonly {
    readonly task_id: string;
    readonly task_digest: string;
    readonly attempt_id: string;
    readonly transfer_digest: string;
    readonly transfer_bytes_sha256: string;
    readonly registration: { readonly registration_id: string };
    readonly collector_profile: { readonly install_id: string };
    readonly origin: { readonly grant_generation: string };
  }[];
}

/** Whether the registration is unrevoked and still the executor's current epoch. */
function registrationCurrent(authority: Authority, registrationId: string): boolean {
  const e = authority.getEnrollment(registrationId);
  if (!e || e.revoked_at !== null) return false;
  return authority.currentRegistration(e.repository, e.profile, e.step_id, e.executor_id)?.registration_id === registrationId;
}

/**
 * Admits the exact subject or throws a refusal. `subject` must be the Change's current subject, read
 * inside the same write lock.
 */
export function admit(authority: Authority, journal: AdmissionJournal | undefined, subject: Subject): Admitted {
  const notQualified = (why: string) => refusal('not_qualified', `the current subject is not qualified: ${why}`, { reason: why });
  // The installed requirement, rechecked against its digest (loadRequirement verifies the stored bytes).
  authority.loadRequirement(subject.requirement_digest);
  const digest = journal?.receiptFor(subject);
  if (!journal || digest === undefined) throw notQualified('no_receipt');
  const bytes = journal.receiptBody(digest);
  if (!bytes || domainDigest(DOMAINS.receipt, bytes) !== digest) throw notQualified('receipt_integrity');
  let body: ReceiptBody;
  try {
    body = JSON.parse(bytes.toString('utf8')) as ReceiptBody;
  } catch {
    throw notQualified('receipt_integrity');
  }
  if (body.version !== 2 || !Array.isArray(body.tasks) || !canonicalJsonBytes(body.subject as never).equals(canonicalJsonBytes(subjectToJson(subject)))) throw notQualified('receipt_integrity');
  const named = new Map(body.tasks.map((t) => [t.task_id, t]));
  // Per required task, in this order: the attempt passed; for a collector step, its receipt entry and
  // retained transfer, then the originating grant, the executor registration, the profile installation.
  for (const task of authority.tasksFor(subject)) {
    if (!task.step.required) continue;
    const stepId = task.step.id;
    const a = journal.latestAttempt(task.task_id);
    if (!a || a.state !== 'finished' || a.outcome !== 'passed') throw notQualified('task_not_succeeded');
    const executorRevoked = () => refusal('executor_revoked', `the executor registration of step ${stepId} is revoked or not current`, { step_id: stepId });
    if (task.step.action_class !== 'command_collector' && task.step.action_class !== 'review_collector') {
      if (a.registration_id !== null && !registrationCurrent(authority, a.registration_id)) throw executorRevoked();
      continue;
    }
    // A required collector step needs the exact successful imported command of this very task (its id
    // and digest bind the whole subject), under the recipe and environment of the current profile.
    const r = named.get(task.task_id);
    if (!r || r.task_digest !== task.task_digest || r.attempt_id !== a.attempt_id) throw notQualified('receipt_incomplete');
    const tr = journal.transfer(r.transfer_digest);
    if (!tr || tr.attempt_id !== r.attempt_id || tr.task_id !== task.task_id || tr.outcome !== 'passed' || tr.bytes_digest !== r.transfer_bytes_sha256) throw notQualified('transfer_missing');
    if (tr.registration_id !== r.registration.registration_id || tr.collector_profile_install_id !== r.collector_profile.install_id || tr.grant_generation !== r.origin.grant_generation) {
      throw notQualified('receipt_integrity');
    }
    if (!authority.tokenActive(tr.grant_generation)) throw refusal('origin_revoked', `the originating grant of step ${stepId} is revoked`, { step_id: stepId });
    if (!registrationCurrent(authority, tr.registration_id) || (a.registration_id !== null && !registrationCurrent(authority, a.registration_id))) throw executorRevoked();
    if (authority.currentCollectorProfile(tr.registration_id)?.install_id !== tr.collector_profile_install_id) {
      throw refusal('profile_changed', `the collector profile of step ${stepId} is no longer the installed one`, { step_id: stepId });
    }
  }
  return { subject, receipt_digest: digest };
}

/** The answer of an approval, the same from `agentscm approve` and the Hub's `approve` operation. */
export function approvalJson(r: ApprovalRow & { subject: Subject }) {
  return { approval_id: r.approval_id, subject: subjectToJson(r.subject), receipt_digest: r.receipt_digest, actor: r.actor, approved_at: r.created_at };
}

/** The answer of a landing, the same from `agentscm land` and the Hub's `land` operation. */
export function landingJson(r: IntegrationRow & { subject: Subject }) {
  return {
    integration_id: r.integration_id,
    target: r.target,
    from_revision: r.base_revision,
    revision: r.revision,
    subject: subjectToJson(r.subject),
    receipt_digest: r.receipt_digest,
    approval_id: r.approval_id,
    actor: r.actor,
    landed_at: r.created_at,
  };
}

/** Approval: under the write lock, admit the Change's current subject and record the approval. */
export function approve(
  authority: Authority,
  journal: () => AdmissionJournal | undefined,
  input: { repository: string; profile: string; change_id: string; revision?: string; actor: string; guard?: () => void },
): ApprovalRow & { subject: Subject } {
  return authority.underWriteLock(() => {
    input.guard?.();
    const subject = authority.currentSubject(input.repository, input.profile, input.change_id);
    if (input.revision !== undefined && input.revision !== subject.revision) {
      throw refusal('subject_superseded', `the Change's current revision is ${subject.revision}, not ${input.revision}`, { current_revision: subject.revision });
    }
    const a = admit(authority, journal(), subject);
    return { ...authority.recordApproval(subject, a.receipt_digest, input.actor), subject };
  });
}

/**
 * Landing: under the write lock, the newest approval must name the Change's current subject at the
 * current policy epoch, admission must pass again with the approved receipt, and the target must still
 * be at the revision this Change version was based on; then the target moves (compare-and-swap) and
 * the integration is recorded, in the same transaction.
 */
export function land(
  authority: Authority,
  journal: () => AdmissionJournal | undefined,
  input: { repository: string; profile: string; change_id: string; actor: string; guard?: () => void },
): IntegrationRow & { subject: Subject } {
  return authority.underWriteLock(() => {
    input.guard?.();
    const subject = authority.currentSubject(input.repository, input.profile, input.change_id);
    const ap = authority.latestApproval(input.repository, input.profile, input.change_id);
    if (!ap) throw refusal('not_approved', `Change ${input.change_id} has no approval (run \`agentscm approve\`)`);
    if (ap.change_version !== subject.change_version || ap.context_digest !== subject.context_digest || ap.revision !== subject.revision) {
      throw refusal('subject_superseded', `the approval names version ${ap.change_version}; the Change is at version ${subject.change_version}`, { approved_version: ap.change_version, current_version: subject.change_version });
    }
    if (ap.policy_epoch !== subject.policy_epoch) {
      throw refusal('policy_changed', `the approval was at policy epoch ${ap.policy_epoch}; the profile is at ${subject.policy_epoch}`, { approved_epoch: ap.policy_epoch, current_epoch: subject.policy_epoch });
    }
    const a = admit(authority, journal(), subject);
    if (a.receipt_digest !== ap.receipt_digest) throw refusal('not_approved', 'the subject\'s receipt is not the approved one (approve again)');
    const base = authority.changeBase(subject.repository, subject.change_id, subject.change_version, subject.target)?.base_revision ?? null;
    const row = authority.integrate({
      repository: subject.repository,
      profile: subject.profile,
      target: subject.target,
      change_id: subject.change_id,
      change_version: subject.change_version,
      policy_epoch: subject.policy_epoch,
      revision: subject.revision,
      base_revision: base,
      receipt_digest: a.receipt_digest,
      approval_id: ap.approval_id,
      actor: input.actor,
    });
    if (!row) {
      const at = authority.targetRevision(subject.repository, subject.target);
      throw refusal('target_moved', `target ${subject.target} is at ${at ?? '(empty)'}, not at the revision ${base ?? '(empty)'} this Change was based on (checkpoint on top of it again)`, {
        target_revision: at,
        base_revision: base,
      });
    }
    return { ...row, subject };
  });
}
