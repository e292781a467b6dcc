// Import of a finite-review transfer (seed 000, "import with replay"): the authority rebuilds the
// immutable sources and the installed request, runs the same finite controller (src/core/collector/
// review.ts) against a validation-only replay transport that answers from the retained observations,
// checks every prepared request, ticket, source exposure and observation, and compares the complete
// derived record (coverage, findings, outcome) with the uploaded one byte for byte. An uploaded success
// flag alone never counts: the outcome is the derived record's.

import type { RetainedTask as Task } from './claims.js';
import type { ExecutionBinding, ReviewTransferHeader } from '../core/collector/transfer.js';
import {
  nextCall,
  observationMismatch,
  prepareFromSnapshots,
  reviewBasisProblem,
  reviewerIdentityDigest,
  reviewRecordBytes,
  type ReviewCollectorProfile,
  type ReviewObservation,
} from '../core/collector/review.js';
import { formatIssues } from '../core/contract/common.js';
import { ReviewRecordSchema } from '../core/contract/collector.js';
import { AgentscmError } from '../core/errors.js';
import type { SnapshotStore } from '../core/native/snapshot.js';
import type { AuthorityStore } from '../core/storage/stores.js';
import { HubError } from './errors.js';

const refused = (code: string, message: string) => new HubError(400, code, message);

export interface ReplayInput {
  readonly authority: AuthorityStore;
  readonly snapshots: SnapshotStore;
  readonly task: Task;
  readonly binding: ExecutionBinding;
  readonly profile: ReviewCollectorProfile;
  readonly header: ReviewTransferHeader;
  readonly requestBytes: Buffer;
  readonly recordBytes: Buffer;
}

/** Validates a review transfer's records by replay; returns the derived outcome. */
export function replayReview(i: ReplayInput): 'passed' | 'failed' {
  const { profile: p, header: h } = i;
  const basis = reviewBasisProblem(p.reviewer);
  if (basis) throw refused('review_basis_refused', basis);
  // The installed policy the profile was installed for must still be the profile's requirement.
  if (i.task.subject.requirement_digest !== p.policy_digest) throw refused('policy_digest_mismatch', 'the review profile was installed for another policy than the subject\'s');

  const subject = i.task.subject;
  const cv = i.authority.getChangeVersion(subject.repository, subject.change_id, subject.change_version);
  let prepared: ReturnType<typeof prepareFromSnapshots>;
  try {
    prepared = prepareFromSnapshots(i.snapshots, i.binding, cv?.parent_revision ?? null, p, i.task.step.criteria);
  } catch (e) {
    if (e instanceof AgentscmError) throw new HubError(500, 'snapshot_unavailable', e.message);
    throw e;
  }
  if (!prepared.requestBytes.equals(i.requestBytes)) throw refused('request_mismatch', 'the review request is not the one the controller prepares from the snapshot and the installed profile');
  if (h.review_request_digest !== prepared.requestDigest) throw refused('request_mismatch', 'the header names another review request');

  let record: unknown;
  try {
    record = JSON.parse(i.recordBytes.toString('utf8'));
  } catch {
    throw refused('invalid_record', 'the review record is not JSON');
  }
  const rp = ReviewRecordSchema.safeParse(record);
  if (!rp.success) throw refused('invalid_record', `review record is invalid: ${formatIssues(rp.error)}`);
  const r = rp.data;
  if (r.reviewer.transport_basis !== p.reviewer.transport_basis || reviewBasisProblem({ ...p.reviewer, transport_basis: r.reviewer.transport_basis, provider_scope: r.reviewer.provider_scope })) {
    throw refused('review_basis_refused', 'the record names a transport basis or provider the profile does not pin');
  }
  const exe = { before: r.reviewer.executable_sha256_before, after: r.reviewer.executable_sha256_after };
  if (exe.before !== p.reviewer.executable_sha256 || exe.after !== p.reviewer.executable_sha256) {
    throw refused('executable_changed', 'the reviewer executable observed before or after dispatch is not the one the profile pins');
  }
  if (h.observed_reviewer_identity_digest !== reviewerIdentityDigest(p.reviewer, exe.after)) throw refused('reviewer_identity_mismatch', 'the header binds another reviewer identity than the profile pins');

  // The replay transport: the controller asks for each call in turn; the retained observation must be
  // the answer to exactly that prepared call, and no observation may be left over or missing.
  const obs = r.observations as readonly ReviewObservation[];
  const used: ReviewObservation[] = [];
  for (;;) {
    const call = nextCall(prepared, used);
    if (!call) break;
    const o = obs[used.length];
    if (!o) throw refused('observation_missing', `the controller dispatches call ${call.index}, which has no retained observation`);
    const why = observationMismatch(call, o);
    if (why) throw refused('observation_mismatch', why);
    used.push(o);
  }
  if (used.length !== obs.length) throw refused('observation_unexpected', 'the record retains observations the controller never dispatches');

  const derived = reviewRecordBytes(prepared, used, exe);
  if (!derived.equals(i.recordBytes)) throw refused('record_mismatch', 'the review record is not the one the controller derives from its observations');
  return r.outcome;
}
