// The review branch of `agent-task collect` (collect-flow.ts hands over once the descriptor names a
// finite-review profile): recompile the pins against the local authority, prepare the review from the
// exact local snapshot with the shared controller, reserve, dispatch each call (src/collectors/
// review-collect.ts), sign, retain, upload.

import { Authority } from '../../core/authority/store.js';
import type { Subject } from '../../core/authority/types.js';
import type { Task } from '../../core/authority/plan.js';
import { canonicalJson, type JsonValue } from '../../core/canonical/json.js';
import type { ReviewDescriptor } from '../../core/contract/collector.js';
import { prepareFromSnapshots, reviewProfileJson, type PreparedReview, type ReviewCollectorProfile } from '../../core/collector/review.js';
import { verificationKeyId } from '../../core/crypto/ed25519.js';
import { loadKey } from '../../core/crypto/keystore.js';
import { AgentscmError, conflict, localState, usageError } from '../../core/errors.js';
import { lstatOrUndefined, requireAbsolute } from '../../core/fs/safe.js';
import { SnapshotStore } from '../../core/native/snapshot.js';
import type { ProgressReporter } from '../../collectors/progress.js';
import { buildReviewRecord, runReview, signReviewTransfer } from '../../collectors/review-collect.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { idArg, optionalStringOpt } from '../options.js';
import { installedProfileRow, malformed, type CollectorSession } from './collector-calls.js';

type Collect = typeof import('../../collectors/collect.js');

export interface ReviewCollectInputs {
  readonly ctx: CommandContext;
  readonly inv: Invocation;
  readonly d: ReviewDescriptor;
  readonly subject: Subject;
  readonly task: Task;
  readonly dataDir: string;
  readonly keyDir: string;
  readonly stateDir: string;
  readonly session: CollectorSession;
  readonly c: Collect;
  readonly progress: ProgressReporter;
  readonly statusRead: () => Promise<Record<string, JsonValue>>;
  readonly firstStatus: Promise<Record<string, JsonValue>>;
}

