// Signed qualification answers: with a receipt key, the Hub signs each qualification answer over its
// canonical bytes, bound to the subject of the request and the nonce the caller sent, so that a Stop
// hook that pins the Hub's public key believes only the Hub, and only for this request. Lean (node:crypto
// and the canonical encoder): the Stop hook verifies on every stop.

import { canonicalSortedJson, type JsonValue } from '../canonical/json.js';
import { DOMAINS, domainDigestBytes, HEX128, HEX64 } from '../crypto/digest.js';
import { ed25519PublicKey, verifyEd25519With } from '../crypto/ed25519-verify.js';
import type { KeyObject } from 'node:crypto';

/** The answer member that carries the signature; the signed answer is the document without it. */
export const HUB_SIGNATURE = 'hub_signature';

export interface HubSignature {
  /** verificationKeyId of the Hub's receipt key. */
  readonly key_id: string;
  /** 128 lowercase hex: Ed25519 over qualificationSigningDigest. */
  readonly sig: string;
}

type Obj = { [key: string]: JsonValue };

/** The answer without its signature member. */
export function unsignedAnswer(answer: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(answer)) if (k !== HUB_SIGNATURE) out[k] = v;
  return out;
}

/**
 * The 32 bytes the Hub signs: SHA-256 under the qualification-answer domain of the key-sorted canonical JSON of
 * {answer (without hub_signature), nonce (64 hex, or null when the request sent none), subject (as
 * requested)}.
 */
export function qualificationSigningDigest(answer: Obj, subject: JsonValue, nonce: string | null): Buffer {
  return domainDigestBytes(DOMAINS.qualificationAnswer, Buffer.from(canonicalSortedJson({ answer: unsignedAnswer(answer), nonce, subject }), 'utf8'));
}

/** A pinned Hub key made ready to check answers: the node:crypto key (undefined: not a key) and its key id. */
export interface PinnedHubKey {
  readonly key: KeyObject | undefined;
  readonly keyId: string;
}

export function pinnedHubKey(publicKey: Uint8Array, keyId: string): PinnedHubKey {
  return { key: ed25519PublicKey(publicKey), keyId };
}

/**
 * Whether answer carries a valid signature of the pinned key for exactly this subject and nonce.
 * Missing, malformed, another key's or another request's signature: false.
 */
export function verifyQualificationAnswer(answer: JsonValue, subject: JsonValue, nonce: string, publicKey: Uint8Array, keyId: string): boolean {
  return verifyPinnedAnswer(answer, subject, nonce, pinnedHubKey(publicKey, keyId));
}

/** verifyQualificationAnswer with the key already made (pinnedHubKey). */
export function verifyPinnedAnswer(answer: JsonValue, subject: JsonValue, nonce: string, pinned: PinnedHubKey): boolean {
  const { key, keyId } = pinned;
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return false;
  const s = answer[HUB_SIGNATURE];
  if (typeof s !== 'object' || s === null || Array.isArray(s)) return false;
  if (Object.keys(s).sort().join(',') !== 'key_id,sig') return false;
  if (typeof s.key_id !== 'string' || typeof s.sig !== 'string' || !HEX64.test(s.key_id) || !HEX128.test(s.sig) || s.key_id !== keyId) return false;
  return verifyEd25519With(Buffer.from(s.sig, 'hex'), qualificationSigningDigest(answer, subject, nonce), key);
}
