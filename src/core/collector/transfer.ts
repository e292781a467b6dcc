// The collector's typed records and its signed transfer (seed 000, "Operator-enrolled collector
// transfer"). Shared by the Hub (which regenerates the request and checks every binding on import) and by
// `agent-task collect` (which builds the same request from its local authority and signs the header).
// No zod here: both sides decode with their own strict checks.
//
// Transfer bytes:
//   MAGIC (30 bytes: "agentscm-collector-transfer/1" NUL)
//   u64be header length, header (canonical JSON, below)
//   64 bytes Ed25519 signature over the 32 raw bytes of domainDigest(transferHeader, header)
//   the records, in the order and with the lengths and digests the header lists
// Nothing else: no artifact URL, run projection, database or receipt field, and no trailing bytes.

import { canonicalJsonBytes, type JsonValue } from '../canonical/json.js';
import { DOMAINS, domainDigest, domainDigestBytes, sha256Hex } from '../crypto/digest.js';
import { badInput } from '../errors.js';

/** The envelope bound of one transfer (the upload route refuses a larger declared body before reading). */
export const TRANSFER_MAX_BYTES = 16 * 1024 * 1024;
export const TRANSFER_MAGIC = Buffer.from('agentscm-collector-transfer/1\0', 'ascii');
/** Bound on the header JSON; the records carry the bulk. */
export const HEADER_MAX_BYTES = 64 * 1024;

/** CommandRecipe: everything a command collector runs, pinned by the operator's profile. */
export interface CommandRecipe {
  readonly image_id: string;
  readonly argv: readonly string[];
  readonly working_dir: string;
  readonly timeout_ms: number;
  readonly max_output_bytes: number;
  readonly network: 'none';
}

/** An installed collector profile (format version 1; docs/COLLECTOR.md). */
export interface CollectorProfile {
  readonly version: 1;
  readonly kind: 'command';
  readonly repository: string;
  readonly profile: string;
  readonly step_id: string;
  readonly registration_id: string;
  readonly registration_epoch: number;
  readonly recipe: CommandRecipe;
  readonly runtime_identity_digest: string;
}

export function collectorProfileJson(p: CollectorProfile): JsonValue {
  return {
    version: 1,
    kind: 'command',
    repository: p.repository,
    profile: p.profile,
    step_id: p.step_id,
    registration_id: p.registration_id,
    registration_epoch: p.registration_epoch,
    recipe: recipeJson(p.recipe),
    runtime_identity_digest: p.runtime_identity_digest,
  };
}

export function recipeJson(r: CommandRecipe): JsonValue {
  return { image_id: r.image_id, argv: [...r.argv], working_dir: r.working_dir, timeout_ms: r.timeout_ms, max_output_bytes: r.max_output_bytes, network: 'none' };
}

export function collectorProfileBytes(p: CollectorProfile): Buffer {
  return canonicalJsonBytes(collectorProfileJson(p));
}

export function collectorProfileDigest(p: CollectorProfile): string {
  return domainDigest(DOMAINS.collectorProfile, collectorProfileBytes(p));
}

/** What binds an execution: the exact task, attempt and profile installation it was claimed under. */
export interface ExecutionBinding {
  readonly repository: string;
  readonly profile: string;
  readonly step_id: string;
  readonly revision: string;
  readonly task_id: string;
  readonly task_digest: string;
  readonly attempt_id: string;
  readonly attempt_digest: string;
  readonly execution_operation_id: string;
  readonly fence: number;
  readonly collector_profile_install_id: string;
  readonly collector_profile_digest: string;
}

/**
 * ExecutionRequest: the immutable request, a pure function of the binding and the pinned profile. The
 * Hub regenerates these bytes on import and requires them byte for byte; candidate data never enters.
 */
export function executionRequestBytes(b: ExecutionBinding, p: CollectorProfile): Buffer {
  return canonicalJsonBytes({
    version: 1,
    type: 'execution_request',
    repository: b.repository,
    profile: b.profile,
    step_id: b.step_id,
    revision: b.revision,
    task_id: b.task_id,
    task_digest: b.task_digest,
    attempt_id: b.attempt_id,
    attempt_digest: b.attempt_digest,
    execution_operation_id: b.execution_operation_id,
    fence: b.fence,
    collector_profile: { install_id: b.collector_profile_install_id, profile_digest: b.collector_profile_digest },
    recipe: recipeJson(p.recipe),
    runtime_identity_digest: p.runtime_identity_digest,
  });
}

export function executionRequestDigest(bytes: Uint8Array): string {
  return domainDigest(DOMAINS.executionRequest, bytes);
}

export interface CapturedOutput {
  readonly sha256: string;
  readonly total_bytes: number;
  readonly truncated: boolean;
  /** The captured bytes, base64 (at most the recipe's max_output_bytes decoded). */
  readonly data_base64: string;
}

