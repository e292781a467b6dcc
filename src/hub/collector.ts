// The collector route of the Hub: collector_claim (on the claim core), the server-derived descriptor,
// import of signed transfers from the upload route, collector_finalize (v2 receipts, also the
// reconciliation of a finalization that did not complete) and the live receipt check qualification uses.
//
// The descriptor is derived only from the retained attempt and the installed collector profile of the
// attempt's registration: candidate data cannot choose an image, argv, credential or fallback.

import type { z } from 'zod';
import type { Authority, CollectorProfileRow } from '../core/authority/store.js';
import type { Task } from '../core/authority/plan.js';
import { subjectToJson } from '../core/authority/plan.js';
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
import { attemptWire, claimAttempt, commitRequest, evidenceCurrent, requestDigest, requestedClaim, retainedOutcome, retainedTask } from './claims.js';
import { HubError, invalidRequest, notFoundError } from './errors.js';
import type { AttemptRow, Journal } from './journal.js';
import type { MutationContext } from './mutations.js';
import { resolve, type ReadContext, type Scope } from './reads.js';

const ENVELOPE = { capability: CAPABILITY, schema_version: 1 } as const;
const conflict = (code: string, message: string) => new HubError(409, code, message);
const refused = (code: string, message: string) => new HubError(400, code, message);

/** At most this many transfers name one receipt (finalization streams them one at a time). */
export const MAX_RECEIPT_TRANSFERS = 32;

export function profileOf(row: CollectorProfileRow): CollectorProfile {
  return JSON.parse(row.canonical.toString('utf8')) as CollectorProfile;
}

interface CollectorAttemptRow {
  readonly attempt_id: string;
  readonly install_id: string;
  readonly profile_digest: string;
  readonly grant_generation: string;
}

function collectorAttempt(j: Journal, attemptId: string): CollectorAttemptRow | undefined {
  return j.db.prepare('SELECT attempt_id, install_id, profile_digest, grant_generation FROM collector_attempts WHERE attempt_id = ?').get(attemptId) as CollectorAttemptRow | undefined;
}

