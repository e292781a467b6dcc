// Create-only publication with the file's and the directory's fsyncs overlapping other work
// (ProjectFs.publishOverlapped, used for receipts): same outcomes as publish(), written in place under
// the final name (no temp file), meanwhile runs only after the entry holds its bytes, and nothing
// resolves before the syncs have finished. An entry that is a symlink is never written through.

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
  // The mode is applied whatever the umask.
  const old = process.umask(0o777);
  try {
    const m = await pfs.publishOverlapped('.tree-ring/a/m.json', 'm', 0o640, 0o700, () => 0);
    assert.equal(m.outcome, 'created');
  } finally {
    process.umask(old);
  }
  assert.equal(fs.statSync(pfs.abs('.tree-ring/a/m.json')).mode & 0o777, 0o640);
});

test('publishOverlapped: a symlink at the final name is an existing entry, never written through', async () => {
  const root = project();
  const pfs = new ProjectFs(root);
  fs.mkdirSync(pfs.abs('.tree-ring'));
  const target = path.join(root, 'target.txt');
  fs.writeFileSync(target, 'original');
  fs.symlinkSync(target, pfs.abs('.tree-ring/l.json'));
  const dangling = path.join(root, 'nowhere.txt');
  fs.symlinkSync(dangling, pfs.abs('.tree-ring/d.json'));
  assert.deepEqual(await pfs.publishOverlapped('.tree-ring/l.json', 'x', 0o600, 0o700, () => 0), { outcome: 'exists' });
  assert.deepEqual(await pfs.publishOverlapped('.tree-ring/d.json', 'x', 0o600, 0o700, () => 0), { outcome: 'exists' });
  assert.equal(fs.readFileSync(target, 'utf8'), 'original');
  assert.equal(fs.existsSync(dangling), false);
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
