// Bridge and identity fingerprints. The bridge fingerprint is the protocol-1 interoperability encoding
// (seed 003): SHA-256 over a stream of fields, each a u64 big-endian UTF-8 byte length then the bytes.
// It carries no domain prefix because other implementations recompute it byte-for-byte.

import { compareUtf8 } from '../../canonical/json.js';
import { DOMAINS, domainDigest, sha256Hex } from '../../crypto/digest.js';

export interface OwnedFile {
  readonly path: string;
  readonly sha256: string;
}

export interface ManagedBlock {
  readonly path: string;
  readonly block_id: string;
  readonly sha256: string;
  /** Adapter-owned whitespace immediately before the block: "", "\n" or "\n\n". */
  readonly leading_separator: string;
}

export const LEADING_SEPARATORS = ['', '\n', '\n\n'] as const;

/** Appends one length-delimited field: u64 big-endian byte length, then the UTF-8 bytes. */
export function lengthPrefixed(fields: readonly string[]): Buffer {
  const encoded = fields.map((f) => Buffer.from(f, 'utf8'));
  let total = 0;
  for (const b of encoded) total += 8 + b.length;
  const out = Buffer.alloc(total);
  let off = 0;
  for (const b of encoded) {
    out.writeBigUInt64BE(BigInt(b.length), off);
    out.set(b, off + 8);
    off += 8 + b.length;
  }
  return out;
}

function compareTuples(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = compareUtf8(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

/** The field stream: harness, adapter version, sorted files ("file", path, sha), sorted blocks. */
export function bridgeFingerprintFields(harnessId: string, adapterVersion: string, files: readonly OwnedFile[], blocks: readonly ManagedBlock[]): string[] {
  const fields = [harnessId, adapterVersion];
  const sortedFiles = [...files].sort((a, b) => compareTuples([a.path, a.sha256], [b.path, b.sha256]));
  for (const f of sortedFiles) fields.push('file', f.path, f.sha256);
  const key = (m: ManagedBlock) => [m.path, m.block_id, m.sha256, m.leading_separator];
  const sortedBlocks = [...blocks].sort((a, b) => compareTuples(key(a), key(b)));
  for (const m of sortedBlocks) fields.push('block', m.path, m.block_id, m.sha256, m.leading_separator);
  return fields;
}

export function bridgeFingerprint(harnessId: string, adapterVersion: string, files: readonly OwnedFile[], blocks: readonly ManagedBlock[]): string {
  return sha256Hex(lengthPrefixed(bridgeFingerprintFields(harnessId, adapterVersion, files, blocks)));
}

/** Identifies the project by its canonical real path; never stored as a path, only as this digest. */
export function projectRootFingerprint(realProjectRoot: string): string {
  return domainDigest(DOMAINS.treeRingProjectRoot, Buffer.from(realProjectRoot, 'utf8'));
}

/** A worker's key: the harness plus the host-derived agent profile (distinct per subagent). */
export function workerKeyFingerprint(harnessId: string, agentProfile: string): string {
  return domainDigest(DOMAINS.treeRingWorker, lengthPrefixed([harnessId, agentProfile]));
}

/** Digest of the set of memory IDs actually included (sorted by UTF-8 bytes; empty set allowed). */
export function selectedIdsDigest(ids: readonly string[]): string {
  return domainDigest(DOMAINS.treeRingSelectedIds, lengthPrefixed([...ids].sort(compareUtf8)));
}
