// The collector route of the Hub: collector_claim (on the claim core), the server-derived descriptor,
// import of signed transfers from the upload route, collector_finalize (v2 receipts, also the
// reconciliation of a finalization that did not complete) and the live receipt check qualification uses.
//
// The descriptor is derived only from the retained attempt and the installed collector profile of the
// attempt's registration: candidate data cannot choose an image, argv, credential or fallback.

import type { z } from 'zod';
import type { Subject, TokenActor } from '../core/authority/types.js';
import { canonicalJsonBytes, parseStrictJson, type JsonValue } from '../core/canonical/json.js';
import { CAPABILITY, formatIssues } from '../core/contract/common.js';
import { ExecutionRecordSchema, TransferHeaderSchema, type CollectorRequest } from '../core/contract/collector.js';
import {
  deriveOutcome,
  executionRecordBytes,
  executionRequestBytes,
  executionRequestDigest,
  headerSigningDigest,
  sliceRecords,
  splitTransfer,
  transferBytesDigest,
  transferDigest,
  type CollectorProfile,
  type ExecutionBinding,
} from '../core/collector/transfer.js';
import { DOMAINS, domainDigest, sha256Hex } from '../core/crypto/digest.js';
import { parsePublicKeyHex, verifyStrict } from '../core/crypto/ed25519.js';
import { AgentscmError } from '../core/errors.js';
import { attemptWire, claimAttempt, commitRequest, requestDigest, requestedClaim, retainedOutcome, retainedTask } from './claims.js';
import { HubError, invalidRequest, notFoundError } from './errors.js';
import type { AttemptRow, AuthorityStore, CollectorAttemptRow, CollectorProfileRow, JournalStore, TransferRow, TransferWithView } from '../core/storage/stores.js';
import { liveReceipt, receiptBody, subjectEvidence, transferLive, verifyRetainedTransfers } from './receipts.js';
import { replayReview } from './review-replay.js';
import type { ReviewCollectorProfile } from '../core/collector/review.js';
import type { SnapshotStore } from '../core/native/snapshot.js';
import { resolve, resolveTask, type MutationContext, type Scope } from './subjects.js';

const ENVELOPE = { capability: CAPABILITY, schema_version: 1 } as const;
const conflict = (code: string, message: string) => new HubError(409, code, message);
const refused = (code: string, message: string) => new HubError(400, code, message);

export function profileOf(row: CollectorProfileRow): CollectorProfile | ReviewCollectorProfile {
  return JSON.parse(row.canonical.toString('utf8')) as CollectorProfile | ReviewCollectorProfile;
}

function collectorAttempt(j: JournalStore, attemptId: string): CollectorAttemptRow | undefined {
  return j.collectorAttempt(attemptId);
}

function installRow(authority: AuthorityStore, registrationId: string, installId: string): CollectorProfileRow | undefined {
  const row = authority.collectorProfileInstall(installId, registrationId);
  if (row && domainDigest(DOMAINS.collectorProfile, row.canonical) !== row.profile_digest) throw new HubError(500, 'store_integrity', 'an installed collector profile does not match its digest');
  return row;
}

interface TaskLike {
  readonly task_id: string;
  readonly task_digest: string;
  readonly subject: Subject;
  readonly step: { readonly id: string };
}

function bindingOf(task: TaskLike, a: AttemptRow, row: CollectorProfileRow): ExecutionBinding {
  return {
    repository: task.subject.repository,
    profile: task.subject.profile,
    step_id: task.step.id,
    revision: task.subject.revision,
    task_id: task.task_id,
    task_digest: task.task_digest,
    attempt_id: a.attempt_id,
    attempt_digest: a.attempt_digest,
    execution_operation_id: a.execution_operation_id,
    fence: a.fence,
    collector_profile_install_id: row.install_id,
    collector_profile_digest: row.profile_digest,
  };
}

