// node:crypto's Ed25519 (OpenSSL): an RFC 8032 implementation independent of the one under test.

import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';

/** A node:crypto public KeyObject from 32 raw public-key bytes (via JWK). */
export function nodePublicKey(pub: Uint8Array): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(pub).toString('base64url') }, format: 'jwk' });
}

/** Verifies with OpenSSL: hex signature over message bytes under a hex public key. */
export function nodeVerifyHex(message: Uint8Array, signatureHex: string, publicKeyHex: string): boolean {
  return verify(null, message, nodePublicKey(Buffer.from(publicKeyHex, 'hex')), Buffer.from(signatureHex, 'hex'));
}

/**
 * The project's digest rule written out independently of src/core/crypto/digest.ts:
 * SHA-256(ASCII domain || 0x00 || u64 big-endian length || bytes), as 64 lowercase hex.
 */
export function referenceDomainDigest(domain: string, bytes: Uint8Array): string {
  const len = Buffer.alloc(8);
  len.writeBigUInt64BE(BigInt(bytes.length));
  return createHash('sha256').update(Buffer.concat([Buffer.from(domain, 'ascii'), Buffer.from([0]), len, bytes])).digest('hex');
}
