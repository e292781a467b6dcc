// Random bytes for names that must not collide (receipt ids, temporary files): node:crypto's CSPRNG.

import * as crypto from 'node:crypto';

export function randomBytes(n: number): Buffer {
  return crypto.randomBytes(n);
}
