// The Hub's side of `receipt export`: the receipt of exactly the named subject, its retained transfers
// with their original bytes, the enrollments they name as the authority holds them now (with any
// revocation time), signed with the receipt key into a bundle (core/attest/receipt-bundle.ts).

import { subjectToJson } from '../core/authority/plan.js';
import { canonicalJson, type JsonValue } from '../core/canonical/json.js';
import { buildBundle, type BundleEnrollment } from '../core/attest/receipt-bundle.js';
import { BUNDLE_MAX_BYTES, type ReceiptBundleRequest } from '../core/contract/export.js';
import { DOMAINS, domainDigest } from '../core/crypto/digest.js';
import { sign } from '../core/crypto/ed25519.js';
import { HubError, notFoundError } from './errors.js';
import type { ReceiptKey } from './signing.js';
import { resolve, type ReadContext, type Scope } from './subjects.js';

interface ReceiptTask {
  task_id: string;
  step_id: string;
  transfer_digest: string;
  registration: { registration_id: string };
}

export function handleReceiptBundle(ctx: ReadContext, scope: Scope, req: ReceiptBundleRequest, key: ReceiptKey | undefined): JsonValue {
  if (!key) throw new HubError(409, 'no_receipt_key', 'this Hub has no receipt key (hub serve --receipt-key-dir)');
  const { subject, tasks } = resolve(ctx, scope, req.subject);
  const journal = ctx.journal();
  const digest = journal?.receiptFor(subject);
  if (!journal || digest === undefined) throw notFoundError('receipt_not_found', 'the subject has no receipt (collector-finalize makes one)');
  const body = journal.receiptBody(digest);
  const finalizedAt = journal.receiptCreatedAt(digest);
  if (body === undefined || finalizedAt === undefined || domainDigest(DOMAINS.receipt, body) !== digest) throw new HubError(409, 'receipt_integrity', 'the stored receipt does not match its digest');
  const receipt = JSON.parse(body.toString('utf8')) as { subject: JsonValue; tasks: ReceiptTask[] };
  if (canonicalJson(receipt.subject) !== canonicalJson(subjectToJson(subject))) throw new HubError(409, 'receipt_integrity', 'the stored receipt is about another subject');
  let size = body.length;
  const transfers = receipt.tasks.map((t) => {
    // The stored length is checked before the bytes are read, as finalization does.
    const stored = journal.transferStoredLength(t.transfer_digest);
    if (stored === undefined) throw new HubError(409, 'receipt_integrity', 'a transfer the receipt names is not retained');
    size += stored;
    if (size * 1.4 > BUNDLE_MAX_BYTES) throw new HubError(413, 'bundle_too_large', `the bundle would exceed ${BUNDLE_MAX_BYTES} bytes`);
    const bytes = journal.transferBytes(t.transfer_digest);
    if (!bytes || bytes.length !== stored) throw new HubError(409, 'receipt_integrity', 'a transfer the receipt names is not retained');
    return { transfer_digest: t.transfer_digest, bytes };
  });
  const enrollments = new Map<string, BundleEnrollment>();
  for (const t of receipt.tasks) {
    const e = ctx.authority.getEnrollment(t.registration.registration_id);
    if (!e) throw new HubError(409, 'receipt_integrity', 'a registration the receipt names is unknown');
    // The bundle encodes only an enrollment's own fields (buildBundle), whatever else the row holds.
    enrollments.set(e.registration_id, e);
  }
  const passedTests: string[] = [];
  for (const t of receipt.tasks) {
    const task = tasks.find((x) => x.task_id === t.task_id);
    for (const c of task?.step.criteria ?? []) passedTests.push(`${t.step_id}/${c.id}`);
  }
  return buildBundle({
    receiptDigest: digest,
    receiptBody: body,
    finalizedAt,
    transfers,
    enrollments: [...enrollments.values()],
    passedTests,
    hubPublicKey: key.publicKey,
    sign: (m) => sign(m, key.signingKey),
  });
}
