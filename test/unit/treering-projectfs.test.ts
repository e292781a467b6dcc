// Create-only publication with the directory's fsync overlapping other work (ProjectFs.publishOverlapped,
// used for receipts): same outcomes as publish(), meanwhile runs only after the entry exists, and
// nothing resolves before the directory sync has finished.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { ProjectFs, setDirectorySyncForTests } from '../../src/core/treering/activation/projectfs.js';

const project = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tr-pfs-')));

test('publishOverlapped: created, with meanwhile run once the entry exists; an existing entry is left alone', async () => {
  const pfs = new ProjectFs(project());
  const r = await pfs.publishOverlapped('.tree-ring/a/b.json', '{"x":1}\n', 0o600, 0o700, () => pfs.read('.tree-ring/a/b.json')?.toString());
  assert.deepEqual(r, { outcome: 'created', value: '{"x":1}\n' });
  assert.equal(fs.statSync(pfs.abs('.tree-ring/a/b.json')).mode & 0o777, 0o600);
  assert.equal(fs.statSync(pfs.abs('.tree-ring/a')).mode & 0o777, 0o700);
  let ran = false;
  const again = await pfs.publishOverlapped('.tree-ring/a/b.json', 'other', 0o600, 0o700, () => (ran = true));
  assert.deepEqual(again, { outcome: 'exists' });
  assert.equal(ran, false);
  assert.equal(fs.readFileSync(pfs.abs('.tree-ring/a/b.json'), 'utf8'), '{"x":1}\n');
  assert.deepEqual(fs.readdirSync(pfs.abs('.tree-ring/a')), ['b.json'], 'no temp file left behind');
});

test('publishOverlapped: a failing directory sync is indeterminate; an error of meanwhile waits for the sync', async () => {
  const pfs = new ProjectFs(project());
  const events: string[] = [];
  // A failing fsync(2) on a directory cannot be produced on an ordinary file system: the test hook fakes it.
  setDirectorySyncForTests(() => {
    events.push('sync');
    throw new Error('EIO');
  });
  try {
    const r = await pfs.publishOverlapped('.tree-ring/r.json', 'x', 0o600, 0o700, () => events.push('meanwhile'));
    assert.equal(r.outcome, 'indeterminate');
    assert.ok(events.includes('meanwhile') && events.includes('sync'));
  } finally {
    setDirectorySyncForTests(undefined);
  }
  let synced = false;
  setDirectorySyncForTests(() => {
    synced = true;
  });
  try {
    await assert.rejects(
      pfs.publishOverlapped('.tree-ring/s.json', 'x', 0o600, 0o700, () => {
        throw new Error('verification failed');
      }),
      (e: Error) => e.message === 'verification failed' && synced,
    );
    assert.equal(fs.readFileSync(pfs.abs('.tree-ring/s.json'), 'utf8'), 'x', 'the published entry stays');
  } finally {
    setDirectorySyncForTests(undefined);
  }
});
