// Receipt bundles: one self-contained file a third party checks offline with the Hub's public key.
// It holds the v2 receipt's exact bytes, the original signed collector transfers it names, the
// enrolled public keys and epochs they were checked against, and an in-toto Statement (subject: the
// revision; predicate: test-result v0.1 with the criteria outcomes and the digests of all of the
// above) in a DSSE envelope signed by the Hub's receipt key, which is also given as a Sigstore bundle
// v0.3 (public-key hint, no transparency log) for Sigstore tooling.

import { canonicalSortedJson, parseStrictJson, type JsonValue } from '../canonical/json.js';

/** Key-sorted canonical JSON bytes: what every digest and signature here is over. */
const sortedBytes = (v: JsonValue): Buffer => Buffer.from(canonicalSortedJson(v), 'utf8');
import { headerSigningDigest, sliceRecords, splitTransfer, transferBytesDigest, transferDigest, type RecordEntry } from '../collector/transfer.js';
import { DOMAINS, domainDigest, HEX64, sha256Hex } from '../crypto/digest.js';
import { verificationKeyId, verifyStrict } from '../crypto/ed25519.js';
import { AgentscmError } from '../errors.js';
import { decodeBase64Strict, IN_TOTO_PAYLOAD_TYPE, pae, type DsseEnvelope } from './dsse.js';

export const BUNDLE_MEDIA_TYPE = 'application/vnd.agentscm.receipt-bundle.v1+json';
export const SIGSTORE_BUNDLE_MEDIA_TYPE = 'application/vnd.dev.sigstore.bundle.v0.3+json';
export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
export const TEST_RESULT_PREDICATE = 'https://in-toto.io/attestation/test-result/v0.1';
/** The name of the Statement's subject: its sha256 is the revision (snapshot root of that domain). */
export const REVISION_SUBJECT_NAME = DOMAINS.snapshot;
/** The configuration entry naming the receipt: its sha256 is the receipt digest (of that domain). */
export const RECEIPT_RESOURCE_NAME = DOMAINS.receipt;

/** An enrolled key as the Hub held it when the bundle was made. */
export interface BundleEnrollment {
  readonly registration_id: string;
  readonly registration_epoch: number;
  readonly repository: string;
  readonly profile: string;
  readonly step_id: string;
  readonly executor_id: string;
  readonly public_key: string;
  readonly verification_key_id: string;
  readonly created_at: number;
  readonly revoked_at: number | null;
}

export interface BundleInput {
  readonly receiptDigest: string;
  readonly receiptBody: Buffer;
  /** When the receipt was finalized (ms): revocation is judged as of this time. */
  readonly finalizedAt: number;
  readonly transfers: readonly { readonly transfer_digest: string; readonly bytes: Buffer }[];
  readonly enrollments: readonly BundleEnrollment[];
  /** "STEP/CRITERION" of every criterion of the receipt's tasks (all passed: the receipt exists). */
  readonly passedTests: readonly string[];
  readonly hubPublicKey: Uint8Array;
  readonly sign: (message: Buffer) => Uint8Array;
}

/** Exactly the fields of a BundleEnrollment, taken from e (an authority row may carry more). */
const enrollmentJson = (e: BundleEnrollment): JsonValue => ({
  registration_id: e.registration_id,
  registration_epoch: e.registration_epoch,
  repository: e.repository,
  profile: e.profile,
  step_id: e.step_id,
  executor_id: e.executor_id,
  public_key: e.public_key,
  verification_key_id: e.verification_key_id,
  created_at: e.created_at,
  revoked_at: e.revoked_at,
});

const enrollmentDigest = (e: JsonValue): string => sha256Hex(sortedBytes(e));

/** The in-toto Statement the envelope carries. */
export function bundleStatement(i: Omit<BundleInput, 'hubPublicKey' | 'sign'>, revision: string): JsonValue {
  return {
    _type: STATEMENT_TYPE,
    subject: [{ name: REVISION_SUBJECT_NAME, digest: { sha256: revision } }],
    predicateType: TEST_RESULT_PREDICATE,
    predicate: {
      result: 'PASSED',
      configuration: [
        { name: RECEIPT_RESOURCE_NAME, digest: { sha256: i.receiptDigest }, annotations: { finalized_at: i.finalizedAt } },
        ...i.transfers.map((t) => ({ name: `transfer:${t.transfer_digest}`, digest: { sha256: transferBytesDigest(t.bytes) } })),
        ...i.enrollments.map((e) => ({ name: `enrollment:${e.registration_id}`, digest: { sha256: enrollmentDigest(enrollmentJson(e)) } })),
      ],
      passedTests: [...i.passedTests],
      warnedTests: [],
      failedTests: [],
    },
  };
}