function installRow(authority: Authority, registrationId: string, installId: string): CollectorProfileRow | undefined {
  const row = authority.db.prepare('SELECT * FROM collector_profiles WHERE install_id = ? AND registration_id = ?').get(installId, registrationId) as CollectorProfileRow | undefined;
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
export function descriptorFor(authority: Authority, task: TaskLike, a: AttemptRow, row: CollectorProfileRow, grant: string): JsonValue {
  const p = profileOf(row);
  const e = authority.getEnrollment(a.registration_id!);
  if (!e) throw new HubError(500, 'store_integrity', 'the attempt\'s registration is missing');
  const request = executionRequestBytes(bindingOf(task, a, row), p);
  return {
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
    recipe: { image_id: p.recipe.image_id, argv: [...p.recipe.argv], working_dir: p.recipe.working_dir, timeout_ms: p.recipe.timeout_ms, max_output_bytes: p.recipe.max_output_bytes, network: 'none' },
    runtime_identity_digest: p.runtime_identity_digest,
    execution_request_digest: executionRequestDigest(request),
  };
}

function findTask(ctx: ReadContext, scope: Scope, req: { subject: Subject; task_id: string; task_digest: string }): Task {
  const { tasks } = resolve(ctx, scope, req.subject);
  const t = tasks.find((x) => x.task_id === req.task_id);
  if (!t) throw notFoundError('task_not_found', 'no such task for this subject');
  if (t.task_digest !== req.task_digest) throw conflict('task_digest_mismatch', 'the task digest does not match the stored task');
  return t;
}

export function handleCollector(ctx: MutationContext, scope: Scope, req: CollectorRequest, raw: JsonValue): JsonValue {
  const actor = scope.actor;
  switch (req.operation) {
    case 'collector_claim': {
      const digest = requestDigest('collector_claim', actor, raw);
      const j = ctx.writable();
      const task = findTask(ctx, scope, req);
      if (task.step.action_class !== 'command_collector') {
        // An identical retry still answers from the journal inside claimAttempt; only fresh claims get here.
        if (task.step.action_class !== 'review_collector') throw conflict('not_a_collector_step', 'collector_claim needs a collector step');
        throw conflict('collector_kind_unsupported', 'this Hub runs command collectors only');
      }
      return claimAttempt(j, ctx.authority, actor, task, {
        kind: 'collector',
        ...requestedClaim(req, digest),
        // The executor is the claimed registration; it must have an installed profile for this step.
        extend: (a) => {
          const row = ctx.authority.currentCollectorProfile(a.registration_id!);
          if (!row) throw conflict('no_collector_profile', 'the executor\'s current registration has no installed collector profile');
          const p = profileOf(row);
          if (p.step_id !== task.step.id || p.repository !== task.subject.repository || p.profile !== task.subject.profile) {
            throw conflict('collector_profile_mismatch', 'the installed collector profile is for another step');
          }
          j.db
            .prepare('INSERT INTO collector_attempts (attempt_id, install_id, profile_digest, grant_generation, created_at) VALUES (?, ?, ?, ?, ?)')
            .run(a.attempt_id, row.install_id, row.profile_digest, actor.token_id, Date.now());
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
      return finalize(ctx, scope, req, requestDigest('collector_finalize', actor, raw));
  }
}

// ---- import ----------------------------------------------------------------------------------------

interface TransferRow {
  readonly transfer_digest: string;
  readonly bytes_digest: string;
  readonly upload_request_id: string;
  readonly task_id: string;
  readonly attempt_id: string;
  readonly fence: number;
  readonly registration_id: string;
  readonly collector_profile_install_id: string;
  readonly collector_profile_digest: string;
  readonly grant_generation: string;
  readonly outcome: 'passed' | 'failed';
  readonly length: number;
  readonly view: Buffer;
}

/** Whether retained evidence still counts now: origin grant, registration and profile installation. */
export function transferLive(authority: Authority, t: Pick<TransferRow, 'registration_id' | 'collector_profile_install_id' | 'grant_generation'>): boolean {
  if (!authority.tokenActive(t.grant_generation)) return false;
  const e = authority.getEnrollment(t.registration_id);
  if (!e || e.revoked_at !== null) return false;
  if (authority.currentRegistration(e.repository, e.profile, e.step_id, e.executor_id)?.registration_id !== e.registration_id) return false;
  return authority.currentCollectorProfile(e.registration_id)?.install_id === t.collector_profile_install_id;
}

function viewOf(row: TransferRow, replayed: boolean, applicable: boolean): JsonValue {
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
export function importTransfer(journal: Journal, authority: Authority, actor: TokenActor, scope: { repository: string; profile: string }, transfer: DecodedTransfer, now: number): JsonValue {
  const { bytes, parts, header: h, bytesDigest } = transfer;

  return journal.db
    .transaction((): JsonValue => {
      const prior = journal.db.prepare('SELECT * FROM transfers WHERE owner_id = ? AND agent_id = ? AND upload_request_id = ?').get(actor.owner_id, actor.agent_id, h.upload_request_id) as
        | TransferRow
        | undefined;
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
      const existing = journal.db.prepare('SELECT transfer_digest FROM transfers WHERE attempt_id = ?').get(a.attempt_id);
      if (existing) throw conflict('transfer_exists', 'this attempt already has a retained transfer');
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
      const profile = profileOf(row);
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
        outcome: r.outcome,
      };
      journal.db
        .prepare(
          `INSERT INTO transfers (transfer_digest, owner_id, agent_id, upload_request_id, bytes_digest, task_id, attempt_id, fence, registration_id,
             collector_profile_install_id, collector_profile_digest, grant_generation, outcome, length, bytes, view, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          tDigest, actor.owner_id, actor.agent_id, h.upload_request_id, bytesDigest, task.task_id, a.attempt_id, a.fence, e.registration_id,
          row.install_id, row.profile_digest, h.origin.grant_generation, r.outcome, bytes.length, bytes, canonicalJsonBytes(view), now,
        );
      // A transfer finishes its attempt; the graph (and only a receipt) decides qualification.
      journal.db
        .prepare("UPDATE attempts SET state = 'finished', outcome = ?, outcome_code = ?, updated_at = ? WHERE attempt_id = ?")
        .run(r.outcome, r.outcome === 'passed' ? null : 'collector_not_passed', now, a.attempt_id);
      return { ...view, replayed: false, currently_applicable: true };
    })
    .immediate();
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

interface Evidence {
  readonly task: Task;
  readonly attempt: AttemptRow;
  readonly transfer: TransferRow;
}

/** The retained, live evidence of every required collector task of the subject, or why there is none. */
function subjectEvidence(journal: Journal, authority: Authority, tasks: readonly Task[]): { ok: true; evidence: Evidence[] } | { ok: false; code: string } {
  const evidence: Evidence[] = [];
  for (const t of tasks) {
    if (!t.step.required) continue;
    const a = journal.latestAttempt(t.task_id);
    if (!a || a.state !== 'finished' || a.outcome !== 'passed') return { ok: false, code: 'task_not_succeeded' };
    if (!evidenceCurrent(authority, a)) return { ok: false, code: 'authorization_changed' };
    if (t.step.action_class !== 'command_collector' && t.step.action_class !== 'review_collector') continue;
    const tr = journal.db.prepare('SELECT * FROM transfers WHERE attempt_id = ?').get(a.attempt_id) as TransferRow | undefined;
    if (!tr) return { ok: false, code: 'transfer_missing' };
    if (!transferLive(authority, tr)) return { ok: false, code: 'authorization_changed' };
    evidence.push({ task: t, attempt: a, transfer: tr });
  }
  if (evidence.length === 0) return { ok: false, code: 'no_collector_evidence' };
  if (evidence.length > MAX_RECEIPT_TRANSFERS) return { ok: false, code: 'too_many_transfers' };
  return { ok: true, evidence };
}

function receiptBody(authority: Authority, subject: Subject, evidence: readonly Evidence[]): Buffer {
  return canonicalJsonBytes({
    version: 2,
    subject: subjectToJson(subject),
    tasks: evidence.map(({ task, attempt, transfer }) => ({
      task_id: task.task_id,
      task_digest: task.task_digest,
      step_id: task.step.id,
      attempt_id: attempt.attempt_id,
      attempt_digest: attempt.attempt_digest,
      fence: attempt.fence,
      transfer_digest: transfer.transfer_digest,
      transfer_bytes_sha256: transfer.bytes_digest,
      registration: {
        registration_id: transfer.registration_id,
        registration_epoch: attempt.registration_epoch!,
        executor_id: attempt.executor_id!,
        verification_key_id: authority.getEnrollment(transfer.registration_id)!.verification_key_id,
      },
      collector_profile: { install_id: transfer.collector_profile_install_id, profile_digest: transfer.collector_profile_digest },
      origin: { owner_id: attempt.owner_id, agent_id: attempt.agent_id, grant_generation: transfer.grant_generation },
    })),
  });
}

function finalize(ctx: MutationContext, scope: Scope, req: Extract<CollectorRequest, { operation: 'collector_finalize' }>, digest: string): JsonValue {
  const j = ctx.writable();
  const authority = ctx.authority;
  return j.db
    .transaction((): JsonValue => {
      const replay = retainedOutcome(j, scope.actor, 'collector_finalize', req.request_id, digest);
      if (replay) return replay;
      const { subject, current, tasks } = resolve(ctx, scope, req.subject);
      if (!current) throw conflict('subject_not_current', 'the subject is no longer current: checkpoint gives a new subject');
      const ev = subjectEvidence(j, authority, tasks);
      if (!ev.ok) throw conflict(ev.code === 'authorization_changed' ? 'authorization_changed' : 'not_ready', `the subject cannot be finalized: ${ev.code}`);
      // Every originating grant must still be live (tokens are checked by transferLive) and belong to the caller's owner.
      if (ev.evidence.some((x) => x.attempt.owner_id !== scope.actor.owner_id)) throw conflict('origin_mismatch', 'the evidence belongs to another owner');
      const body = receiptBody(authority, subject, ev.evidence);
      const receiptDigest = domainDigest(DOMAINS.receipt, body);
      const now = Date.now();
      j.db
        .prepare(
          `INSERT OR IGNORE INTO receipts (receipt_digest, repository, profile, change_id, change_version, context_digest, policy_epoch, requirement_digest, revision, body, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(receiptDigest, subject.repository, subject.profile, subject.change_id, subject.change_version, subject.context_digest, subject.policy_epoch, subject.requirement_digest, subject.revision, body, now);
      const answer: JsonValue = {
        ...ENVELOPE,
        operation: 'collector_finalize',
        request_id: req.request_id,
        request_digest: digest,
        replayed: false,
        receipt_digest: receiptDigest,
        receipt_version: 2,
        transfers: ev.evidence.map((x) => x.transfer.transfer_digest),
      };
      commitRequest(j, scope.actor, 'collector_finalize', req.request_id, digest, ev.evidence[0]!.task.task_id, null, answer, now);
      return answer;
    })
    .immediate();
}

/**
 * The subject's receipt if it passes the live checks admission uses: the newest receipt of the exact
 * subject, every named transfer still retained with its original bytes, and every registration,
 * profile installation and originating grant still current. `code` says why not.
 */
export function liveReceipt(journal: Journal | undefined, authority: Authority, subject: Subject): { digest: string | undefined; code: string | undefined } {
  const digest = journal?.receiptFor(subject);
  if (!journal || digest === undefined) return { digest: undefined, code: undefined };
  const row = journal.db.prepare('SELECT body FROM receipts WHERE receipt_digest = ?').get(digest) as { body: Buffer };
  if (domainDigest(DOMAINS.receipt, row.body) !== digest) return { digest: undefined, code: 'receipt_integrity' };
  const body = JSON.parse(row.body.toString('utf8')) as { tasks: { transfer_digest: string; attempt_id: string }[] };
  for (const t of body.tasks) {
    const tr = journal.db.prepare('SELECT * FROM transfers WHERE transfer_digest = ?').get(t.transfer_digest) as TransferRow | undefined;
    if (!tr || tr.attempt_id !== t.attempt_id || tr.outcome !== 'passed') return { digest: undefined, code: 'receipt_integrity' };
    if (!transferLive(authority, tr)) return { digest: undefined, code: 'authorization_changed' };
  }
  return { digest, code: undefined };
}
