// The read-only workspace scan (src/core/native/snapshot.ts readWorkspaceLater, which reads at once and
// hashes later): file digests and the
// revision against node:crypto and the digest rule written out independently, for a small workspace
// (hashed without node:crypto) and one past the size where the scan loads node:crypto first.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { DOMAINS } from '../../src/core/crypto/digest.js';
import { AgentscmError } from '../../src/core/errors.js';
import { lstatMany } from '../../src/core/fs/lstat-many.js';
import { fineTimestamps } from '../../src/core/fs/timestamps.js';
import { decodeStatCache, manifestBytes, RACY_FINE_MARGIN_MS, RACY_MARGIN_MS, readWorkspaceLater, scanWorkspace, SnapshotStore, statClean, workspaceError, type RecordedSnapshot, type StatCache } from '../../src/core/native/snapshot.js';
import { referenceDomainDigest } from '../support/crypto.js';

const roots: string[] = [];
after(() => roots.forEach((r) => fs.rmSync(r, { recursive: true, force: true })));

function workspace(files: Record<string, Buffer>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-scan-'));
  roots.push(root);
  for (const [rel, bytes] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), bytes, { mode: rel.endsWith('.sh') ? 0o755 : 0o644 });
  }
  fs.symlinkSync('docs/a.md', path.join(root, 'link'));
  return root;
}

