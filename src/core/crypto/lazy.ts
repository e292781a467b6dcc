// node:crypto under the name src/core/native/snapshot.ts still imports it by; other modules import
// node:crypto themselves.

import * as crypto from 'node:crypto';

export function nodeCrypto(): typeof crypto {
  return crypto;
}