/** The whole bundle document (bundle.json). */
export function buildBundle(i: BundleInput): JsonValue {
  const receipt = JSON.parse(i.receiptBody.toString('utf8')) as { subject: { revision: string } };
  const payload = sortedBytes(bundleStatement(i, receipt.subject.revision));
  const sig = Buffer.from(i.sign(pae(IN_TOTO_PAYLOAD_TYPE, payload))).toString('base64');
  const keyId = verificationKeyId(i.hubPublicKey);
  const envelope = { payload: payload.toString('base64'), payloadType: IN_TOTO_PAYLOAD_TYPE, signatures: [{ keyid: keyId, sig }] };
  return {
    media_type: BUNDLE_MEDIA_TYPE,
    receipt: { receipt_digest: i.receiptDigest, body_base64: i.receiptBody.toString('base64') },
    transfers: i.transfers.map((t) => ({ transfer_digest: t.transfer_digest, bytes_base64: t.bytes.toString('base64') })),
    enrollments: i.enrollments.map(enrollmentJson),
    hub_key: { public_key: Buffer.from(i.hubPublicKey).toString('hex'), verification_key_id: keyId },
    dsse_envelope: envelope,
    sigstore_bundle: sigstoreBundle(envelope, keyId),
  };
}

/** The envelope as a Sigstore bundle v0.3: the key is named by its hint, no tlog, no timestamps. */
export function sigstoreBundle(envelope: DsseEnvelope, keyId: string): JsonValue {
  return {
    mediaType: SIGSTORE_BUNDLE_MEDIA_TYPE,
    verificationMaterial: { publicKey: { hint: keyId }, tlogEntries: [], timestampVerificationData: { rfc3161Timestamps: [] } },
    dsseEnvelope: { payload: envelope.payload, payloadType: envelope.payloadType, signatures: envelope.signatures.map((s) => ({ sig: s.sig, keyid: s.keyid })) },
  };
}

// ---- verification ----------------------------------------------------------------------------------

export interface VerifiedBundle {
  readonly verified: true;
  readonly revision: string;
  readonly receipt_digest: string;
  readonly repository: string;
  readonly profile: string;
  readonly change_id: string;
  readonly change_version: number;
  readonly finalized_at: number;
  readonly hub_key_id: string;
  readonly tasks: readonly { task_id: string; step_id: string; transfer_digest: string; registration_id: string; registration_epoch: number }[];
  readonly passed_tests: readonly string[];
}

/** Every failure of `receipt verify`: exit 10, with a stable code. */
const fail = (code: string, message: string): AgentscmError => new AgentscmError('VERIFY_FAILED', code, `bundle does not verify: ${message}`);

type Obj = { [key: string]: JsonValue };
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
function obj(v: unknown, what: string): Obj {
  if (!isObj(v)) throw fail('BUNDLE_MALFORMED', `${what} is not an object`);
  return v;
}
function arr(v: unknown, what: string): JsonValue[] {
  if (!Array.isArray(v)) throw fail('BUNDLE_MALFORMED', `${what} is not an array`);
  return v;
}
function str(v: unknown, what: string): string {
  if (typeof v !== 'string') throw fail('BUNDLE_MALFORMED', `${what} is not a string`);
  return v;
}
function hex64(v: unknown, what: string): string {
  const s = str(v, what);
  if (!HEX64.test(s)) throw fail('BUNDLE_MALFORMED', `${what} is not 64 lowercase hex`);
  return s;
}
function b64(v: unknown, what: string): Buffer {
  const b = decodeBase64Strict(v);
  if (!b) throw fail('BUNDLE_MALFORMED', `${what} is not strict base64`);
  return b;
}
function int(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw fail('BUNDLE_MALFORMED', `${what} is not an integer`);
  return v;
}
function parseJsonBytes(b: Buffer, what: string): JsonValue {
  try {
    return parseStrictJson(b, { maxBytes: b.length + 1, what });
  } catch {
    throw fail('BUNDLE_MALFORMED', `${what} is not strict JSON`);
  }
}
const same = (a: JsonValue, b: JsonValue): boolean => canonicalSortedJson(a) === canonicalSortedJson(b);