/** The descriptor of a collector attempt: a pure function of retained rows and the installed profile. */
export function descriptorFor(authority: AuthorityStore, task: TaskLike, a: AttemptRow, row: CollectorProfileRow, grant: string): JsonValue {
  const p = profileOf(row);
  const e = authority.getEnrollment(a.registration_id!);
  if (!e) throw new HubError(500, 'store_integrity', 'the attempt\'s registration is missing');
  const common = {
    version: 1,
    audience: authority.authorityId(),
    repository: task.subject.repository,
    profile: task.subject.profile,
    step_id: task.step.id,
    revision: task.subject.revision,
    task_id: task.task_id,
    task_digest: task.task_digest,
    attempt_id: a.attempt_id,
    attempt_digest: a.attempt_digest,
    execution_operation_id: a.execution_operation_id,
    fence: a.fence,
    origin: { owner_id: a.owner_id, agent_id: a.agent_id, grant_generation: grant },
    registration: { registration_id: e.registration_id, executor_id: e.executor_id, registration_epoch: e.registration_epoch, verification_key_id: e.verification_key_id },
    collector_profile: { install_id: row.install_id, profile_digest: row.profile_digest },
  };
  if (p.kind === 'review') return { ...common, review: { reviewer: p.reviewer, policy_digest: p.policy_digest, path_coverage: p.path_coverage, budgets: p.budgets } } as unknown as JsonValue;
  const request = executionRequestBytes(bindingOf(task, a, row), p);
  return {
    ...common,
    recipe: { image_id: p.recipe.image_id, argv: [...p.recipe.argv], working_dir: p.recipe.working_dir, timeout_ms: p.recipe.timeout_ms, max_output_bytes: p.recipe.max_output_bytes, network: 'none' },
    runtime_identity_digest: p.runtime_identity_digest,
    execution_request_digest: executionRequestDigest(request),
  };
}

export function handleCollector(ctx: MutationContext, scope: Scope, req: CollectorRequest, raw: JsonValue): JsonValue {
  const actor = scope.actor;
  switch (req.operation) {
    case 'collector_claim': {
      const digest = requestDigest('collector_claim', actor, raw);
      const j = ctx.writable();
      const task = resolveTask(ctx, scope, req);
      if (task.step.action_class !== 'command_collector' && task.step.action_class !== 'review_collector') throw conflict('not_a_collector_step', 'collector_claim needs a collector step');
      const kind = task.step.action_class === 'review_collector' ? 'review' : 'command';
      return claimAttempt(j, ctx.authority, actor, task, {
        kind: 'collector',
        ...requestedClaim(req, digest),
        // The executor is the claimed registration; it must have an installed profile for this step.
        extend: (a) => {
          const row = ctx.authority.currentCollectorProfile(a.registration_id!);
          if (!row) throw conflict('no_collector_profile', 'the executor\'s current registration has no installed collector profile');
          const p = profileOf(row);
          if (p.step_id !== task.step.id || p.repository !== task.subject.repository || p.profile !== task.subject.profile || p.kind !== kind) {
            throw conflict('collector_profile_mismatch', 'the installed collector profile is for another step');
          }
          j.insertCollectorAttempt({ attempt_id: a.attempt_id, install_id: row.install_id, profile_digest: row.profile_digest, grant_generation: actor.token_id }, Date.now());
          return { descriptor: descriptorFor(ctx.authority, task, a, row, actor.token_id) };
        },
      });
    }
    case 'collector_descriptor': {
      const j = ctx.journal();
      const task = j ? retainedTask(j, req.task_id) : undefined;
      if (!j || !task || task.subject.repository !== scope.repository || task.subject.profile !== scope.profile) throw notFoundError('task_not_found', 'no such claimed task');
      const a = j.attempt(req.attempt_id);
      if (!a || a.task_id !== task.task_id) throw notFoundError('attempt_not_found', 'no such attempt of this task');
      if (a.owner_id !== actor.owner_id) throw conflict('not_attempt_owner', 'only the attempt\'s owner may read its descriptor');
      const ca = collectorAttempt(j, a.attempt_id);
      if (a.kind !== 'collector' || !ca) throw conflict('not_a_collector_attempt', 'the attempt was not claimed with collector_claim');
      const row = installRow(ctx.authority, a.registration_id!, ca.install_id);
      if (!row) throw new HubError(500, 'store_integrity', 'the claimed collector profile installation is missing');
      return { ...ENVELOPE, operation: 'collector_descriptor', descriptor: descriptorFor(ctx.authority, task, a, row, ca.grant_generation), attempt: attemptWire(a) };
    }
    case 'collector_finalize':
    case 'reconcile_collector_finalization':
      return finalize(ctx, scope, req, requestDigest(req.operation, actor, raw));
  }
}

// ---- import ----------------------------------------------------------------------------------------

function viewOf(row: TransferWithView, replayed: boolean, applicable: boolean): JsonValue {
  const v = parseStrictJson(row.view, { maxBytes: 1 << 16, what: 'retained transfer view' }) as Record<string, JsonValue>;
  return { ...v, replayed, currently_applicable: applicable };
}

/** A transfer's framing and header, decoded and checked against their schema. */
export interface DecodedTransfer {
  readonly bytes: Buffer;
  readonly parts: ReturnType<typeof splitTransfer>;
  readonly header: z.output<typeof TransferHeaderSchema>;
  readonly bytesDigest: string;
}