/** ExecutionRecord: what the run observed. outcome is derived, and the Hub derives it again. */
export interface ExecutionRecord {
  readonly version: 1;
  readonly type: 'execution_record';
  readonly execution_request_digest: string;
  readonly outcome: 'passed' | 'failed';
  readonly exit_code: number;
  readonly timed_out: boolean;
  readonly oom_killed: boolean;
  readonly started_at: string;
  readonly finished_at: string;
  readonly stdout: CapturedOutput;
  readonly stderr: CapturedOutput;
  readonly observed_runtime_identity_digest: string;
  readonly isolation: {
    readonly network: 'none';
    readonly snapshot_read_only: boolean;
    readonly root_read_only: boolean;
    readonly capabilities_dropped: boolean;
    readonly no_new_privileges: boolean;
  };
  readonly cleanup: { readonly container_removed: boolean };
  /** True when the record was completed from the still-existing container after a collector crash. */
  readonly recovered: boolean;
}

/** The outcome rule both sides apply: passed only for exit 0, no timeout, no OOM kill. */
export function deriveOutcome(r: { exit_code: number; timed_out: boolean; oom_killed: boolean }): 'passed' | 'failed' {
  return r.exit_code === 0 && !r.timed_out && !r.oom_killed ? 'passed' : 'failed';
}

export function executionRecordBytes(r: ExecutionRecord): Buffer {
  const out = (c: CapturedOutput) => ({ sha256: c.sha256, total_bytes: c.total_bytes, truncated: c.truncated, data_base64: c.data_base64 });
  return canonicalJsonBytes({
    version: 1,
    type: 'execution_record',
    execution_request_digest: r.execution_request_digest,
    outcome: r.outcome,
    exit_code: r.exit_code,
    timed_out: r.timed_out,
    oom_killed: r.oom_killed,
    started_at: r.started_at,
    finished_at: r.finished_at,
    stdout: out(r.stdout),
    stderr: out(r.stderr),
    observed_runtime_identity_digest: r.observed_runtime_identity_digest,
    isolation: { ...r.isolation },
    cleanup: { ...r.cleanup },
    recovered: r.recovered,
  });
}

export interface RecordEntry {
  readonly type: 'execution_request' | 'execution_record' | 'review_request' | 'review_record';
  readonly length: number;
  readonly digest: string;
}

/** The signed header: every binding the seed lists. */
export interface TransferHeader {
  readonly version: 1;
  readonly audience: string;
  readonly repository: string;
  readonly profile: string;
  readonly step_id: string;
  readonly task_id: string;
  readonly task_digest: string;
  readonly attempt_id: string;
  readonly attempt_digest: string;
  readonly execution_operation_id: string;
  readonly fence: number;
  readonly origin: { readonly owner_id: string; readonly agent_id: string; readonly grant_generation: string };
  readonly registration: { readonly registration_id: string; readonly executor_id: string; readonly registration_epoch: number; readonly verification_key_id: string };
  readonly collector_profile: { readonly install_id: string; readonly profile_digest: string };
  readonly execution_request_digest: string;
  readonly observed_runtime_identity_digest: string;
  readonly upload_request_id: string;
  readonly records: readonly RecordEntry[];
}

/** A review transfer's header: the same bindings, with the ReviewRequest and the observed reviewer identity. */
export type ReviewTransferHeader = Omit<TransferHeader, 'execution_request_digest' | 'observed_runtime_identity_digest'> & {
  readonly review_request_digest: string;
  readonly observed_reviewer_identity_digest: string;
};

export function headerBytes(h: TransferHeader | ReviewTransferHeader): Buffer {
  const tail: JsonValue = 'review_request_digest' in h
    ? { review_request_digest: h.review_request_digest, observed_reviewer_identity_digest: h.observed_reviewer_identity_digest }
    : { execution_request_digest: h.execution_request_digest, observed_runtime_identity_digest: h.observed_runtime_identity_digest };
  return canonicalJsonBytes({
    version: 1,
    audience: h.audience,
    repository: h.repository,
    profile: h.profile,
    step_id: h.step_id,
    task_id: h.task_id,
    task_digest: h.task_digest,
    attempt_id: h.attempt_id,
    attempt_digest: h.attempt_digest,
    execution_operation_id: h.execution_operation_id,
    fence: h.fence,
    origin: { owner_id: h.origin.owner_id, agent_id: h.origin.agent_id, grant_generation: h.origin.grant_generation },
    registration: {
      registration_id: h.registration.registration_id,
      executor_id: h.registration.executor_id,
      registration_epoch: h.registration.registration_epoch,
      verification_key_id: h.registration.verification_key_id,
    },
    collector_profile: { install_id: h.collector_profile.install_id, profile_digest: h.collector_profile.profile_digest },
    ...(tail as Record<string, JsonValue>),
    upload_request_id: h.upload_request_id,
    records: h.records.map((r) => ({ type: r.type, length: r.length, digest: r.digest })),
  });
}

