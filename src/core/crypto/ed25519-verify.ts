// Ed25519 verification with node:crypto alone, for the Stop hook path (no @noble/ed25519 there): the
// hook checks the pinned Hub key's signature on every stop. OpenSSL's Ed25519 verify rejects a
// non-canonical S; a malformed key or signature is simply "does not verify".

import { createPublicKey, verify, type KeyObject } from 'node:crypto';

/**
 * The 32-byte publicKey as a node:crypto key, or undefined when it is not one. Made once, it checks
 * any number of signatures (the Stop hook makes it while the Hub works on its request). Given as a JWK
 * (RFC 8037: an OKP key, its raw bytes as `x`), which Node hands to OpenSSL as the raw key: the same
 * key as its SubjectPublicKeyInfo DER would give (test/unit/attest-vectors.test.ts), without OpenSSL's
 * DER decoder, whose first use costs a cold process about 0.4 ms more.
 */
export function ed25519PublicKey(publicKey: Uint8Array): KeyObject | undefined {
  if (publicKey.length !== 32) return undefined;
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' });
  } catch {
    return undefined;
  }
}

/** Whether signature is a valid Ed25519 signature of message under key (ed25519PublicKey); never throws. */
export function verifyEd25519With(signature: Uint8Array, message: Uint8Array, key: KeyObject | undefined): boolean {
  if (key === undefined || signature.length !== 64) return false;
  try {
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}

/** Whether signature is a valid Ed25519 signature of message under the 32-byte publicKey; never throws. */
export function verifyEd25519(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  return verifyEd25519With(signature, message, ed25519PublicKey(publicKey));
}
