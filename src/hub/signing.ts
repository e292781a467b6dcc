// What the Hub signs with its receipt key (hub serve --receipt-key-dir): qualification answers, bound
// to the request's subject and nonce (core/contract/answer-signature.ts), and receipt bundles' DSSE
// envelopes (receipt-bundle.ts).

import type { KeyObject } from 'node:crypto';
import type { JsonValue } from '../core/canonical/json.js';
import { HUB_SIGNATURE, qualificationSigningDigest } from '../core/contract/answer-signature.js';
import { privateKeyOf, sign, toHex, verificationKeyId, type KeyPair } from '../core/crypto/ed25519.js';

export interface ReceiptKey extends KeyPair {
  readonly keyId: string;
  /** The secret key as node:crypto's key, made once: making it cost about 1 ms of every signed answer. */
  readonly signingKey: KeyObject;
}

export function receiptKey(kp: KeyPair): ReceiptKey {
  return { ...kp, keyId: verificationKeyId(kp.publicKey), signingKey: privateKeyOf(kp.secretKey) };
}

/** The answer with its hub_signature member. */
export function signQualification(answer: JsonValue, subject: JsonValue, nonce: string | null, key: ReceiptKey): JsonValue {
  const a = answer as { [key: string]: JsonValue };
  const sig = sign(qualificationSigningDigest(a, subject, nonce), key.signingKey);
  return { ...a, [HUB_SIGNATURE]: { key_id: key.keyId, sig: toHex(sig) } };
}