/**
 * Checks a bundle offline against the trusted Hub key (and the expected revision, when given): the
 * DSSE signature over the Statement, the Sigstore copy of the envelope, the receipt bytes and digest,
 * every transfer's bytes, header digest, collector signature under its enrolled key and epoch, its
 * records and its bindings to the receipt, the enrollments' digests and their revocation as of the
 * receipt. Throws VERIFY_FAILED (exit 10) with a stable code at the first failure.
 */
export function verifyBundle(bytes: Buffer, trustedKey: Uint8Array, expectedRevision?: string): VerifiedBundle {
  try {
    return verifyBundleOrThrow(bytes, trustedKey, expectedRevision);
  } catch (e) {
    // Whatever else a malformed document trips over is still a bundle that does not verify.
    if (e instanceof AgentscmError && e.kind === 'VERIFY_FAILED') throw e;
    throw fail('BUNDLE_MALFORMED', 'the bundle is malformed');
  }
}

function verifyBundleOrThrow(bytes: Buffer, trustedKey: Uint8Array, expectedRevision?: string): VerifiedBundle {
  const doc = obj(parseJsonBytes(bytes, 'bundle'), 'bundle');
  if (doc.media_type !== BUNDLE_MEDIA_TYPE) throw fail('BUNDLE_MALFORMED', 'not a receipt bundle (media_type)');
  if (Object.keys(doc).sort().join(',') !== 'dsse_envelope,enrollments,hub_key,media_type,receipt,sigstore_bundle,transfers') throw fail('BUNDLE_MALFORMED', 'unexpected or missing members');
  const keyId = verificationKeyId(trustedKey);
  const hk = obj(doc.hub_key, 'hub_key');
  if (hk.public_key !== Buffer.from(trustedKey).toString('hex') || hk.verification_key_id !== keyId) throw fail('WRONG_KEY', 'the bundle names another Hub key than the trusted key');

  // 1. The envelope, signed by the trusted key; the Sigstore bundle carries the identical envelope.
  const env = obj(doc.dsse_envelope, 'dsse_envelope');
  if (env.payloadType !== IN_TOTO_PAYLOAD_TYPE) throw fail('BUNDLE_MALFORMED', 'payloadType is not in-toto');
  const payload = b64(env.payload, 'payload');
  const sigs = arr(env.signatures, 'signatures');
  if (sigs.length !== 1) throw fail('BUNDLE_MALFORMED', 'the envelope has not exactly one signature');
  const s0 = obj(sigs[0], 'signature');
  const sig = b64(s0.sig, 'signature');
  if (s0.keyid !== keyId) throw fail('WRONG_KEY', 'the envelope is signed by another key id than the trusted key');
  if (!verifyStrict(sig, pae(IN_TOTO_PAYLOAD_TYPE, payload), trustedKey)) throw fail('SIGNATURE_INVALID', 'the DSSE signature does not verify under the trusted key');
  const sg = obj(doc.sigstore_bundle, 'sigstore_bundle');
  if (!same(sg, sigstoreBundle({ payload: str(env.payload, 'payload'), payloadType: IN_TOTO_PAYLOAD_TYPE, signatures: [{ sig: str(s0.sig, 'sig'), keyid: keyId }] }, keyId))) {
    throw fail('SIGSTORE_MISMATCH', 'the Sigstore bundle is not the same envelope with the trusted key\'s hint');
  }

  // 2. The Statement.
  const st = obj(parseJsonBytes(payload, 'statement'), 'statement');
  if (!sortedBytes(st).equals(payload)) throw fail('BUNDLE_MALFORMED', 'the statement is not canonical JSON');
  if (st._type !== STATEMENT_TYPE || st.predicateType !== TEST_RESULT_PREDICATE) throw fail('BUNDLE_MALFORMED', 'not an in-toto test-result statement');
  const subjects = arr(st.subject, 'subject');
  if (subjects.length !== 1) throw fail('BUNDLE_MALFORMED', 'the statement has not exactly one subject');
  const subj = obj(subjects[0], 'subject');
  if (subj.name !== REVISION_SUBJECT_NAME) throw fail('BUNDLE_MALFORMED', 'the subject is not a revision');
  const revision = hex64(obj(subj.digest, 'subject digest').sha256, 'subject digest');
  if (expectedRevision !== undefined && revision !== expectedRevision) throw fail('REVISION_MISMATCH', 'the statement is about another revision');
  const pred = obj(st.predicate, 'predicate');
  if (pred.result !== 'PASSED') throw fail('NOT_PASSED', 'the predicate result is not PASSED');
  const config = arr(pred.configuration, 'configuration').map((c) => obj(c, 'configuration entry'));
  const digestOf = (name: string): string | undefined => {
    const hits = config.filter((c) => c.name === name);
    if (hits.length !== 1) return undefined;
    return hex64(obj(hits[0]!.digest, `${name} digest`).sha256, `${name} digest`);
  };

  // 3. The receipt: its exact bytes, digest and subject.
  const rc = obj(doc.receipt, 'receipt');
  const receiptBytes = b64(rc.body_base64, 'receipt body');
  const receiptDigest = domainDigest(DOMAINS.receipt, receiptBytes);
  if (rc.receipt_digest !== receiptDigest || digestOf(RECEIPT_RESOURCE_NAME) !== receiptDigest) throw fail('RECEIPT_MISMATCH', 'the receipt bytes are not the signed receipt');
  const receiptEntry = config.find((c) => c.name === RECEIPT_RESOURCE_NAME)!;
  const finalizedAt = int(obj(receiptEntry.annotations, 'receipt annotations').finalized_at, 'finalized_at');
  const receipt = obj(parseJsonBytes(receiptBytes, 'receipt'), 'receipt');
  if (receipt.version !== 2) throw fail('BUNDLE_MALFORMED', 'not a v2 receipt');
  const rs = obj(receipt.subject, 'receipt subject');
  if (rs.revision !== revision) throw fail('REVISION_MISMATCH', 'the receipt is about another revision than the statement');
  const repository = str(rs.repository, 'repository');
  const profile = str(rs.profile, 'profile');

  // 4. Enrollments: exactly the signed ones.
  const enrollments = new Map<string, Obj>();
  for (const e of arr(doc.enrollments, 'enrollments')) {
    const o = obj(e, 'enrollment');
    const id = str(o.registration_id, 'registration_id');
    if (enrollments.has(id)) throw fail('BUNDLE_MALFORMED', 'an enrollment is listed twice');
    if (digestOf(`enrollment:${id}`) !== enrollmentDigest(o)) throw fail('ENROLLMENT_MISMATCH', `enrollment ${id} is not the signed one`);
    enrollments.set(id, o);
  }

  // 5. Transfers: exactly those the receipt names, each verified against its enrollment.
  const transfers = new Map<string, Buffer>();
  for (const t of arr(doc.transfers, 'transfers')) {
    const o = obj(t, 'transfer');
    const d = hex64(o.transfer_digest, 'transfer_digest');
    const b = b64(o.bytes_base64, 'transfer bytes');
    if (transfers.has(d)) throw fail('BUNDLE_MALFORMED', 'a transfer is listed twice');
    if (digestOf(`transfer:${d}`) !== transferBytesDigest(b)) throw fail('TRANSFER_MISMATCH', `transfer ${d} is not the signed one`);
    transfers.set(d, b);
  }
  const tasks = arr(receipt.tasks, 'receipt tasks').map((t) => obj(t, 'receipt task'));
  if (tasks.length === 0) throw fail('BUNDLE_MALFORMED', 'the receipt names no task');
  if (transfers.size !== tasks.length) throw fail('TRANSFER_MISMATCH', 'the bundle does not hold exactly the receipt\'s transfers');
  const out: VerifiedBundle['tasks'][number][] = [];
  for (const t of tasks) {
    const td = hex64(t.transfer_digest, 'transfer_digest');
    const b = transfers.get(td);
    if (!b) throw fail('TRANSFER_MISMATCH', `the receipt's transfer ${td} is missing`);
    if (transferBytesDigest(b) !== t.transfer_bytes_sha256) throw fail('TRANSFER_MISMATCH', `transfer ${td}'s bytes are not the receipt's`);
    let split;
    try {
      split = splitTransfer(b);
    } catch {
      throw fail('TRANSFER_INVALID', `transfer ${td} is not a collector transfer`);
    }
    if (transferDigest(split.header) !== td) throw fail('TRANSFER_MISMATCH', `transfer ${td}'s header does not have its digest`);
    const h = obj(parseJsonBytes(split.header, 'transfer header'), 'transfer header');
    const reg = obj(t.registration, 'registration');
    const hr = obj(h.registration, 'header registration');
    const e = enrollments.get(str(reg.registration_id, 'registration_id'));
    if (!e) throw fail('ENROLLMENT_MISMATCH', `no enrollment for registration ${String(reg.registration_id)}`);
    const pkHex = hex64(e.public_key, 'public_key');
    const pk = Buffer.from(pkHex, 'hex');
    const bound =
      same(hr, { registration_id: reg.registration_id!, executor_id: reg.executor_id!, registration_epoch: reg.registration_epoch!, verification_key_id: reg.verification_key_id! }) &&
      e.registration_epoch === reg.registration_epoch &&
      e.executor_id === reg.executor_id &&
      e.verification_key_id === reg.verification_key_id &&
      verificationKeyId(pk) === reg.verification_key_id &&
      e.repository === repository &&
      e.profile === profile &&
      e.step_id === t.step_id &&
      h.repository === repository &&
      h.profile === profile &&
      h.task_id === t.task_id &&
      h.task_digest === t.task_digest &&
      h.step_id === t.step_id &&
      h.attempt_id === t.attempt_id &&
      h.attempt_digest === t.attempt_digest &&
      h.fence === t.fence &&
      same(obj(h.collector_profile, 'collector_profile'), obj(t.collector_profile, 'collector_profile')) &&
      same(obj(h.origin, 'origin'), obj(t.origin, 'origin'));
    if (!bound) throw fail('BINDING_MISMATCH', `transfer ${td} is not bound to the receipt's task, registration and subject`);
    const revokedAt = e.revoked_at === null ? null : int(e.revoked_at, 'revoked_at');
    if (revokedAt !== null && revokedAt <= finalizedAt) throw fail('REVOKED', `registration ${String(reg.registration_id)} was revoked before the receipt`);
    if (!verifyStrict(split.signature, headerSigningDigest(split.header), pk)) throw fail('SIGNATURE_INVALID', `transfer ${td}'s collector signature does not verify under its enrolled key`);
    let records: Buffer[];
    try {
      records = sliceRecords(split.rest, arr(h.records, 'records') as unknown as RecordEntry[]);
    } catch {
      throw fail('TRANSFER_INVALID', `transfer ${td}'s records do not match its header`);
    }
    const recIdx = (arr(h.records, 'records') as Obj[]).findIndex((r) => r.type === 'execution_record');
    const rec = recIdx < 0 ? undefined : obj(parseJsonBytes(records[recIdx]!, 'execution record'), 'execution record');
    if (!rec || rec.outcome !== 'passed' || rec.exit_code !== 0 || rec.timed_out !== false || rec.oom_killed !== false) throw fail('NOT_PASSED', `transfer ${td} did not record a passing run`);
    out.push({ task_id: str(t.task_id, 'task_id'), step_id: str(t.step_id, 'step_id'), transfer_digest: td, registration_id: String(reg.registration_id), registration_epoch: int(reg.registration_epoch, 'registration_epoch') });
  }
  return {
    verified: true,
    revision,
    receipt_digest: receiptDigest,
    repository,
    profile,
    change_id: str(rs.change_id, 'change_id'),
    change_version: int(rs.change_version, 'change_version'),
    finalized_at: finalizedAt,
    hub_key_id: keyId,
    tasks: out,
    passed_tests: arr(pred.passedTests, 'passedTests').map((x) => str(x, 'passedTests entry')),
  };
}
