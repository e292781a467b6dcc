// Domain-separated SHA-256 identities. Every domain string of the project lives in DOMAINS, so that no
// two kinds of identity can ever share a preimage: digest = SHA-256(domain || 0x00 || u64be(len) || bytes).

import * as crypto from 'node:crypto';

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
  requestReconcileFinalization: 'agentscm.task-request.reconcile-collector-finalization.v1',
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
  /** Finite review controller: ReviewRequest, ReviewRecord, one call's ticket, the observed reviewer identity. */
  reviewRequest: 'agentscm.collector-review-request.v1',
  reviewRecord: 'agentscm.collector-review-record.v1',
  reviewTicket: 'agentscm.collector-review-ticket.v1',
  reviewerIdentity: 'agentscm.collector-reviewer-identity.v1',
  /** Collect lock file name, over the attempt id; also names a stale lock's takeover guard. */
  collectLock: 'agentscm.collector-collect-lock.v1',
  /** Stop-hook continuation counter file name, over (host, session, repository, profile, Change, workspace). */
  stopCounter: 'agentscm.agent-stop-counter.v1',
  /** v2 graph receipt. */
  receipt: 'agentscm.workflow-receipt.v2',
  /** A Hub's signed qualification answer, bound to the request's subject and the caller's nonce. */
  qualificationAnswer: 'agentscm.qualification-answer.v1',
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
  head.write(domain, 0, 'latin1');
  head.writeBigUInt64BE(BigInt(length), domain.length + 1);
  return head;
}

function domainHash(domain: Domain, bytes: Uint8Array): crypto.Hash {
  return crypto.createHash('sha256').update(domainHeader(domain, bytes.byteLength)).update(bytes);
}

/** Domain-separated SHA-256 as raw bytes. */
export function domainDigestBytes(domain: Domain, bytes: Uint8Array): Buffer {
  return domainHash(domain, bytes).digest();
}

/** Domain-separated SHA-256 as 64 lowercase hex characters. */
export function domainDigest(domain: Domain, bytes: Uint8Array): string {
  return domainHash(domain, bytes).digest('hex');
}

/** domainDigest of a string's UTF-8 bytes. */
export function domainDigestOfText(domain: Domain, text: string): string {
  return domainDigest(domain, Buffer.from(text, 'utf8'));
}

/** Plain SHA-256 (no domain) as lowercase hex: content hashes of files and references. */
export function sha256Hex(bytes: Uint8Array | string): string {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

export const HEX64 = /^[0-9a-f]{64}$/;
export const HEX128 = /^[0-9a-f]{128}$/;
