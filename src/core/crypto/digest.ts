// Domain-separated SHA-256 identities. Every domain string of the project lives in DOMAINS, so that no
// two kinds of identity can ever share a preimage: digest = SHA-256(domain || 0x00 || u64be(len) || bytes).

import { hexOf, putU64be } from '../bytes.js';
import { nodeCrypto, nodeCryptoLoaded } from './lazy.js';
import { sha256, SMALL_INPUT_BYTES } from './sha256.js';

export const DOMAINS = {
  /** Seed 000, "Observation signing bytes": the registered observation digest. */
  observation: 'agentscm.agent-workflow-observation.v1',
  /** Ed25519 verification key id: digest of the 32 raw public-key bytes. */
  verificationKey: 'agentscm.verification-key.v1',
  /** Logical task digest over the canonical task binding. */
  task: 'agentscm.agent-workflow-task.v1',
  /** Attempt digest over the canonical attempt binding. */
  attempt: 'agentscm.agent-workflow-attempt.v1',
  /** Workflow requirement digest over the canonical requirement document. */
  requirement: 'agentscm.workflow-requirement.v1',
  /** Compiled plan digest. */
  plan: 'agentscm.workflow-plan.v1',
  /** Change context digest. */
  context: 'agentscm.change-context.v1',
  /** Snapshot (revision) root over the canonical manifest of paths, modes and content digests. */
  snapshot: 'agentscm.snapshot.v1',
  /** Workspace key: which row of the workspace state a checked-out directory is (over its real path). */
  workspace: 'agentscm.workspace-key.v1',
  /** Logical task id over (repository, profile, change, version, policy epoch, step): stable per subject. */
  taskId: 'agentscm.agent-workflow-task-id.v1',
  /** Workspace bearer token hash, as stored by the authority. */
  token: 'agentscm.workspace-token.v1',
  /** Canonical mutation request digests, one domain per action. */
  requestClaim: 'agentscm.task-request.claim.v1',
  requestHeartbeat: 'agentscm.task-request.heartbeat.v1',
  requestCancel: 'agentscm.task-request.cancel.v1',
  requestReconcile: 'agentscm.task-request.reconcile.v1',
  requestResult: 'agentscm.task-request.result.v1',
  requestCollectorClaim: 'agentscm.task-request.collector-claim.v1',
  requestCollectorFinalize: 'agentscm.task-request.collector-finalize.v1',
  /**
   * The CLI's default execution operation id of a claim, over its request id and task id: repeating the
   * identical command (same --request-id) repeats the identical request.
   */
  executionOperation: 'agentscm.execution-operation-id.v1',
  /** Collector transfer header, execution request and record, runtime identity. */
  transferHeader: 'agentscm.collector-transfer-header.v1',
  executionRequest: 'agentscm.collector-execution-request.v1',
  executionRecord: 'agentscm.collector-execution-record.v1',
  runtimeIdentity: 'agentscm.oci-runtime-identity.v1',
  collectorProfile: 'agentscm.collector-profile.v1',
  /** Collect lock file name, over the attempt id; also names a stale lock's takeover guard. */
  collectLock: 'agentscm.collector-collect-lock.v1',
  /** Stop-hook continuation counter file name, over (host, session, repository, profile, Change, workspace). */
  stopCounter: 'agentscm.agent-stop-counter.v1',
  /** v2 graph receipt. */
  receipt: 'agentscm.workflow-receipt.v2',
  // Tree Ring identities fixed by the upstream store format (a store is shared with upstream binaries,
  // so these strings are not ours to rename).
  /** Hash of the coordinator capability kept in store_policy (standard domainDigest scheme). */
  treeRingCapability: 'tree-ring-coordinator-capability-v1',
  /** Hash of an unsafe audit target id (standard domainDigest scheme). */
  treeRingAuditTarget: 'tree-ring-authorization-audit-target-v1',
  /** Operation namespace claim: domain then per-field presence byte, u64be length, bytes (no NUL). */
  treeRingOperationNamespace: 'tree-ring-operation-namespace-v1',
  /** Synthetic identity of a legacy private-scope event: domain, NUL, scope, NUL, id. */
  treeRingLegacyIdentity: 'tree-ring-memory/legacy-private-scope-identity/v1',
  /** Tree Ring activation: the project-root fingerprint over the canonical real path of the project. */
  treeRingProjectRoot: 'tree-ring.activation.project-root.v1',
  /** Tree Ring activation: a worker's key fingerprint over harness and host-derived worker identity. */
  treeRingWorker: 'tree-ring.activation.worker-key.v1',
  /** Tree Ring activation: the digest of the memory IDs a preflight actually included. */
  treeRingSelectedIds: 'tree-ring.activation.selected-memory-ids.v1',
} as const;

export type Domain = (typeof DOMAINS)[keyof typeof DOMAINS];

/** The exact preimage: ASCII domain, one NUL byte, u64 big-endian length of bytes, then the bytes. */
export function domainPreimage(domain: Domain, bytes: Uint8Array): Buffer {
  return Buffer.concat([domainHeader(domain, bytes.byteLength), bytes]);
}