/**
 * Decodes what the upload route received, before anything touches the journal: bytes that are not a
 * transfer are refused (400 invalid_transfer) without creating a journal on a data dir that has none.
 */
export function decodeTransfer(bytes: Buffer): DecodedTransfer {
  const parts = wrap(() => splitTransfer(bytes));
  const header = wrap(() => parseStrictJson(parts.header, { maxBytes: 1 << 16, what: 'transfer header', integersOnly: true }));
  const hp = TransferHeaderSchema.safeParse(header);
  if (!hp.success) throw refused('invalid_transfer', `transfer header is invalid: ${formatIssues(hp.error)}`);
  return { bytes, parts, header: hp.data, bytesDigest: transferBytesDigest(bytes) };
}

/**
 * Imports one signed transfer. An exact committed retry (same uploader, same upload request id, same
 * bytes) is looked up first and answers the historical retained view, even after drift; the same id
 * with other bytes conflicts. A fresh transfer is checked against the current registry and the
 * regenerated request, and its original bytes are retained with the attempt's outcome.
 */
export function importTransfer(journal: JournalStore, authority: AuthorityStore, actor: TokenActor, scope: { repository: string; profile: string }, transfer: DecodedTransfer, now: number, snapshots?: SnapshotStore): JsonValue {
  const { bytes, parts, header: h, bytesDigest } = transfer;

  return journal
    .immediate((): JsonValue => {
      const prior = journal.transferByUpload(actor.owner_id, actor.agent_id, h.upload_request_id);
      if (prior) {
        if (prior.bytes_digest !== bytesDigest) throw conflict('upload_request_conflict', 'upload_request_id was already used with different transfer bytes');
        const latest = journal.latestAttempt(prior.task_id);
        return viewOf(prior, true, latest?.attempt_id === prior.attempt_id && transferLive(authority, prior));
      }

      if (h.repository !== scope.repository || h.profile !== scope.profile) throw refused('transfer_scope_mismatch', 'the transfer names another repository or profile than the route');
      if (h.audience !== authority.authorityId()) throw refused('wrong_audience', 'the transfer is for another authority');
      if (h.origin.owner_id !== actor.owner_id || h.origin.agent_id !== actor.agent_id || h.origin.grant_generation !== actor.token_id) {
        throw conflict('origin_mismatch', 'the transfer\'s originating actor or grant is not the authenticated one');
      }
      const task = retainedTask(journal, h.task_id);
      if (!task || task.subject.repository !== scope.repository || task.subject.profile !== scope.profile) throw notFoundError('task_not_found', 'no such claimed task');
      const a = journal.attempt(h.attempt_id);
      if (!a || a.task_id !== task.task_id) throw notFoundError('attempt_not_found', 'no such attempt of this task');
      if (task.task_digest !== h.task_digest || a.attempt_digest !== h.attempt_digest || a.execution_operation_id !== h.execution_operation_id || task.step.id !== h.step_id) {
        throw conflict('binding_mismatch', 'the transfer does not bind this exact task and attempt');
      }
      if (a.fence !== h.fence || a.state === 'replaced') throw conflict('stale_fence', 'the fence is stale: the attempt was superseded');
      if (a.kind !== 'collector') throw conflict('not_a_collector_attempt', 'the attempt was not claimed with collector_claim');
      if (a.owner_id !== actor.owner_id || a.agent_id !== actor.agent_id) throw conflict('not_attempt_holder', 'only the agent holding the attempt may upload its transfer');
      if (journal.transferBindingOfAttempt(a.attempt_id) !== undefined) throw conflict('transfer_exists', 'this attempt already has a retained transfer');
      if (a.state !== 'leased') throw conflict('attempt_not_leased', `the attempt is ${a.state}`);
      // As for a result: an expired lease is not current execution authority (the attempt is
      // uncertain until reconciled), whatever the transfer says it observed.
      if (now >= a.lease_expires_at) throw conflict('lease_expired', 'the lease expired: reconcile the attempt');
      const ca = collectorAttempt(journal, a.attempt_id);
      if (!ca || ca.grant_generation !== h.origin.grant_generation) throw conflict('binding_mismatch', 'the transfer\'s grant is not the claim\'s');

      // The current registry: the registration must be the executor's current, unrevoked epoch with this key,
      // and its current profile installation the one the attempt was claimed under.
      const e = authority.getEnrollment(h.registration.registration_id);
      if (!e || e.registration_id !== a.registration_id) throw conflict('binding_mismatch', 'the transfer\'s registration is not the attempt\'s');
      if (e.revoked_at !== null) throw conflict('enrollment_revoked', 'the collector\'s enrollment is revoked');
      if (authority.currentRegistration(e.repository, e.profile, e.step_id, e.executor_id)?.registration_id !== e.registration_id) {
        throw conflict('enrollment_not_current', 'the collector\'s registration epoch is no longer current');
      }
      if (e.executor_id !== h.registration.executor_id || e.registration_epoch !== h.registration.registration_epoch || e.verification_key_id !== h.registration.verification_key_id) {
        throw conflict('registration_mismatch', 'the transfer names another key or epoch than the registration');
      }
      const row = authority.currentCollectorProfile(e.registration_id);
      if (!row || row.install_id !== ca.install_id || row.install_id !== h.collector_profile.install_id || row.profile_digest !== h.collector_profile.profile_digest) {
        throw conflict('collector_profile_changed', 'the collector profile is not the installation the attempt was claimed under');
      }
      if (!verifyStrict(parts.signature, headerSigningDigest(parts.header), parsePublicKeyHex(e.public_key))) {
        throw refused('signature_invalid', 'the transfer signature does not verify under the enrolled key');
      }

      const [requestBytes, recordBytes] = wrap(() => sliceRecords(parts.rest, h.records));
      const anyProfile = profileOf(row);
      let outcome: 'passed' | 'failed';
      if (anyProfile.kind === 'review' || 'review_request_digest' in h) {
        if (anyProfile.kind !== 'review' || !('review_request_digest' in h) || !snapshots) throw refused('transfer_kind_mismatch', 'the transfer is not of the installed collector profile\'s kind');
        outcome = replayReview({ authority, snapshots, task, binding: bindingOf(task, a, row), profile: anyProfile, header: h, requestBytes: requestBytes!, recordBytes: recordBytes! });
      } else {
        const profile = anyProfile;
        if ('review_request_digest' in h) throw refused('transfer_kind_mismatch', 'the transfer is not of the installed collector profile\'s kind');
        const expected = executionRequestBytes(bindingOf(task, a, row), profile);
        if (!expected.equals(requestBytes!)) throw refused('request_mismatch', 'the execution request is not the one the installed profile pins');
        const requestDigest = executionRequestDigest(expected);
        if (h.execution_request_digest !== requestDigest) throw refused('request_mismatch', 'the header names another execution request');
        // The record must be exactly its own canonical encoding: decoded natively (it is most of 16 MiB),
        // validated strictly, then re-encoded and compared byte for byte, which also refuses duplicate keys,
        // other field orders, whitespace and non-canonical numbers.
        let record: unknown;
        try {
          record = JSON.parse(recordBytes!.toString('utf8'));
        } catch {
          throw refused('invalid_record', 'the execution record is not JSON');
        }
        const rp = ExecutionRecordSchema.safeParse(record);
        if (!rp.success) throw refused('invalid_record', `execution record is invalid: ${formatIssues(rp.error)}`);
        const r = rp.data;
        if (!executionRecordBytes(r).equals(recordBytes!)) throw refused('invalid_record', 'the execution record is not in its canonical encoding');
        if (r.execution_request_digest !== requestDigest) throw refused('record_binding_mismatch', 'the record is for another execution request');
        if (r.observed_runtime_identity_digest !== profile.runtime_identity_digest || h.observed_runtime_identity_digest !== profile.runtime_identity_digest) {
          throw refused('runtime_identity_mismatch', 'the observed runtime identity is not the one the profile pins');
        }
        const iso = r.isolation;
        if (!iso.snapshot_read_only || !iso.root_read_only || !iso.capabilities_dropped || !iso.no_new_privileges) throw refused('isolation_not_met', 'the record does not show the required isolation');
        if (!r.cleanup.container_removed) throw refused('cleanup_not_confirmed', 'the record does not confirm container removal');
        for (const [name, c] of [['stdout', r.stdout], ['stderr', r.stderr]] as const) {
          const data = Buffer.from(c.data_base64, 'base64');
          if (data.toString('base64') !== c.data_base64) throw refused('invalid_record', `${name} is not canonical base64`);
          if (data.length > profile.recipe.max_output_bytes || sha256Hex(data) !== c.sha256 || data.length > c.total_bytes || c.truncated !== data.length < c.total_bytes) {
            throw refused('output_bounds', `${name} does not respect the recipe's output bounds or its digest`);
          }
        }
        if (r.outcome !== deriveOutcome(r)) throw refused('outcome_mismatch', 'the record\'s outcome does not follow from its exit status');
        outcome = r.outcome;
      }

      const tDigest = transferDigest(parts.header);
      const view: JsonValue = {
        ...ENVELOPE,
        operation: 'collector_upload',
        upload_request_id: h.upload_request_id,
        transfer_digest: tDigest,
        bytes_sha256: bytesDigest,
        length: bytes.length,
        task_id: task.task_id,
        attempt_id: a.attempt_id,
        fence: a.fence,
        outcome,
      };
      journal.insertTransfer({
        transfer_digest: tDigest,
        owner_id: actor.owner_id,
        agent_id: actor.agent_id,
        upload_request_id: h.upload_request_id,
        bytes_digest: bytesDigest,
        task_id: task.task_id,
        attempt_id: a.attempt_id,
        fence: a.fence,
        registration_id: e.registration_id,
        collector_profile_install_id: row.install_id,
        collector_profile_digest: row.profile_digest,
        grant_generation: h.origin.grant_generation,
        outcome,
        length: bytes.length,
        bytes,
        view: canonicalJsonBytes(view),
        created_at: now,
      });
      // A transfer finishes its attempt; the graph (and only a receipt) decides qualification.
      journal.updateAttempt(a.attempt_id, { state: 'finished', outcome, outcome_code: outcome === 'passed' ? null : 'collector_not_passed', updated_at: now });
      return { ...view, replayed: false, currently_applicable: true };
    });
}

