// Ed25519. Signing and public-key derivation use node:crypto (OpenSSL): RFC 8032 signatures are
// deterministic, so they are the same bytes @noble/ed25519 gives, at a fraction of the cost (the pure
// JavaScript scalar multiplications took ~70 ms of every collect). Verification stays on
// @noble/ed25519 with SHA-512 from node:crypto because it must be strict RFC 8032 (non-ZIP215):
// non-canonical S, non-canonical point encodings and small-order public keys fail.

import { createHash, createPrivateKey, createPublicKey, sign as nodeSign, type KeyObject } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { badInput } from '../errors.js';
import { DOMAINS, domainDigest, HEX128, HEX64 } from './digest.js';

ed.hashes.sha512 = (m: Uint8Array) => new Uint8Array(createHash('sha512').update(m).digest());

export interface KeyPair {
  /** 32-byte RFC 8032 seed. */
  readonly secretKey: Uint8Array;
  readonly publicKey: Uint8Array;
}

export function generateKeyPair(): KeyPair {
  const { secretKey, publicKey } = ed.keygen();
  return { secretKey, publicKey };
}

/** PKCS#8 DER of an Ed25519 private key, up to the 32 seed bytes (RFC 8410). */
const PKCS8_SEED_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * The node:crypto key of a seed. Making it parses PKCS#8 (about a millisecond in OpenSSL 3's decoder):
 * a signer of many messages (the Hub's receipt key) makes it once and passes it to sign.
 */
export function privateKeyOf(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw badInput('an Ed25519 secret key is 32 bytes', 'BAD_SECRET_KEY');
  return createPrivateKey({ key: Buffer.concat([PKCS8_SEED_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

export function publicKeyFromSeed(seed: Uint8Array): Uint8Array {
  const spki = createPublicKey(privateKeyOf(seed)).export({ format: 'der', type: 'spki' });
  return new Uint8Array(spki.subarray(spki.length - 32));
}

/** The RFC 8032 signature of message by the seed secretKey, or by its key made with privateKeyOf. */
export function sign(message: Uint8Array, secretKey: Uint8Array | KeyObject): Uint8Array {
  return new Uint8Array(nodeSign(null, message, secretKey instanceof Uint8Array ? privateKeyOf(secretKey) : secretKey));
}

/** Strict verification; false for any malformed or non-canonical input, never throws. */
export function verifyStrict(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  try {
    return ed.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

/**
 * Parses an operator-supplied public key: 64 lowercase hex, a canonical encoding of a curve point,
 * and not of small order. Anything else is BAD_INPUT, before a caller writes anything.
 */
export function parsePublicKeyHex(hex: string): Uint8Array {
  if (!HEX64.test(hex)) throw badInput('public key must be 64 lowercase hex characters', 'BAD_PUBLIC_KEY');
  const bytes = Buffer.from(hex, 'hex');
  let point: ed.Point;
  try {
    point = ed.Point.fromBytes(bytes, false);
  } catch {
    throw badInput('public key is not a canonical Ed25519 point encoding', 'BAD_PUBLIC_KEY');
  }
  if (point.isSmallOrder()) throw badInput('public key is a small-order point', 'BAD_PUBLIC_KEY');
  return new Uint8Array(bytes);
}

export function parseSignatureHex(hex: string): Uint8Array {
  if (!HEX128.test(hex)) throw badInput('signature must be 128 lowercase hex characters', 'BAD_SIGNATURE');
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/** The verification key id: domain-separated SHA-256 of the 32 raw public-key bytes, 64 hex. */
export function verificationKeyId(publicKey: Uint8Array): string {
  return domainDigest(DOMAINS.verificationKey, publicKey);
}

export const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
