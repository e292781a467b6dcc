// Materializing a snapshot for a collector run (src/collectors/snapshot-stage.ts) from a real native
// store on disk: the staged tree has the manifest's exact bytes, paths and kinds, in the same modes
// whether an entry was hard-linked to its blob or copied; regular files of this store are links,
// executables and blobs of older stores (0o400) are copies, and a data dir on another file system
// (a real one: /dev/shm against the temp dir, when both exist) is copied throughout. A corrupt blob
// stops staging and leaves nothing behind.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { discardStaged, placeSnapshot, snapshotDirOf, stageLinkedSync, STAGED_EXEC_MODE, STAGED_FILE_MODE, verifyLinked, type StageRequest } from '../../src/collectors/snapshot-stage.js';
import { AgentscmError } from '../../src/core/errors.js';
import { BLOB_MODE, SnapshotStore } from '../../src/core/native/snapshot.js';

const roots: string[] = [];

/** Both steps, as collect's worker runs them: the tree, then its linked bytes (a mismatch discards it). */
function stageSnapshotSync(r: StageRequest): string {
  const { dir, unverified } = stageLinkedSync(r);
  try {
    verifyLinked(unverified);
  } catch (e) {
    discardStaged(dir);
    throw e;
  }
  return dir;
}
after(() => roots.forEach((r) => fs.rmSync(r, { recursive: true, force: true })));

function tmp(base = os.tmpdir()): string {
  const d = fs.mkdtempSync(path.join(base, 'agentscm-stage-'));
  roots.push(d);
  return d;
}

const FILES: Record<string, { bytes: Buffer; exec?: boolean }> = {
  'README.md': { bytes: Buffer.from('# demo\n') },
  'src/a.txt': { bytes: Buffer.from('same bytes\n') },
  'src/deep/b.txt': { bytes: Buffer.from('same bytes\n') },
  'check.sh': { bytes: Buffer.from('#!/bin/sh\nexit 0\n'), exec: true },
  'empty': { bytes: Buffer.alloc(0) },
};

/** A git-less workspace recorded into a fresh native store; returns the data dir and revision. */
function recorded(dataBase?: string): { dataDir: string; revision: string; store: SnapshotStore } {
  const ws = tmp();
  for (const [rel, f] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    fs.writeFileSync(path.join(ws, rel), f.bytes, { mode: f.exec ? 0o755 : 0o644 });
  }
  fs.symlinkSync('src/a.txt', path.join(ws, 'link'));
  const dataDir = tmp(dataBase);
  const store = new SnapshotStore(dataDir);
  const { revision } = store.record(ws);
  return { dataDir, revision, store };
}

/** Stages the snapshot once and discards the tree: what leaves the loose blobs a collector links. */
function linkedOnce(dataDir: string, revision: string): void {
  discardStaged(stageSnapshotSync({ stateDir: tmp(), dataDir, revision, attemptId: 'att-once' }));
}

