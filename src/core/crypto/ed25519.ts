// Ed25519 over @noble/ed25519 with SHA-512 from node:crypto. Verification is strict RFC 8032
// (non-ZIP215): non-canonical S, non-canonical point encodings and small-order public keys fail.

import { createHash } from 'node:crypto';
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

export function publicKeyFromSeed(seed: Uint8Array): Uint8Array {
  return ed.getPublicKey(seed);
}

export function sign(message: Uint8Array, secretKey: Uint8Array): Uint8Array {
  return ed.sign(message, secretKey);
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
