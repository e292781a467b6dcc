// Receipts and the retained collector evidence they rest on: whether a retained transfer still counts
// (its originating grant, registration and profile installation are all current), the evidence a
// subject's finalization gathers, the canonical v2 receipt body, and the live receipt check that
// `next` and `qualification` use. Reads and the collector route both build on this module.

import type { Task } from '../core/authority/plan.js';
import { subjectToJson } from '../core/authority/plan.js';
import type { Subject } from '../core/authority/types.js';
import { canonicalJsonBytes } from '../core/canonical/json.js';
import { DOMAINS, domainDigest } from '../core/crypto/digest.js';
import { TRANSFER_MAX_BYTES, transferBytesDigest } from '../core/collector/transfer.js';
import { evidenceCurrent } from './claims.js';
import type { AttemptRow, AuthorityStore, JournalStore, TransferBinding, TransferRow } from '../core/storage/stores.js';

/** At most this many transfers name one receipt (finalization streams them one at a time). */
export const MAX_RECEIPT_TRANSFERS = 32;

/** Whether retained evidence still counts now: origin grant, registration and profile installation. */
export function transferLive(authority: AuthorityStore, t: TransferBinding): boolean {
  if (!authority.tokenActive(t.grant_generation)) return false;
  const e = authority.getEnrollment(t.registration_id);
  if (!e || e.revoked_at !== null) return false;
  if (authority.currentRegistration(e.repository, e.profile, e.step_id, e.executor_id)?.registration_id !== e.registration_id) return false;
  return authority.currentCollectorProfile(e.registration_id)?.install_id === t.collector_profile_install_id;
}

export interface Evidence {
  readonly task: Task;
  readonly attempt: AttemptRow;
  readonly transfer: TransferRow;
}

/** The retained, live evidence of every required collector task of the subject, or why there is none. */
export function subjectEvidence(journal: JournalStore, authority: AuthorityStore, tasks: readonly Task[]): { ok: true; evidence: Evidence[] } | { ok: false; code: string } {
  // The bound first, from the requirement alone: nothing is looked up for a subject over it.
  if (tasks.filter((t) => t.step.required && isCollectorStep(t)).length > MAX_RECEIPT_TRANSFERS) return { ok: false, code: 'too_many_transfers' };
  const evidence: Evidence[] = [];
  for (const t of tasks) {
    if (!t.step.required) continue;
    const a = journal.latestAttempt(t.task_id);
    if (!a || a.state !== 'finished' || a.outcome !== 'passed') return { ok: false, code: 'task_not_succeeded' };
    if (!evidenceCurrent(authority, a)) return { ok: false, code: 'authorization_changed' };
    if (t.step.action_class !== 'command_collector' && t.step.action_class !== 'review_collector') continue;
    const tr = journal.transferOfAttempt(a.attempt_id);
    if (!tr) return { ok: false, code: 'transfer_missing' };
    if (!transferLive(authority, tr)) return { ok: false, code: 'authorization_changed' };
    evidence.push({ task: t, attempt: a, transfer: tr });
  }
  if (evidence.length === 0) return { ok: false, code: 'no_collector_evidence' };
  return { ok: true, evidence };
}

const isCollectorStep = (t: Task) => t.step.action_class === 'command_collector' || t.step.action_class === 'review_collector';

/**
 * Rechecks the retained bytes of each evidence transfer against the digests the receipt will name,
 * one transfer at a time: its stored length is checked against the 16 MiB envelope bound before it is
 * read, and each is released before the next is read, so at most one transfer is in memory. A stored
 * transfer over the bound or whose bytes no longer match is a store integrity failure.
 */
export function verifyRetainedTransfers(journal: JournalStore, evidence: readonly Evidence[]): boolean {
  for (const { transfer } of evidence) {
    const n = journal.transferStoredLength(transfer.transfer_digest);
    if (n === undefined || n > TRANSFER_MAX_BYTES || n !== transfer.length) return false;
    const bytes = journal.transferBytes(transfer.transfer_digest);
    if (bytes === undefined || bytes.length !== n || transferBytesDigest(bytes) !== transfer.bytes_digest) return false;
  }
  return true;
}

export function receiptBody(authority: AuthorityStore, subject: Subject, evidence: readonly Evidence[]): Buffer {
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

/** liveReceipt of a subject without a receipt: one object, so that answers kept per receipt check (reads.ts) are found again. */
const NO_RECEIPT = Object.freeze({ digest: undefined, code: undefined });

/**
 * The subject's receipt if it passes the live checks admission uses: the newest receipt of the exact
 * subject, every named transfer still retained with its original bytes, and every registration,
 * profile installation and originating grant still current. `code` says why not.
 */
export function liveReceipt(journal: JournalStore | undefined, authority: AuthorityStore, subject: Subject): { readonly digest: string | undefined; readonly code: string | undefined } {
  const digest = journal?.receiptFor(subject);
  if (!journal || digest === undefined) return NO_RECEIPT;
  // The result rests on journal rows and the authority's memoized lookups only: kept while the journal
  // is unchanged (remembered) under the authority memo's generation, so a change in either store, by any
  // process, counts from the next request. Without a usable memo it is checked afresh.
  const gen = authority.memoGeneration();
  if (gen === undefined) return checkReceipt(journal, authority, digest);
  return journal.remembered(`live-receipt\0${gen}\0${digest}`, () => checkReceipt(journal, authority, digest));
}

function checkReceipt(journal: JournalStore, authority: AuthorityStore, digest: string): { readonly digest: string | undefined; readonly code: string | undefined } {
  // The stored body's digest and the transfers it names, checked once while the journal is unchanged.
  const named = journal.remembered(`receipt-transfers\0${digest}`, () => receiptTransfers(journal, digest));
  if (named === undefined) return { digest: undefined, code: 'receipt_integrity' };
  // In the body's order, as one pass would: a transfer not live before a broken one reads as such.
  for (const tr of named.rows) if (!transferLive(authority, tr)) return { digest: undefined, code: 'authorization_changed' };
  if (named.broken) return { digest: undefined, code: 'receipt_integrity' };
  return { digest, code: undefined };
}

/**
 * The transfers a stored receipt names, in its order, up to the first that is not retained and passed
 * (`broken`); undefined when the stored body is missing or does not match its digest.
 */
function receiptTransfers(journal: JournalStore, digest: string): { rows: TransferRow[]; broken: boolean } | undefined {
  const stored = journal.receiptBody(digest);
  if (stored === undefined || domainDigest(DOMAINS.receipt, stored) !== digest) return undefined;
  const body = JSON.parse(stored.toString('utf8')) as { tasks: { transfer_digest: string; attempt_id: string }[] };
  const out: TransferRow[] = [];
  for (const t of body.tasks) {
    const tr = journal.transfer(t.transfer_digest);
    if (!tr || tr.attempt_id !== t.attempt_id || tr.outcome !== 'passed') return { rows: out, broken: true };
    out.push(tr);
  }
  return { rows: out, broken: false };
}