function sha(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

/** The staged tree must be the snapshot: bytes, kinds and modes (the same for links and copies). */
function assertTree(dir: string): void {
  for (const [rel, f] of Object.entries(FILES)) {
    const st = fs.lstatSync(path.join(dir, rel));
    assert.ok(st.isFile(), rel);
    assert.equal(st.mode & 0o7777, f.exec ? STAGED_EXEC_MODE : STAGED_FILE_MODE, rel);
    assert.deepEqual(fs.readFileSync(path.join(dir, rel)), f.bytes, rel);
  }
  assert.equal(fs.readlinkSync(path.join(dir, 'link')), 'src/a.txt');
  const listed = fs.readdirSync(dir, { recursive: true }).map(String).sort();
  assert.deepEqual(listed, ['README.md', 'check.sh', 'empty', 'link', 'src', 'src/a.txt', 'src/deep', 'src/deep/b.txt']);
}

describe('snapshot staging', () => {
  it('hard-links regular files to their blobs, written from the packs once, and copies executables, in the same modes', () => {
    const { dataDir, revision, store } = recorded();
    assert.equal(fs.existsSync(path.join(store.root, 'blobs')), false, 'a checkpoint writes packs only');
    const stateDir = tmp();
    const staged = stageSnapshotSync({ stateDir, dataDir, revision, attemptId: 'att-1' });
    assertTree(staged);
    const blobOf = (rel: string) => fs.statSync(store.blobPath(sha(FILES[rel]!.bytes)));
    assert.equal(blobOf('README.md').mode & 0o7777, BLOB_MODE);
    assert.equal(fs.statSync(path.join(staged, 'README.md')).ino, blobOf('README.md').ino, 'README.md is the blob');
    assert.equal(fs.statSync(path.join(staged, 'src/a.txt')).ino, fs.statSync(path.join(staged, 'src/deep/b.txt')).ino, 'one blob, two links');
    assert.equal(fs.existsSync(store.blobPath(sha(FILES['check.sh']!.bytes))), false, 'executables are copies, with no loose blob');
    // A second run links the same blobs without writing them again.
    const again = stageSnapshotSync({ stateDir: tmp(), dataDir, revision, attemptId: 'att-1b' });
    assert.equal(fs.statSync(path.join(again, 'README.md')).ino, blobOf('README.md').ino);
    assert.equal(blobOf('README.md').nlink, 3);
    discardStaged(again);

    // Placing and discarding remove links, never blobs.
    const placed = placeSnapshot(stateDir, staged, revision, 'att-1');
    assert.equal(placed, snapshotDirOf(stateDir, revision, 'att-1'));
    assertTree(placed);
    discardStaged(placed);
    assert.deepEqual(fs.readFileSync(store.blobPath(sha(FILES['README.md']!.bytes))), FILES['README.md']!.bytes);
    assert.equal(blobOf('README.md').nlink, 1);
  });

  it('copies the blobs of an older store (0o400) into the same tree', () => {
    const { dataDir, revision, store } = recorded();
    for (const f of Object.values(FILES)) fs.chmodSync(store.materializeBlob(sha(f.bytes), f.bytes), 0o400);
    const staged = stageSnapshotSync({ stateDir: tmp(), dataDir, revision, attemptId: 'att-2' });
    assertTree(staged);
    assert.equal(fs.statSync(path.join(staged, 'README.md')).nlink, 1);
    assert.equal(fs.statSync(store.blobPath(sha(FILES['README.md']!.bytes))).mode & 0o7777, 0o400, 'the store is not changed');
  });

  it('copies everything when the data dir is on another file system', (t) => {
    if (!fs.existsSync('/dev/shm') || fs.statSync('/dev/shm').dev === fs.statSync(os.tmpdir()).dev) {
      t.skip('needs /dev/shm on a file system other than the temp dir');
      return;
    }
    const { dataDir, revision } = recorded('/dev/shm');
    const staged = stageSnapshotSync({ stateDir: tmp(), dataDir, revision, attemptId: 'att-3' });
    assertTree(staged);
    for (const rel of ['README.md', 'src/a.txt', 'src/deep/b.txt']) assert.equal(fs.statSync(path.join(staged, rel)).nlink, 1, rel);
  });

  it('hands over the linked tree before checking its bytes; the check finds a blob changed in between', () => {
    const { dataDir, revision, store } = recorded();
    linkedOnce(dataDir, revision);
    const { dir, unverified } = stageLinkedSync({ stateDir: tmp(), dataDir, revision, attemptId: 'att-5' });
    assertTree(dir);
    assert.deepEqual(unverified.entries.map((e) => e.path).sort(), ['README.md', 'empty', 'src/a.txt', 'src/deep/b.txt'], 'the linked files, and only they');
    verifyLinked(unverified);
    const blob = store.blobPath(sha(FILES['src/a.txt']!.bytes));
    fs.chmodSync(blob, 0o644);
    fs.writeFileSync(blob, 'changed\n');
    assert.throws(() => verifyLinked(unverified), (e: unknown) => e instanceof AgentscmError && e.code === 'SNAPSHOT_CORRUPT');
  });

  it('stages a torn or missing loose blob (as a crash may leave one) from the checkpoint\'s pack', () => {
    const { dataDir, revision, store } = recorded();
    linkedOnce(dataDir, revision);
    const torn = store.blobPath(sha(FILES['README.md']!.bytes));
    fs.chmodSync(torn, 0o644);
    fs.writeFileSync(torn, '');
    fs.chmodSync(torn, BLOB_MODE);
    fs.rmSync(store.blobPath(sha(FILES['src/a.txt']!.bytes)));
    const staged = stageSnapshotSync({ stateDir: tmp(), dataDir, revision, attemptId: 'att-6' });
    assertTree(staged);
    assert.equal(fs.statSync(path.join(staged, 'README.md')).nlink, 1, 'the torn blob is not linked');
    assert.ok(fs.statSync(path.join(staged, 'empty')).nlink > 1, 'an intact blob still is');
    assert.ok(fs.statSync(path.join(staged, 'src/a.txt')).nlink > 1, 'a missing blob is written again and linked');
    assert.equal(store.readBlob(sha(FILES['check.sh']!.bytes), 1 << 20)?.toString(), FILES['check.sh']!.bytes.toString());
    assert.equal(store.readBlob(sha(FILES['README.md']!.bytes), 1 << 20)?.toString(), FILES['README.md']!.bytes.toString());
  });

  it('refuses a corrupt blob whose pack copy is gone too, and leaves no staging directory', () => {
    const { dataDir, revision, store } = recorded();
    linkedOnce(dataDir, revision);
    const blob = store.blobPath(sha(FILES['src/a.txt']!.bytes));
    fs.chmodSync(blob, 0o644);
    fs.writeFileSync(blob, 'tampered\n');
    fs.chmodSync(blob, BLOB_MODE);
    fs.rmSync(path.join(dataDir, 'snapshots', 'packs'), { recursive: true });
    const stateDir = tmp();
    assert.throws(
      () => stageSnapshotSync({ stateDir, dataDir, revision, attemptId: 'att-4' }),
      (e: unknown) => e instanceof AgentscmError && e.code === 'SNAPSHOT_CORRUPT',
    );
    assert.deepEqual(fs.readdirSync(path.join(stateDir, 'snapshots')), []);
  });
});