function wrap<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof HubError) throw e;
    if (e instanceof AgentscmError) throw refused('invalid_transfer', e.message);
    throw e;
  }
}

// ---- finalization and receipts ---------------------------------------------------------------------

/**
 * collector_finalize and reconcile_collector_finalization: the v2 receipt of the current subject from
 * its retained validated transfers, under current authorization, never running a collector. The live
 * checks run inside the batch, which holds the authority's writer reservation after the journal's
 * (batch.ts), so a revocation by another process lands wholly before or after. reconcile answers the
 * subject's live receipt when one exists (a finalization whose answer was lost), else creates it.
 */
function finalize(ctx: MutationContext, scope: Scope, req: Extract<CollectorRequest, { operation: 'collector_finalize' | 'reconcile_collector_finalization' }>, digest: string): JsonValue {
  const j = ctx.writable();
  const authority = ctx.authority;
  const op = req.operation;
  return j
    .immediate((): JsonValue => {
      const replay = retainedOutcome(j, scope.actor, op, req.request_id, digest);
      if (replay) return replay;
      const { subject, current, tasks } = resolve(ctx, scope, req.subject);
      if (!current) throw conflict('subject_not_current', 'the subject is no longer current: checkpoint gives a new subject');
      const now = Date.now();
      const base = { ...ENVELOPE, operation: op, request_id: req.request_id, request_digest: digest, replayed: false };
      if (op === 'reconcile_collector_finalization') {
        const live = liveReceipt(j, authority, subject);
        if (live.digest !== undefined) {
          const named = JSON.parse(j.receiptBody(live.digest)!.toString('utf8')) as { tasks: { task_id: string; transfer_digest: string }[] };
          const answer: JsonValue = { ...base, finalization: 'existing', receipt_digest: live.digest, receipt_version: 2, transfers: named.tasks.map((t) => t.transfer_digest) };
          commitRequest(j, scope.actor, op, req.request_id, digest, named.tasks[0]!.task_id, null, answer, now);
          return answer;
        }
      }
      const ev = subjectEvidence(j, authority, tasks);
      if (!ev.ok) throw conflict(ev.code === 'authorization_changed' ? 'authorization_changed' : 'not_ready', `the subject cannot be finalized: ${ev.code}`);
      // Every originating grant must still be live (tokens are checked by transferLive) and belong to the caller's owner.
      if (ev.evidence.some((x) => x.attempt.owner_id !== scope.actor.owner_id)) throw conflict('origin_mismatch', 'the evidence belongs to another owner');
      if (!verifyRetainedTransfers(j, ev.evidence)) throw new HubError(500, 'store_integrity', 'a retained transfer does not match its recorded length or digest');
      const body = receiptBody(authority, subject, ev.evidence);
      const receiptDigest = domainDigest(DOMAINS.receipt, body);
      j.insertReceipt(receiptDigest, subject, body, now);
      const answer: JsonValue = {
        ...base,
        ...(op === 'reconcile_collector_finalization' ? { finalization: 'created' } : {}),
        receipt_digest: receiptDigest,
        receipt_version: 2,
        transfers: ev.evidence.map((x) => x.transfer.transfer_digest),
      };
      commitRequest(j, scope.actor, op, req.request_id, digest, ev.evidence[0]!.task.task_id, null, answer, now);
      return answer;
    });
}
