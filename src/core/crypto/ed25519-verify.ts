// Ed25519 verification with node:crypto alone, for the Stop hook path (no @noble/ed25519 there): the
// hook checks the pinned Hub key's signature on every stop. OpenSSL's Ed25519 verify rejects a
// non-canonical S; a malformed key or signature is simply "does not verify".

import { createPublicKey, verify } from 'node:crypto';

/** SubjectPublicKeyInfo DER of an Ed25519 key, up to the 32 raw key bytes (RFC 8410). */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** Whether signature is a valid Ed25519 signature of message under the 32-byte publicKey; never throws. */
export function verifyEd25519(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  try {
    const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}