function domainHeader(domain: Domain, length: number): Buffer {
  const head = Buffer.alloc(domain.length + 1 + 8);
  putHeader(head, domain, length);
  return head;
}

/**
 * Short inputs hash without node:crypto (sha256.ts: WebAssembly, else JavaScript), which spares a
 * short-lived process its load, until the process has hashed enough of them that the load pays (a Hub
 * or the scan of a larger workspace): from then on, node:crypto, which is far faster once warm.
 */
const JS_HASH_BUDGET = 32;
let jsHashes = 0;
function hashInJs(length: number): boolean {
  return length <= SMALL_INPUT_BYTES && !nodeCryptoLoaded() && ++jsHashes <= JS_HASH_BUDGET;
}

/** Domain-separated SHA-256 as raw bytes. */
export function domainDigestBytes(domain: Domain, bytes: Uint8Array): Buffer {
  if (hashInJs(bytes.byteLength)) return bufferOf(sha256(domainHeader(domain, bytes.byteLength), bytes));
  const c = nodeCrypto();
  if (bytes.byteLength <= ONE_SHOT_BYTES) return c.hash('sha256', oneShotPreimage(domain, bytes), 'buffer');
  return c.createHash('sha256').update(domainHeader(domain, bytes.byteLength)).update(bytes).digest();
}

/** Domain-separated SHA-256 as 64 lowercase hex characters. */
export function domainDigest(domain: Domain, bytes: Uint8Array): string {
  if (hashInJs(bytes.byteLength)) return hexOf(sha256(domainHeader(domain, bytes.byteLength), bytes));
  const c = nodeCrypto();
  if (bytes.byteLength <= ONE_SHOT_BYTES) return c.hash('sha256', oneShotPreimage(domain, bytes), 'hex');
  return c.createHash('sha256').update(domainHeader(domain, bytes.byteLength)).update(bytes).digest('hex');
}

/**
 * Inputs up to this size are hashed by node:crypto's one-shot `hash` over the whole preimage, written
 * into one reused scratch buffer: a Hash object (createHash, two updates, digest) costs a Hub more than
 * the copy. Larger ones stream, uncopied.
 */
const ONE_SHOT_BYTES = 64 * 1024;

/** The reused preimage buffer: `hash` is synchronous and keeps no reference to what it hashed. */
let scratch: Buffer | undefined;
const prefixes = new Map<string, Uint8Array>();

/** Room for a preimage of `size` bytes in the scratch buffer. */
function scratchFor(size: number): Buffer {
  if (scratch === undefined || scratch.length < size) scratch = Buffer.allocUnsafe(Math.max(size, 4096));
  return scratch;
}

/**
 * Writes the domain, its NUL and u64be(length) at the start of b; returns where the body goes. Byte by
 * byte and with TypedArray's set (the domain is ASCII): Buffer's write and writeBigUInt64BE cost a cold
 * process their first compilation (core/bytes.ts).
 */
function putHeader(b: Uint8Array, domain: Domain, length: number): number {
  let prefix = prefixes.get(domain);
  if (prefix === undefined) {
    prefix = new Uint8Array(domain.length + 1);
    for (let i = 0; i < domain.length; i++) prefix[i] = domain.charCodeAt(i);
    prefixes.set(domain, prefix);
  }
  b.set(prefix, 0);
  putU64be(b, prefix.length, length);
  return prefix.length + 8;
}

/** The preimage of a body of at most ONE_SHOT_BYTES, as a view of the scratch buffer. */
function oneShotPreimage(domain: Domain, bytes: Uint8Array): Uint8Array {
  const b = scratchFor(domain.length + 9 + bytes.byteLength);
  const n = putHeader(b, domain, bytes.byteLength);
  b.set(bytes, n);
  return b.subarray(0, n + bytes.byteLength);
}

/**
 * domainDigest of a string's UTF-8 bytes. In a process that has node:crypto (a Hub), the text is
 * encoded straight into the preimage: no separate buffer for its bytes.
 */
export function domainDigestOfText(domain: Domain, text: string): string {
  // At most 3 UTF-8 bytes per UTF-16 unit.
  const most = text.length * 3;
  if (!nodeCryptoLoaded() || most > ONE_SHOT_BYTES) return domainDigest(domain, Buffer.from(text, 'utf8'));
  const b = scratchFor(domain.length + 9 + most);
  const n = domain.length + 9;
  const length = b.write(text, n, 'utf8');
  putHeader(b, domain, length);
  return nodeCrypto().hash('sha256', b.subarray(0, n + length), 'hex');
}

/** Plain SHA-256 (no domain) as lowercase hex: content hashes of files and references. */
export function sha256Hex(bytes: Uint8Array | string): string {
  const b = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  if (hashInJs(b.byteLength)) return hexOf(sha256(b));
  // One call over bytes already in memory, whatever their size.
  return nodeCrypto().hash('sha256', b, 'hex');
}

function bufferOf(digest: Uint8Array): Buffer {
  return Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength);
}

export const HEX64 = /^[0-9a-f]{64}$/;
export const HEX128 = /^[0-9a-f]{128}$/;
