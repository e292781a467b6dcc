// The Hub's receipt key as others see it: `hub serve --receipt-key-dir` records the public key in the
// data dir (DATA_DIR/hub-receipt-key.json), so that `install-stop` can pin it without a --hub-key.
// Only the public key is ever written there; the secret stays in the owner-private key directory.

import * as path from 'node:path';
import { canonicalJson, parseStrictJson } from '../canonical/json.js';
import { localState } from '../errors.js';
import { lstatOrUndefined, readPrivateFile, replaceDurably } from '../fs/safe.js';
import { HEX64 } from './digest.js';
import { parsePublicKeyHex, toHex, verificationKeyId } from './ed25519.js';

export const HUB_KEY_FILE = 'hub-receipt-key.json';

/** Records the Hub's receipt public key in the data dir (replaced when the key changed). */
export function publishHubKey(dataDir: string, publicKey: Uint8Array): void {
  const doc = canonicalJson({ version: 1, algorithm: 'ed25519', public_key: toHex(publicKey), verification_key_id: verificationKeyId(publicKey) }) + '\n';
  const file = path.join(dataDir, HUB_KEY_FILE);
  if (lstatOrUndefined(file)?.isFile()) {
    try {
      if (readPrivateFile(file, 'Hub key file', 4096).toString('utf8') === doc) return;
    } catch {
      // Replaced below.
    }
  }
  replaceDurably(file, doc, 0o600);
}

/** The recorded Hub public key, or undefined when the Hub never served with a receipt key. */
export function readHubKey(dataDir: string): Uint8Array | undefined {
  const file = path.join(dataDir, HUB_KEY_FILE);
  if (!lstatOrUndefined(file)) return undefined;
  const bytes = readPrivateFile(file, 'Hub key file', 4096);
  let doc: unknown;
  try {
    doc = parseStrictJson(bytes, { maxBytes: 4096, what: 'Hub key file' });
  } catch {
    throw localState('the Hub key file is corrupt', 'HUB_KEY_CORRUPT');
  }
  const d = doc as Record<string, unknown>;
  if (!d || typeof d !== 'object' || d.version !== 1 || d.algorithm !== 'ed25519' || typeof d.public_key !== 'string' || !HEX64.test(d.public_key)) {
    throw localState('the Hub key file is corrupt', 'HUB_KEY_CORRUPT');
  }
  const pk = parsePublicKeyHex(d.public_key);
  if (d.verification_key_id !== verificationKeyId(pk)) throw localState('the Hub key file is corrupt', 'HUB_KEY_CORRUPT');
  return pk;
}
