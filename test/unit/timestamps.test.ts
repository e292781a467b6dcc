// Whether a tree gets fine timestamps from this host's clock (src/core/fs/timestamps.ts): the mount
// table's parsing, a mount beneath a directory, and the answers for directories this machine has.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { fineTimestamps, mountedBelow, mountPoints, subSecondTimes } from '../../src/core/fs/timestamps.js';

const MOUNTINFO = [
  '22 27 0:21 / /proc rw,relatime - proc proc rw',
  '27 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw',
  '30 27 0:40 / /home/a\\040b/work/cache rw,relatime shared:5 - tmpfs tmpfs rw',
  '31 27 0:41 / /srv/data\\134x rw - nfs4 host:/x rw',
  '',
].join('\n');

test('mountPoints reads the fifth field of each line and decodes its octal escapes', () => {
  assert.deepEqual(mountPoints(MOUNTINFO), ['/proc', '/', '/home/a b/work/cache', '/srv/data\\x']);
});

test('mountedBelow: a mount strictly beneath the directory, not the directory itself or a sibling with the same prefix', () => {
  const points = mountPoints(MOUNTINFO);
  assert.equal(mountedBelow('/home/a b/work', points), true);
  assert.equal(mountedBelow('/home/a b/work/', points), true);
  assert.equal(mountedBelow('/home/a b/work/cache', points), false, 'the mount point itself');
  assert.equal(mountedBelow('/home/a b/wor', points), false, 'a name that only starts the same');
  assert.equal(mountedBelow('/srv', points), true);
  assert.equal(mountedBelow('/', points), true);
  assert.equal(mountedBelow('/tmp', points), false);
});

test('subSecondTimes: whole-second times are those of a file system that keeps seconds', () => {
  assert.equal(subSecondTimes(1_700_000_000_000, 1_700_000_000_000), false);
  assert.equal(subSecondTimes(1_700_000_000_000.5, 1_700_000_000_000), true);
  assert.equal(subSecondTimes(1_700_000_000_000, 1_700_000_000_123), true);
});

test('fineTimestamps: false for the root (other file systems are mounted beneath it), for /proc, and for a missing path; true for a fresh temporary directory on a local file system', { skip: process.platform !== 'linux' }, () => {
  assert.equal(fineTimestamps('/'), false);
  assert.equal(fineTimestamps('/proc'), false);
  assert.equal(fineTimestamps(path.join(os.tmpdir(), 'agentscm-no-such-dir-here')), false);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-ts-'));
  try {
    // ext4, xfs, btrfs, tmpfs or overlayfs: what a temporary directory is on here and in CI.
    const local = [0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630].includes(fs.statfsSync(dir).type >>> 0);
    assert.equal(fineTimestamps(dir), local);
    assert.equal(local, true, 'the temporary directory is on a local file system');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
