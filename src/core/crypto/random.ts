// Random bytes for names that must not collide (receipt ids, temporary files), read from the kernel's
// CSPRNG directly where there is one: loading node:crypto for a few bytes costs a cold process about
// 6 ms, which the lifecycle hook cannot spare. Elsewhere node:crypto supplies them.

import * as fs from 'node:fs';
import { nodeCrypto } from './lazy.js';

export function randomBytes(n: number): Buffer {
  const out = Buffer.alloc(n);
  let fd: number | undefined;
  try {
    fd = fs.openSync('/dev/urandom', 'r');
    if (fs.readSync(fd, out, 0, n, null) === n) return out;
  } catch {
    // No /dev/urandom here: fall through.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  return nodeCrypto().randomBytes(n);
}