/** The expected manifest, built from the files with node:crypto, and its revision by the digest rule. */
function expected(files: Record<string, Buffer>): { entries: { path: string; mode: number; size: number; sha256: string }[]; revision: string } {
  const entries = [
    ...Object.entries(files).map(([rel, bytes]) => ({ path: rel, mode: rel.endsWith('.sh') ? 0o100755 : 0o100644, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') })),
    { path: 'link', mode: 0o120000, size: 'docs/a.md'.length, sha256: createHash('sha256').update('docs/a.md').digest('hex') },
  ].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  // Insertion order, as the manifest declares it: version, entries (path, mode, size, sha256).
  const canonical = `{"version":1,"entries":[${entries.map((e) => `{"path":${JSON.stringify(e.path)},"mode":${e.mode},"size":${e.size},"sha256":"${e.sha256}"}`).join(',')}]}`;
  return { entries, revision: referenceDomainDigest(DOMAINS.snapshot, Buffer.from(canonical)) };
}

for (const [name, bigSize] of [['small', 3000], ['large (past the size that loads node:crypto first)', 400 * 1024]] as const) {
  test(`a ${name} workspace scans to the manifest and revision of its bytes`, () => {
    const big = Buffer.alloc(bigSize);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 10)) & 0xff;
    const files: Record<string, Buffer> = {
      'README.md': Buffer.from('# readme\n'),
      'docs/a.md': Buffer.from('a\n'),
      'run.sh': Buffer.from('#!/bin/sh\necho hi\n'),
      'data/blob.bin': big,
      'empty': Buffer.alloc(0),
    };
    const root = workspace(files);
    const got = readWorkspaceLater(root).scanned();
    const want = expected(files);
    assert.deepEqual(got.manifest.entries, want.entries);
    assert.equal(got.revision, want.revision);

    // Read now, hashed later: the revision of the bytes as they were read, whatever happens after.
    const later = readWorkspaceLater(root);
    fs.writeFileSync(path.join(root, 'README.md'), '# changed after the read\n');
    fs.writeFileSync(path.join(root, 'new.txt'), 'added after the read\n');
    assert.equal(later.scanned().revision, want.revision);
    assert.equal(later.scanned().revision, want.revision, 'the same on a second call');
    assert.notEqual(readWorkspaceLater(root).scanned().revision, want.revision, 'a new read sees the changes');
  });
}

// The stat cache (git's index, for the workspace): a checkpoint records each regular file's lstat with
// its digest, and later scans read only the files whose stat changed or that are racily clean.
describe('the stat cache', () => {
  const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

  /** A store in a fresh data dir, and root recorded in it once its files are older than the racy margin. */
  function recordOld(root: string): { store: SnapshotStore; rec: RecordedSnapshot } {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-scan-data-'));
    roots.push(dataDir);
    fs.chmodSync(dataDir, 0o700);
    sleep(RACY_MARGIN_MS + 100);
    const store = new SnapshotStore(dataDir);
    return { store, rec: store.record(root) };
  }

  /** A workspace and a data dir, the files older than the racy margin, recorded once. */
  function recordedOld(): { root: string; store: SnapshotStore; cache: () => StatCache; rec: RecordedSnapshot } {
    const root = workspace({ 'README.md': Buffer.from('# readme\n'), 'src/a.ts': Buffer.from('export const a = 1;\n'), 'run.sh': Buffer.from('#!/bin/sh\n') });
    const { store, rec } = recordOld(root);
    const cache = () => decodeStatCache(rec.revision, rec.statCache.scannedAtMs, rec.statCache.entries);
    return { root, store, cache, rec };
  }

  test('an unchanged workspace is scanned without reading a regular file, to the recorded revision', () => {
    const { root, cache, rec } = recordedOld();
    const scan = scanWorkspace(root, cache());
    assert.equal(scan.revision, rec.revision);
    assert.equal(scan.read, 1, 'only the symlink is read again');
    assert.equal(scanWorkspace(root).revision, rec.revision, 'the same revision without the cache');
  });

  test('every kind of edit is seen: same-size content, mode, added, removed, replaced', () => {
    const edits: [string, (root: string) => void][] = [
      ['same-size content, mtime put back', (r) => {
        const f = path.join(r, 'src/a.ts');
        const st = fs.statSync(f);
        fs.writeFileSync(f, 'export const a = 2;\n');
        fs.utimesSync(f, st.atime, st.mtime);
      }],
      ['mode', (r) => fs.chmodSync(path.join(r, 'README.md'), 0o755)],
      ['added', (r) => fs.writeFileSync(path.join(r, 'src/new.ts'), 'x\n')],
      ['removed', (r) => fs.rmSync(path.join(r, 'src/a.ts'))],
      ['replaced by a same-size file', (r) => {
        fs.writeFileSync(path.join(r, 'tmp'), '# README\n');
        fs.renameSync(path.join(r, 'tmp'), path.join(r, 'README.md'));
      }],
    ];
    for (const [what, edit] of edits) {
      const { root, cache, rec } = recordedOld();
      edit(root);
      const scan = scanWorkspace(root, cache());
      assert.notEqual(scan.revision, rec.revision, what);
      assert.equal(scan.revision, scanWorkspace(root).revision, `${what}: the revision a full read gives`);
    }
  });

  test('a racily clean entry (stat unchanged, mtime not older than the scan by the margin) is hashed again', () => {
    const root = workspace({ 'a.txt': Buffer.from('one\n') });
    const st = fs.lstatSync(path.join(root, 'a.txt'));
    const key = { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, mode: st.mode };
    // The same stat: trusted only when the file's times are older than the scan start by the margin.
    assert.equal(statClean(key, st, Math.max(st.mtimeMs, st.ctimeMs) + RACY_MARGIN_MS + 1), true);
    assert.equal(statClean(key, st, Math.max(st.mtimeMs, st.ctimeMs) + 1), false);
    assert.equal(statClean(key, st, st.mtimeMs), false);
    assert.equal(statClean({ ...key, mtimeMs: key.mtimeMs + 1 }, st, Number.MAX_SAFE_INTEGER), false);
    assert.equal(statClean({ ...key, ino: key.ino + 1 }, st, Number.MAX_SAFE_INTEGER), false);

    // End to end: recorded at once, then written again with the same size within the same second
    // and its mtime put back: the cache holds the stat, and the entry is racily clean.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-scan-data-'));
    roots.push(dataDir);
    fs.chmodSync(dataDir, 0o700);
    const rec = new SnapshotStore(dataDir).record(root);
    const f = path.join(root, 'a.txt');
    const before = fs.statSync(f);
    fs.writeFileSync(f, 'two\n');
    fs.utimesSync(f, before.atime, before.mtime);
    const scan = scanWorkspace(root, decodeStatCache(rec.revision, rec.statCache.scannedAtMs, rec.statCache.entries));
    assert.notEqual(scan.revision, rec.revision);
  });

  test('with fine timestamps, an entry is trusted once its times are older than the fine margin, and only then', () => {
    const root = workspace({ 'a.txt': Buffer.from('one\n') });
    const st = fs.lstatSync(path.join(root, 'a.txt'));
    const key = { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, mode: st.mode };
    const newest = Math.max(st.mtimeMs, st.ctimeMs);
    assert.ok(st.mtimeMs % 1000 !== 0 || st.ctimeMs % 1000 !== 0, 'the temporary directory keeps sub-second times');
    assert.equal(statClean(key, st, newest + RACY_FINE_MARGIN_MS + 1, true), true);
    assert.equal(statClean(key, st, newest + RACY_FINE_MARGIN_MS, true), false);
    assert.equal(statClean(key, st, newest + RACY_FINE_MARGIN_MS + 1, false), false, 'without fine timestamps, the two-second margin');
    // Whole-second times (a file system that keeps seconds) get the two-second margin whatever the tree says.
    const whole = { ...st, mtimeMs: 1_700_000_000_000, ctimeMs: 1_700_000_000_000 } as fs.Stats;
    const wholeKey = { ...key, mtimeMs: whole.mtimeMs, ctimeMs: whole.ctimeMs };
    assert.equal(statClean(wholeKey, whole, whole.mtimeMs + RACY_FINE_MARGIN_MS + 1, true), false);
    assert.equal(statClean(wholeKey, whole, whole.mtimeMs + RACY_MARGIN_MS + 1, true), true);
  });

  test('a file written and recorded at once is trusted by the next scan where timestamps are fine, and an edit is still seen', () => {
    const root = workspace({ 'README.md': Buffer.from('# readme\n'), 'src/a.ts': Buffer.from('export const a = 1;\n') });
    assert.equal(fineTimestamps(root), true, 'the temporary directory is on a local file system with nothing mounted beneath it');
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-scan-data-'));
    roots.push(dataDir);
    fs.chmodSync(dataDir, 0o700);
    sleep(RACY_FINE_MARGIN_MS + 50);
    const store = new SnapshotStore(dataDir);
    const rec = store.record(root);
    const cache = () => decodeStatCache(rec.revision, rec.statCache.scannedAtMs, rec.statCache.entries);
    const scan = scanWorkspace(root, cache());
    assert.equal(scan.revision, rec.revision);
    assert.equal(scan.read, 1, 'only the symlink is read again: the files are not racily clean');
    fs.writeFileSync(path.join(root, 'src/a.ts'), 'export const a = 2;\n');
    const edited = scanWorkspace(root, cache());
    assert.equal(edited.read, 2);
    assert.notEqual(edited.revision, rec.revision);
    assert.equal(edited.revision, scanWorkspace(root).revision);
  });

  test('a file written after the listing took its stat is refused, even at the same size: its bytes could be a mix of two versions', () => {
    const root = workspace({ 'a.txt': Buffer.from('one\n'), 'b.txt': Buffer.from('two\n') });
    assert.throws(
      () =>
        scanWorkspace(root, undefined, (e) => {
          // After a.txt's read, before b.txt's: b.txt's stat was taken by the listing.
          if (e.path === 'a.txt') fs.writeFileSync(path.join(root, 'b.txt'), 'TWO\n');
        }),
      (e: unknown) => e instanceof AgentscmError && e.code === 'WORKSPACE_CHANGED' && /b\.txt changed while it was read/.test(e.message),
    );
    assert.equal(scanWorkspace(root).manifest.entries.find((x) => x.path === 'b.txt')?.size, 4, 'scanned again, it is read');
  });

  // The listing took b's lstat as a regular file's (l's as a symlink's); after a.txt's read, before
  // b's, it is replaced. What is found there now is never read: the scan refuses, and does not hang.
  const swaps: [string, string, (p: string) => void][] = [
    ['a regular file replaced by a directory', 'b.txt', (p) => (fs.rmSync(p), fs.mkdirSync(p), fs.writeFileSync(path.join(p, 'x'), 'x\n'))],
    ['a regular file replaced by a FIFO (no writer: a blocking read would wait forever)', 'b.txt', (p) => (fs.rmSync(p), execFileSync('mkfifo', [p]))],
    ['a regular file replaced by a symlink to a file', 'b.txt', (p) => (fs.rmSync(p), fs.symlinkSync('a.txt', p))],
    ['a regular file replaced by another one of the same size', 'b.txt', (p) => (fs.rmSync(p), fs.writeFileSync(p, 'TWO\n'))],
    ['a symlink replaced by a regular file', 'l', (p) => (fs.rmSync(p), fs.writeFileSync(p, 'a file now\n'))],
    ['a regular file removed', 'b.txt', (p) => fs.rmSync(p)],
  ];
  for (const [what, victim, swap] of swaps) {
    test(`${what} after the listing is refused as WORKSPACE_CHANGED`, () => {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-scan-'));
      roots.push(root);
      fs.writeFileSync(path.join(root, 'a.txt'), 'one\n');
      fs.writeFileSync(path.join(root, 'b.txt'), 'two\n');
      fs.symlinkSync('a.txt', path.join(root, 'l'));
      assert.throws(
        () => scanWorkspace(root, undefined, (e) => e.path === 'a.txt' && swap(path.join(root, victim))),
        (e: unknown) => e instanceof AgentscmError && e.code === 'WORKSPACE_CHANGED' && e.message.includes(`${victim} changed while it was read`),
      );
    });
  }

  test('file system errors of the scan: the workspace\'s under its root, the store\'s in the data dir (also inside the workspace) and elsewhere', () => {
    const err = (code: string, p: string) => Object.assign(new Error(code), { code, path: p });
    const code = (e: unknown) => (e instanceof AgentscmError ? e.code : (e as { code: string }).code);
    assert.equal(code(workspaceError(err('ENOENT', '/w/src/a.ts'), '/w', '/d')), 'WORKSPACE_CHANGED');
    assert.equal(code(workspaceError(err('ENOTDIR', '/w/src/a.ts'), '/w', '/d')), 'WORKSPACE_CHANGED');
    assert.equal(code(workspaceError(err('EACCES', '/w/src/a.ts'), '/w', '/d')), 'BAD_WORKSPACE');
    assert.equal(code(workspaceError(err('ENAMETOOLONG', '/w/x'), '/w', '/d')), 'BAD_WORKSPACE');
    assert.equal(code(workspaceError(err('ENOENT', '/d/snapshots/packs/x.tmp'), '/w', '/d')), 'ENOENT', 'the data dir\'s: the local store\'s error');
    assert.equal(code(workspaceError(err('ENOENT', '/w/.agentscm/snapshots/packs/x.tmp'), '/w', '/w/.agentscm')), 'ENOENT', 'the data dir inside the workspace');
    assert.equal(code(workspaceError(err('ENOENT', '/wx/a'), '/w', '/d')), 'ENOENT', 'a sibling with the same prefix');
    assert.equal(code(workspaceError(err('EIO', '/w/a'), '/w', '/d')), 'EIO');
    // Replaced by another kind of file since the listing: read as a directory, readlink of a file, a socket opened.
    for (const c of ['EISDIR', 'EINVAL', 'ENXIO']) assert.equal(code(workspaceError(err(c, '/w/a'), '/w', '/d')), 'WORKSPACE_CHANGED', c);
    // An lstat's FS_ERROR (lstatOrUndefined, lstatMany) is mapped by the system error it keeps.
    const wrapped = (c: string, p: string) => new AgentscmError('LOCAL_STATE', 'FS_ERROR', `cannot inspect ${p}: ${c}`, undefined, { cause: err(c, p) });
    for (const c of ['EACCES', 'EPERM', 'ELOOP']) assert.equal(code(workspaceError(wrapped(c, '/w/src/a.ts'), '/w', '/d')), 'BAD_WORKSPACE', c);
    assert.equal(code(workspaceError(wrapped('ENOTDIR', '/w/src/a.ts'), '/w', '/d')), 'WORKSPACE_CHANGED');
    assert.equal(code(workspaceError(wrapped('EACCES', '/d/workspaces.sqlite'), '/w', '/d')), 'FS_ERROR', 'the data dir\'s stays the store\'s');
    assert.equal(code(workspaceError(wrapped('EIO', '/w/a'), '/w', '/d')), 'FS_ERROR');
    // As lstatMany throws it: a name longer than a file system allows.
    const w = fs.realpathSync(os.tmpdir());
    assert.throws(() => lstatMany(`${w}/`, ['n'.repeat(300)]), (e: unknown) => code(workspaceError(e, w, '/d')) === 'BAD_WORKSPACE');
  });

  test('a malformed cache is refused as STORE_CORRUPT', () => {
    const { rec } = recordedOld();
    const b = rec.statCache.entries;
    for (const bad of [b.subarray(0, b.length - 1), Buffer.concat([b, Buffer.alloc(1)]), Buffer.alloc(4)]) {
      assert.throws(() => decodeStatCache(rec.revision, 0, bad), (e: unknown) => e instanceof AgentscmError && e.code === 'STORE_CORRUPT');
    }
  });

  test('a cache whose bytes changed after it was written is refused, even where they still decode (its checksum)', () => {
    const { rec } = recordedOld();
    const b = rec.statCache.entries;
    const c = decodeStatCache(rec.revision, 0, b);
    // The last bytes of the first entry's digest: a well-formed cache that vouches for other content.
    const at = c.fixed[0]! + 4 + 8 * 4 + 31;
    const flipped = Buffer.from(b);
    flipped[at] = flipped[at]! ^ 0x01;
    assert.throws(() => decodeStatCache(rec.revision, 0, flipped), (e: unknown) => e instanceof AgentscmError && e.code === 'STORE_CORRUPT');
    // Without its checksum the same bytes would decode: the checksum is what refuses them.
    const body = Buffer.from(flipped.subarray(0, flipped.length - 32));
    body.writeUInt32LE(0x32435341, 0);
    assert.notEqual(decodeStatCache(rec.revision, 0, body).paths.length, 0, 'a cache of before (no checksum) is still read');
  });

  test('a checkpoint reads only what changed and packs only that', () => {
    const { root, store, cache } = recordedOld();
    const packs = () => fs.readdirSync(path.join(store.root, 'packs')).filter((n) => n.endsWith('.pack'));
    assert.equal(packs().length, 1);
    fs.writeFileSync(path.join(root, 'src/b.ts'), 'export const b = 2;\n');
    const second = store.record(root, cache());
    assert.equal(packs().length, 2);
    const sizes = packs().map((n) => fs.statSync(path.join(store.root, 'packs', n)).size).sort((x, y) => x - y);
    // The new file and the symlink (read on every scan), not the others: two records and their index entries.
    assert.ok(sizes[0]! < 17 + 2 * 40 + 64 + 2 * 48 + 32, `second pack ${sizes[0]} bytes`);
    assert.equal(scanWorkspace(root).revision, second.revision);
  });

  test('the manifest copied from the base snapshot\'s bytes is the one written entry by entry', () => {
    // No symlink (the base's entries are the cache's one for one), paths that JSON writes as they are and
    // ones it escapes, and a non-ASCII one.
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-scan-'));
    roots.push(root);
    const names = ['a.txt', 'b/c.txt', 'b/d "q".txt', 'b/e\\f.txt', 'caf\u00e9/g.txt', 'h.sh', 'z/last.txt'];
    for (const [i, n] of names.entries()) {
      fs.mkdirSync(path.dirname(path.join(root, n)), { recursive: true });
      fs.writeFileSync(path.join(root, n), `file ${i}\n`, { mode: n.endsWith('.sh') ? 0o755 : 0o644 });
    }
    const recorded = recordOld(root);
    const store = recorded.store;
    let rec = recorded.rec;
    const edits: [string, (r: string) => void][] = [
      ['the first entry changed', (r) => fs.appendFileSync(path.join(r, 'a.txt'), 'more\n')],
      ['one in the middle changed', (r) => fs.appendFileSync(path.join(r, 'caf\u00e9/g.txt'), 'more\n')],
      ['the last entry changed', (r) => fs.appendFileSync(path.join(r, 'z/last.txt'), 'more\n')],
      ['an entry escaped in JSON changed', (r) => fs.appendFileSync(path.join(r, 'b/d "q".txt'), 'more\n')],
      ['added at the front and in the middle', (r) => {
        fs.writeFileSync(path.join(r, '0.txt'), 'new\n');
        fs.writeFileSync(path.join(r, 'b/cc.txt'), 'new\n');
      }],
      ['removed', (r) => fs.rmSync(path.join(r, 'b/c.txt'))],
      ['mode changed', (r) => fs.chmodSync(path.join(r, 'h.sh'), 0o644)],
      ['nothing changed', () => {}],
    ];
    for (const [what, edit] of edits) {
      edit(root);
      const cache = decodeStatCache(rec.revision, rec.statCache.scannedAtMs, rec.statCache.entries);
      const copied = scanWorkspace(root, cache, undefined, { baseManifest: (r) => store.manifestBytes(r) });
      const written = scanWorkspace(root, cache);
      assert.deepEqual(copied.manifestBytes(), manifestBytes(copied.manifest), what);
      assert.deepEqual(copied.manifestBytes(), written.manifestBytes(), what);
      assert.equal(copied.revision, written.revision, what);
      // A base whose bytes are not the revision's is not copied from.
      const wrong = scanWorkspace(root, cache, undefined, { baseManifest: () => Buffer.from('{"version":1,"entries":[]}') });
      assert.equal(wrong.revision, written.revision, `${what}: bytes of another revision`);
      rec = store.record(root, decodeStatCache(rec.revision, rec.statCache.scannedAtMs, rec.statCache.entries));
      assert.equal(rec.revision, scanWorkspace(root).revision, `${what}: the recorded revision`);
    }
  });
});