export async function collectReview(i: ReviewCollectInputs): Promise<CommandResult> {
  const { d, c, progress, inv } = i;
  const statusCheck = async (when: string, pending?: Promise<Record<string, JsonValue>>) => {
    const s = await (pending ?? i.statusRead());
    const att = s.attempt as Record<string, JsonValue> | null;
    if (s.subject_current !== true || !att || att.state !== 'leased' || att.fence !== d.fence || att.currently_applicable !== true) {
      throw conflict(`the attempt is no longer applicable ${when} (state ${String(att?.state)}, subject_current ${String(s.subject_current)})`, 'ATTEMPT_NOT_APPLICABLE');
    }
  };
  const reviewerOpt = optionalStringOpt(inv, 'reviewer');
  const key = loadKey(i.keyDir);
  if (verificationKeyId(key.publicKey) !== d.registration.verification_key_id) throw localState('the key in --key-dir is not the enrolled key of the attempt\'s registration', 'WRONG_KEY');
  const binding = {
    repository: d.repository, profile: d.profile, step_id: d.step_id, revision: d.revision, task_id: d.task_id, task_digest: d.task_digest,
    attempt_id: d.attempt_id, attempt_digest: d.attempt_digest, execution_operation_id: d.execution_operation_id, fence: d.fence,
    collector_profile_install_id: d.collector_profile.install_id, collector_profile_digest: d.collector_profile.profile_digest,
  };
  const { profile, prepared } = recompileReview(i.dataDir, d, i.subject, i.task, binding);
  const paths = c.executionPaths(i.stateDir, c.executionKey(d));
  let bytes = lstatOrUndefined(paths.transfer) ? c.readRetained(paths) : undefined;
  let resumed = false;
  let dispatched = 0;
  let outcome: string | undefined;
  if (bytes) {
    resumed = true;
    c.skipAll(progress, ['materialize', 'reserve', 'run', 'sign', 'retain'], 'retained');
  } else {
    if (reviewerOpt === undefined) throw usageError('a review attempt needs --reviewer PATH: the operator-selected Claude Code executable');
    const executable = requireAbsolute(reviewerOpt, '--reviewer');
    progress.done('materialize', `${prepared.calls.length} review calls over ${prepared.required} paths`);
    progress.start('reserve');
    await statusCheck('before dispatch', i.firstStatus);
    const { reservation, fresh } = c.reserve(i.stateDir, { ...d, execution_request_digest: prepared.requestDigest });
    resumed = !fresh;
    progress.done('reserve', fresh ? undefined : 'resumed');
    progress.start('run', `claude-code review (${prepared.calls.length} calls)`);
    const run = await runReview({ d: { ...d, execution_request_digest: prepared.requestDigest }, paths, reservation, prepared, profile, executable, env: i.ctx.env });
    dispatched = run.dispatched;
    const record = buildReviewRecord(prepared, run);
    outcome = (JSON.parse(record.toString('utf8')) as { outcome: string }).outcome;
    progress.done('run', `${run.observations.length} calls observed, ${run.dispatched} dispatched now: ${outcome}`);
    progress.start('sign');
    await statusCheck('before signing');
    const signed = signReviewTransfer({ ...d, execution_request_digest: prepared.requestDigest }, key, profile, prepared, record, run.executable.after, reservation.upload_request_id);
    progress.done('sign');
    progress.start('retain');
    bytes = c.retain(paths, signed);
    progress.done('retain', `${bytes.length} bytes`);
    c.faultPoint('after-retain');
  }
  progress.start('upload');
  let view: Record<string, JsonValue>;
  try {
    view = await i.session.upload(bytes!, () => c.faultPoint('mid-upload'));
  } catch (e) {
    progress.fail('upload');
    if (e instanceof AgentscmError) throw new AgentscmError(e.kind, e.code, `${e.message}; the signed transfer is retained: run \`agentscm agent-task retry-upload --attempt-id ${d.attempt_id}\``, e.detail);
    throw e;
  }
  c.recordUpload(paths, view);
  progress.done('upload', view.replayed === true ? 'already retained by the Hub' : undefined);
  await progress.close();
  return {
    data: { task_id: i.task.task_id, attempt_id: d.attempt_id, kind: 'review', outcome: view.outcome, review_calls: prepared.calls.length, dispatched, resumed, recovered: false, upload: view },
    text:
      `collected ${i.task.task_id}: review ${String(view.outcome)}${resumed ? ' [resumed from retained state]' : ''}\n` +
      `transfer ${String(view.transfer_digest)} retained by the Hub${view.replayed === true ? ' (retry)' : ''}\n` +
      `next: agentscm agent-task qualification ${idArg(inv, 0, 'CHANGE')} (then collector-finalize when next says so)`,
  };
}

/** The installed review profile the descriptor names, rechecked against the local authority, and its prepared review. */
function recompileReview(dataDir: string, d: ReviewDescriptor, subject: Subject, task: Task, binding: Parameters<typeof prepareFromSnapshots>[1]): { profile: ReviewCollectorProfile; prepared: PreparedReview } {
  const a = Authority.open(dataDir, { readonly: true });
  try {
    const p = JSON.parse(installedProfileRow(a, d).canonical.toString('utf8')) as ReviewCollectorProfile;
    const pins = reviewProfileJson(p) as Record<string, JsonValue>;
    const theirs = d.review as unknown as Record<string, JsonValue>;
    if (p.kind !== 'review' || canonicalJson({ r: pins.reviewer!, p: pins.policy_digest!, c: pins.path_coverage!, b: pins.budgets! }) !== canonicalJson({ r: theirs.reviewer!, p: theirs.policy_digest!, c: theirs.path_coverage!, b: theirs.budgets! })) {
      throw malformed('the descriptor\'s review pins are not the installed profile\'s');
    }
    const cv = a.getChangeVersion(subject.repository, subject.change_id, subject.change_version);
    const prepared = prepareFromSnapshots(new SnapshotStore(dataDir), binding, cv?.parent_revision ?? null, p, task.step.criteria);
    return { profile: p, prepared };
  } finally {
    a.close();
  }
}