/** The 32 bytes the collector key signs: the domain-separated digest of the exact header bytes. */
export function headerSigningDigest(header: Uint8Array): Buffer {
  return domainDigestBytes(DOMAINS.transferHeader, header);
}

export function recordEntry(type: RecordEntry['type'], bytes: Uint8Array): RecordEntry {
  const domain = { execution_request: DOMAINS.executionRequest, execution_record: DOMAINS.executionRecord, review_request: DOMAINS.reviewRequest, review_record: DOMAINS.reviewRecord }[type];
  return { type, length: bytes.byteLength, digest: domainDigest(domain, bytes) };
}

/** Assembles transfer bytes from the header bytes, its signature and the records in header order. */
export function encodeTransfer(header: Buffer, signature: Uint8Array, records: readonly Uint8Array[]): Buffer {
  if (signature.byteLength !== 64) throw badInput('a transfer signature is 64 bytes', 'BAD_SIGNATURE');
  const len = Buffer.alloc(8);
  len.writeBigUInt64BE(BigInt(header.length));
  const out = Buffer.concat([TRANSFER_MAGIC, len, header, signature, ...records]);
  if (out.length > TRANSFER_MAX_BYTES) throw badInput(`the transfer is ${out.length} bytes, over the ${TRANSFER_MAX_BYTES}-byte envelope`, 'TRANSFER_TOO_LARGE');
  return out;
}

export interface DecodedTransfer {
  readonly header: Buffer;
  readonly signature: Buffer;
  /** The records, sliced by the lengths the caller reads from the parsed header. */
  readonly rest: Buffer;
}

/** Splits transfer bytes into header, signature and the record area; the framing must be exact. */
export function splitTransfer(bytes: Buffer): DecodedTransfer {
  if (bytes.length > TRANSFER_MAX_BYTES) throw badInput('transfer over the envelope bound', 'TRANSFER_TOO_LARGE');
  if (bytes.length < TRANSFER_MAGIC.length + 8 + 64 || !bytes.subarray(0, TRANSFER_MAGIC.length).equals(TRANSFER_MAGIC)) throw badInput('not a collector transfer', 'BAD_TRANSFER');
  const hlen = bytes.readBigUInt64BE(TRANSFER_MAGIC.length);
  if (hlen > BigInt(HEADER_MAX_BYTES)) throw badInput('transfer header over its bound', 'BAD_TRANSFER');
  const hstart = TRANSFER_MAGIC.length + 8;
  const hend = hstart + Number(hlen);
  if (hend + 64 > bytes.length) throw badInput('truncated transfer', 'BAD_TRANSFER');
  return { header: bytes.subarray(hstart, hend), signature: bytes.subarray(hend, hend + 64), rest: bytes.subarray(hend + 64) };
}

/** Slices the record area by the header's ordered lengths, checking each digest; no trailing bytes. */
export function sliceRecords(rest: Buffer, entries: readonly RecordEntry[]): Buffer[] {
  const out: Buffer[] = [];
  let off = 0;
  for (const e of entries) {
    if (!Number.isSafeInteger(e.length) || e.length < 0 || off + e.length > rest.length) throw badInput('record lengths do not match the transfer', 'BAD_TRANSFER');
    const b = rest.subarray(off, off + e.length);
    if (recordEntry(e.type, b).digest !== e.digest) throw badInput(`the ${e.type} record does not match its header digest`, 'RECORD_DIGEST_MISMATCH');
    out.push(b);
    off += e.length;
  }
  if (off !== rest.length) throw badInput('trailing bytes after the records', 'BAD_TRANSFER');
  return out;
}

/** Identity of a transfer: the signed header's digest (the header commits to every record). */
export function transferDigest(header: Uint8Array): string {
  return domainDigest(DOMAINS.transferHeader, header);
}

/** Plain SHA-256 of the whole transfer: what an exact retry must repeat byte for byte. */
export function transferBytesDigest(bytes: Uint8Array): string {
  return sha256Hex(bytes);
}

type BindingField = 'audience' | 'repository' | 'profile' | 'step_id' | 'task_id' | 'task_digest' | 'attempt_id' | 'attempt_digest' | 'execution_operation_id' | 'fence' | 'origin' | 'registration' | 'collector_profile';

/**
 * The header fields every transfer kind shares, in their signed order: what the descriptor bound the
 * attempt to (the kind's own digests and records follow them).
 */
export function transferBinding(d: Pick<TransferHeader, BindingField>) {
  return {
    version: 1,
    audience: d.audience,
    repository: d.repository,
    profile: d.profile,
    step_id: d.step_id,
    task_id: d.task_id,
    task_digest: d.task_digest,
    attempt_id: d.attempt_id,
    attempt_digest: d.attempt_digest,
    execution_operation_id: d.execution_operation_id,
    fence: d.fence,
    origin: d.origin,
    registration: d.registration,
    collector_profile: d.collector_profile,
  } as const;
}

