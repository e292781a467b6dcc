// node:crypto's Ed25519 (OpenSSL): an RFC 8032 implementation independent of the one under test.

import { createPublicKey, verify, type KeyObject } from 'node:crypto';

/** A node:crypto public KeyObject from 32 raw public-key bytes (via JWK). */
export function nodePublicKey(pub: Uint8Array): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(pub).toString('base64url') }, format: 'jwk' });
}

/** Verifies with OpenSSL: hex signature over message bytes under a hex public key. */
export function nodeVerifyHex(message: Uint8Array, signatureHex: string, publicKeyHex: string): boolean {
  return verify(null, message, nodePublicKey(Buffer.from(publicKeyHex, 'hex')), Buffer.from(signatureHex, 'hex'));
}
