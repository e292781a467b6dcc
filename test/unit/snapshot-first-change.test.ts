// firstCachedChange (src/core/native/snapshot.ts): the Stop hook's first look at a git work tree goes
// through the stat cache's own files in manifest order and stops at the first one that changed; when it
// finds none, the full scan takes the stats it took. Each case is a fresh tree recorded with a listing
// cache, its files older than the racy margin.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { lstatMany } from '../../src/core/fs/lstat-many.js';
import { decodeStatCache, firstCachedChange, RACY_MARGIN_MS, readWorkspaceLater, scanWorkspace, SnapshotStore, type StatCache } from '../../src/core/native/snapshot.js';

const roots: string[] = [];
after(() => roots.forEach((r) => fs.rmSync(r, { recursive: true, force: true })));

const FILES: Record<string, string> = {
  '.gitignore': '*.log\n',
  'README.md': '# readme\n',
  'run.sh': '#!/bin/sh\necho hi\n',
  'src/a.ts': 'export const a = 1;\n',
  'src/b.ts': 'export const b = 2;\n',
  'src/deep/c.ts': 'export const c = 3;\n',
  'z/last.ts': 'export const z = 26;\n',
};

/** Git work trees of FILES (tracked), made at once and then left past the racy margin. */
function trees(count: number): string[] {
  const made: string[] = [];
  for (let i = 0; i < count; i++) {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-first-change-')));
    roots.push(root);
    for (const [rel, text] of Object.entries(FILES)) {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), text, { mode: rel.endsWith('.sh') ? 0o755 : 0o644 });
    }
    execFileSync('git', ['init', '-q'], { cwd: root });
    execFileSync('git', ['add', '-A'], { cwd: root });
    made.push(root);
  }
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RACY_MARGIN_MS + 100);
  return made;
}

function record(root: string): { cache: StatCache; dataDir: string } {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-first-change-data-'));
  roots.push(dataDir);
  fs.chmodSync(dataDir, 0o700);
  const rec = new SnapshotStore(dataDir).record(root);
  const cache = decodeStatCache(rec.revision, rec.statCache.scannedAtMs, rec.statCache.entries);
  assert.ok(cache.listing !== undefined, 'a git work tree is recorded with its listing');
  return { cache, dataDir };
}

/** Rewrites a file with other bytes of the same size, its mtime put back (its ctime still moves). */
function sameSizeEdit(file: string): void {
  const st = fs.statSync(file);
  const text = fs.readFileSync(file, 'utf8');
  fs.writeFileSync(file, text.slice(0, -2) + (text.at(-2) === 'x' ? 'y' : 'x') + text.at(-1));
  fs.utimesSync(file, st.atime, st.mtime);
}

test('an unchanged tree: no change, and the stats of every cached file, as lstat gives them', () => {
  const [root] = trees(1) as [string];
  const { cache } = record(root);
  const look = firstCachedChange(root, cache);
  assert.ok(look.changed === undefined);
  assert.equal(look.seen.count, cache.paths.length);
  assert.deepEqual([...look.seen.stats], [...lstatMany(root + '/', cache.paths)]);
});

test('each kind of change of a cached file is found; a touch that leaves its bytes is not a change', () => {
  const edits: [string, string, (f: string) => void][] = [
    ['bytes of another size', 'src/b.ts', (f) => fs.appendFileSync(f, '// edit\n')],
    ['the same size, other bytes, the mtime put back', 'src/b.ts', sameSizeEdit],
    ['the exec bit', 'src/b.ts', (f) => fs.chmodSync(f, 0o755)],
    ['the exec bit taken away', 'run.sh', (f) => fs.chmodSync(f, 0o644)],
    ['removed', 'src/b.ts', (f) => fs.rmSync(f)],
    ['its directory removed', 'src/deep/c.ts', (f) => fs.rmSync(path.dirname(f), { recursive: true })],
  ];
  const roots = trees(edits.length + 1);
  edits.forEach(([what, rel, edit], i) => {
    const root = roots[i]!;
    const { cache } = record(root);
    edit(path.join(root, rel));
    assert.deepEqual(firstCachedChange(root, cache), { changed: rel }, what);
  });
  const root = roots[edits.length]!;
  const { cache } = record(root);
  const f = path.join(root, 'src/b.ts');
  const later = new Date(Date.now() - RACY_MARGIN_MS - 1000);
  fs.utimesSync(f, later, later);
  const look = firstCachedChange(root, cache);
  assert.equal(look.changed, undefined, 'touched, bytes kept');
  assert.equal(look.changed === undefined && look.seen.count, cache.paths.length);
});

test('it stops at the first change in manifest order: a later file it would refuse is not looked at', () => {
  const [root] = trees(1) as [string];
  const { cache } = record(root);
  fs.appendFileSync(path.join(root, 'src/a.ts'), '// edit\n');
  const last = path.join(root, 'z/last.ts');
  fs.rmSync(last);
  execFileSync('mkfifo', [last]);
  assert.deepEqual(firstCachedChange(root, cache), { changed: 'src/a.ts' });
  // The full scan reaches the FIFO and refuses the tree.
  assert.throws(() => scanWorkspace(root, cache), { code: 'BAD_WORKSPACE' });
});

test('what it cannot tell ends the look at that file, with the stats of the files before it', () => {
  const replace: [string, (f: string) => void][] = [
    ['a symlink', (f) => fs.symlinkSync('b.ts', f)],
    ['a FIFO', (f) => execFileSync('mkfifo', [f])],
  ];
  const made = trees(replace.length);
  replace.forEach(([what, make], i) => {
    const root = made[i]!;
    const { cache } = record(root);
    const at = cache.paths.indexOf('src/a.ts');
    fs.rmSync(path.join(root, 'src/a.ts'));
    make(path.join(root, 'src/a.ts'));
    const look = firstCachedChange(root, cache);
    assert.equal(look.changed, undefined, what);
    assert.equal(look.changed === undefined && look.seen.count, at, what);
    assert.deepEqual([...(look.changed === undefined ? look.seen.stats.subarray(0, 5 * at) : [])], [...lstatMany(root + '/', cache.paths.slice(0, at))], what);
  });
});

test('a file under a directory that became a symlink is changed, even where the link leads to the same bytes', () => {
  const [root] = trees(1) as [string];
  const { cache } = record(root);
  // The same file, by another path: the same bytes and size, another stat (inode, ctime).
  const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-first-change-elsewhere-'));
  roots.push(elsewhere);
  fs.cpSync(path.join(root, 'src/deep'), elsewhere, { recursive: true });
  fs.rmSync(path.join(root, 'src/deep'), { recursive: true });
  fs.symlinkSync(elsewhere, path.join(root, 'src/deep'));
  assert.deepEqual(firstCachedChange(root, cache), { changed: 'src/deep/c.ts' });
});

test('the full scan takes the stats the look took instead of an lstat of each file again', () => {
  const [root] = trees(1) as [string];
  const { cache, dataDir } = record(root);
  const look = firstCachedChange(root, cache);
  assert.ok(look.changed === undefined);
  // Edited after the look: a scan that takes the look's stats finds the recorded revision, one that
  // lstat's again finds the edit.
  fs.appendFileSync(path.join(root, 'src/b.ts'), '// edit\n');
  assert.equal(readWorkspaceLater(root, cache, undefined, [], dataDir, look.seen).scanned().revision, cache.revision);
  assert.notEqual(readWorkspaceLater(root, cache, undefined, [], dataDir).scanned().revision, cache.revision);
});
