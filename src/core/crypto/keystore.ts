// The collector host's signing key in an owner-private key directory. Only public keys ever leave it.

import * as path from 'node:path';
import { canonicalJson, parseStrictJson } from '../canonical/json.js';
import { localState } from '../errors.js';
import { assertPrivateDir, ensurePrivateDir, lstatOrUndefined, publishCreateOnly, readPrivateFile } from '../fs/safe.js';
import { generateKeyPair, publicKeyFromSeed, toHex, verificationKeyId, type KeyPair } from './ed25519.js';
import { HEX64 } from './digest.js';

export const KEY_FILE = 'ed25519-signing-key.json';

export interface KeyInfo {
  readonly public_key: string;
  readonly verification_key_id: string;
}

export function keyInfo(publicKey: Uint8Array): KeyInfo {
  return { public_key: toHex(publicKey), verification_key_id: verificationKeyId(publicKey) };
}

/** Creates a new key in dir; refuses when a key already exists (never overwrites). */
export function generateKey(dir: string): KeyInfo {
  ensurePrivateDir(dir, 'key directory');
  const file = path.join(dir, KEY_FILE);
  if (lstatOrUndefined(file)) throw localState(`a key already exists in ${dir}; refusing to overwrite it`, 'KEY_EXISTS');
  const kp = generateKeyPair();
  const doc = canonicalJson({ version: 1, algorithm: 'ed25519', secret_key: toHex(kp.secretKey), public_key: toHex(kp.publicKey) });
  if (!publishCreateOnly(file, doc + '\n', 0o600)) throw localState(`a key already exists in ${dir}; refusing to overwrite it`, 'KEY_EXISTS');
  return keyInfo(kp.publicKey);
}

/** Loads the key: private dir, private regular file, exact schema, public key matching the seed. */
export function loadKey(dir: string): KeyPair {
  assertPrivateDir(dir, 'key directory');
  const bytes = readPrivateFile(path.join(dir, KEY_FILE), 'signing key file', 4096);
  let doc: unknown;
  try {
    doc = parseStrictJson(bytes, { maxBytes: 4096, what: 'signing key file' });
  } catch {
    throw localState('signing key file is corrupt', 'KEY_CORRUPT');
  }
  const d = doc as Record<string, unknown>;
  const keys = d && typeof d === 'object' ? Object.keys(d).sort().join(',') : '';
  if (
    keys !== 'algorithm,public_key,secret_key,version' ||
    d.version !== 1 ||
    d.algorithm !== 'ed25519' ||
    typeof d.secret_key !== 'string' ||
    typeof d.public_key !== 'string' ||
    !HEX64.test(d.secret_key) ||
    !HEX64.test(d.public_key)
  ) {
    throw localState('signing key file is corrupt', 'KEY_CORRUPT');
  }
  const secretKey = new Uint8Array(Buffer.from(d.secret_key, 'hex'));
  const publicKey = publicKeyFromSeed(secretKey);
  if (toHex(publicKey) !== d.public_key) throw localState('signing key file is corrupt (public key does not match)', 'KEY_CORRUPT');
  return { secretKey, publicKey };
}
