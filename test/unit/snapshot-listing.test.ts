// The listing cache of a git work tree (src/core/native/snapshot.ts): a scan with a stat cache lists
// the tree from the cache while the directories, .gitignore files and git's rule files it watched keep
// their stat, and asks git again when any changed or is racily clean. Each case compares the cached
// scan with a scan that asks git afresh.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { decodeStatCache, listingClean, manifestBytes, RACY_MARGIN_MS, revisionOf, scanWorkspace, SnapshotStore, type StatCache } from '../../src/core/native/snapshot.js';

const roots: string[] = [];
after(() => roots.forEach((r) => fs.rmSync(r, { recursive: true, force: true })));
const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** A git work tree: tracked files, an untracked one, ignored ones, a directory of ignored files only. */
function gitTree(): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-listing-')));
  roots.push(root);
  const files: Record<string, string> = {
    '.gitignore': '*.log\nnode_modules/\n',
    'README.md': '# readme\n',
    'src/a.ts': 'export const a = 1;\n',
    'src/deep/b.ts': 'export const b = 2;\n',
    'src/untracked.ts': 'export const u = 3;\n',
    'build/out.log': 'log\n',
    'node_modules/x/index.js': 'module.exports = 1;\n',
    'debug.log': 'log\n',
  };
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  execFileSync('git', ['init', '-q'], { cwd: root });
  execFileSync('git', ['add', '.gitignore', 'README.md', 'src/a.ts', 'src/deep/b.ts'], { cwd: root });
  return root;
}

/** The snapshot store of a fresh owner-private data dir. */
function freshStore(): SnapshotStore {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-listing-data-'));
  roots.push(dataDir);
  fs.chmodSync(dataDir, 0o700);
  return new SnapshotStore(dataDir);
}

const decode = (rec: ReturnType<SnapshotStore['record']>): StatCache => decodeStatCache(rec.revision, rec.statCache.scannedAtMs, rec.statCache.entries);

const record = (root: string): StatCache => decode(freshStore().record(root));

const paths = (root: string, cache?: StatCache) => scanWorkspace(root, cache).manifest.entries.map((e) => e.path);

/** With git out of reach: a scan that had to ask git would fail (or list ignored files). */
function withoutGit<T>(f: () => T): T {
  const saved = process.env.PATH;
  process.env.PATH = '/nonexistent';
  try {
    return f();
  } finally {
    process.env.PATH = saved;
  }
}

// One batch of trees, made and then left alone past the racy margin, so their stats are trusted.
const edits: [string, (root: string) => void, (listed: string[]) => boolean][] = [
  ['a new untracked file in an old directory', (r) => fs.writeFileSync(path.join(r, 'src/deep/new.ts'), 'x\n'), (l) => l.includes('src/deep/new.ts')],
  ['a new file in a directory of ignored files only', (r) => fs.writeFileSync(path.join(r, 'build/new.ts'), 'x\n'), (l) => l.includes('build/new.ts')],
  ['a new directory with a file', (r) => {
    fs.mkdirSync(path.join(r, 'src/deep/newer'));
    fs.writeFileSync(path.join(r, 'src/deep/newer/c.ts'), 'x\n');
  }, (l) => l.includes('src/deep/newer/c.ts')],
  ['a new .gitignore rule', (r) => fs.appendFileSync(path.join(r, '.gitignore'), 'src/untracked.ts\n'), (l) => !l.includes('src/untracked.ts')],
  ['a new .gitignore in a subdirectory', (r) => fs.writeFileSync(path.join(r, 'src/.gitignore'), 'untracked.ts\n'), (l) => !l.includes('src/untracked.ts')],
  ['a rule in .git/info/exclude', (r) => fs.appendFileSync(path.join(r, '.git/info/exclude'), 'src/untracked.ts\n'), (l) => !l.includes('src/untracked.ts')],
  ['a rule removed, so an ignored file is listed', (r) => fs.writeFileSync(path.join(r, '.gitignore'), 'node_modules/\n'), (l) => l.includes('debug.log') && l.includes('build/out.log')],
  ['a file removed', (r) => fs.rmSync(path.join(r, 'src/untracked.ts')), (l) => !l.includes('src/untracked.ts')],
  ['a file added to the index inside an ignored directory', (r) => execFileSync('git', ['add', '-f', 'node_modules/x/index.js'], { cwd: r }), (l) => l.includes('node_modules/x/index.js')],
];
const trees = edits.map(() => gitTree());
const clean = gitTree();
const otherEnv = gitTree();
const rewritten = gitTree();
const partial = gitTree();
const partialKept = gitTree();
const topLevel = gitTree();
const twoReads = gitTree();
const names = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-listing-names-')));
roots.push(names);
for (const name of ['a"b', 'c\\d', 'é.txt', '日本.md', 'plain.txt', 'z\u2028.txt']) fs.writeFileSync(path.join(names, name), name);
fs.symlinkSync('plain.txt', path.join(names, 'link'));

// A tracked directory (src/deep, with src/deep/b.ts and src/deep/more/c.ts tracked) replaced by
// something that is not a directory: git takes the files under it as deleted (has_symlink_leading_path),
// whatever the kernel would find by following the path. `ignore`: the replacement is named by a
// .gitignore rule (a symlink that leaves the tree or loops would be refused if it were listed).
const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-listing-outside-')));
roots.push(outside);
fs.mkdirSync(path.join(outside, 'more'));
fs.writeFileSync(path.join(outside, 'b.ts'), 'outside the workspace\n');
fs.writeFileSync(path.join(outside, 'more/c.ts'), 'outside the workspace\n');
const kept = ['.gitignore', 'README.md', 'src/a.ts', 'src/untracked.ts'];
const replacements: { what: string; ignore: boolean; replace: (deep: string) => void; want: string[] }[] = [
  { what: 'a symlink to a directory outside the workspace', ignore: true, replace: (d) => (fs.rmSync(d, { recursive: true }), fs.symlinkSync(outside, d)), want: kept },
  { what: 'a symlink to a directory inside it', ignore: false, replace: (d) => (fs.renameSync(d, `${d}2`), fs.symlinkSync('deep2', d)), want: ['.gitignore', 'README.md', 'src/a.ts', 'src/deep', 'src/deep2/b.ts', 'src/deep2/more/c.ts', 'src/untracked.ts'] },
  { what: 'a regular file', ignore: false, replace: (d) => (fs.rmSync(d, { recursive: true }), fs.writeFileSync(d, 'a file now\n')), want: ['.gitignore', 'README.md', 'src/a.ts', 'src/deep', 'src/untracked.ts'] },
  { what: 'a symlink to itself', ignore: true, replace: (d) => (fs.rmSync(d, { recursive: true }), fs.symlinkSync('deep', d)), want: kept },
];
function deepTree(ignore: boolean): string {
  const root = gitTree();
  fs.mkdirSync(path.join(root, 'src/deep/more'));
  fs.writeFileSync(path.join(root, 'src/deep/more/c.ts'), 'export const c = 3;\n');
  execFileSync('git', ['add', 'src/deep/more/c.ts'], { cwd: root });
  if (ignore) fs.appendFileSync(path.join(root, '.gitignore'), '/src/deep\n');
  return root;
}
// Replaced before the checkpoint (and left alone past the racy margin), and replaced after it.
const replacedBefore = replacements.map((r) => {
  const root = deepTree(r.ignore);
  r.replace(path.join(root, 'src/deep'));
  return root;
});
const replacedAfter = replacements.map((r) => deepTree(r.ignore));
sleep(RACY_MARGIN_MS + 200);

test('an unchanged git work tree is listed from the cache, without git', () => {
  const cache = record(clean);
  assert.ok(cache.listing, 'the checkpoint kept its listing');
  const want = paths(clean);
  assert.deepEqual(want, ['.gitignore', 'README.md', 'src/a.ts', 'src/deep/b.ts', 'src/untracked.ts']);
  const scan = withoutGit(() => scanWorkspace(clean, cache));
  assert.equal(scan.revision, cache.revision);
  assert.equal(scan.read, 0);
  // A file edited in place changes no directory: still listed from the cache, and the edit is seen.
  fs.appendFileSync(path.join(clean, 'src/a.ts'), '// edit\n');
  const edited = withoutGit(() => scanWorkspace(clean, cache));
  assert.equal(edited.read, 1);
  assert.equal(edited.revision, scanWorkspace(clean).revision);
});

for (const [i, [what, edit, check]] of edits.entries()) {
  test(`the listing is asked of git again after ${what}`, () => {
    const root = trees[i]!;
    const cache = record(root);
    assert.ok(cache.listing);
    assert.ok(listingClean(root, cache.listing, cache.scannedAtMs), 'clean before the edit');
    edit(root);
    assert.equal(listingClean(root, cache.listing, cache.scannedAtMs), false, 'the edit is seen in the watched stats');
    const listed = paths(root, cache);
    assert.ok(check(listed), `${what}: ${listed.join(' ')}`);
    assert.deepEqual(listed, paths(root), 'what a fresh git listing gives');
    assert.equal(scanWorkspace(root, cache).revision, scanWorkspace(root).revision);
  });
}

test('an index rewritten with the same paths keeps the listing; one that tracks other paths does not', () => {
  const root = rewritten;
  const cache = record(root);
  const index = path.join(root, '.git/index');
  const before = fs.statSync(index);
  // git status refreshes the index and writes it again (a file's stat changed, its bytes did not).
  fs.utimesSync(path.join(root, 'README.md'), new Date(), new Date(Date.now() - 10_000));
  execFileSync('git', ['update-index', '--refresh', '-q'], { cwd: root });
  execFileSync('git', ['add', 'README.md'], { cwd: root });
  assert.notEqual(fs.statSync(index).mtimeMs + fs.statSync(index).ino, before.mtimeMs + before.ino, 'the index was written again');
  assert.ok(listingClean(root, cache.listing!, cache.scannedAtMs));
  execFileSync('git', ['rm', '-q', '--cached', 'src/a.ts'], { cwd: root });
  assert.equal(listingClean(root, cache.listing!, cache.scannedAtMs), false);
  assert.deepEqual(paths(root, cache), paths(root));
});

test('a checkpoint that finds the index rewritten with the same paths keeps the index\'s new stat', () => {
  const root = gitTree();
  sleep(RACY_MARGIN_MS + 100);
  const store = freshStore();
  const first = decode(store.record(root));
  fs.utimesSync(path.join(root, 'README.md'), new Date(), new Date(Date.now() - 10_000));
  execFileSync('git', ['update-index', '--refresh', '-q'], { cwd: root });
  execFileSync('git', ['add', 'README.md'], { cwd: root });
  sleep(RACY_MARGIN_MS + 100);
  const rec = store.record(root, first);
  const second = decode(rec);
  assert.ok(second.listing, 'the listing is kept');
  // The next read finds the index as recorded: no git needed.
  withoutGit(() => {
    assert.ok(listingClean(root, second.listing!, second.scannedAtMs));
    assert.equal(scanWorkspace(root, second).revision, rec.revision);
  });
  assert.equal(rec.revision, scanWorkspace(root).revision);
});

test('a listing whose directories are racily clean is not trusted', () => {
  const root = gitTree();
  // Recorded at once: the directories were written within the margin of the scan.
  const cache = record(root);
  assert.ok(cache.listing);
  assert.equal(listingClean(root, cache.listing, cache.scannedAtMs), false);
  // A file made in the same tick as the listing would leave a directory's mtime as recorded.
  fs.writeFileSync(path.join(root, 'src/same-tick.ts'), 'x\n');
  assert.ok(paths(root, cache).includes('src/same-tick.ts'));
});

test('a checkpoint in another git environment does not reuse the listing', () => {
  const root = otherEnv;
  const cache = record(root);
  const saved = process.env.GIT_CONFIG_GLOBAL;
  process.env.GIT_CONFIG_GLOBAL = path.join(root, 'no-such-config');
  try {
    // The checkpoint's scan asks git (it would fail without it); the Stop hook's read (anyGitEnv) does not.
    assert.throws(() => withoutGit(() => scanWorkspace(root, cache)));
    assert.equal(withoutGit(() => scanWorkspace(root, cache, undefined, { anyGitEnv: true })).revision, cache.revision);
  } finally {
    if (saved === undefined) delete process.env.GIT_CONFIG_GLOBAL;
    else process.env.GIT_CONFIG_GLOBAL = saved;
  }
});

test('the manifest bytes written from the stat cache are manifestBytes, for any path', () => {
  const root = names;
  const cache = record(root);
  fs.appendFileSync(path.join(root, 'plain.txt'), 'more');
  const scan = scanWorkspace(root, cache);
  assert.equal(scan.read, 2, 'the edited file and the symlink');
  assert.ok(scan.manifestBytes().equals(manifestBytes(scan.manifest)));
  assert.equal(scan.revision, revisionOf(scan.manifest));
  assert.equal(scan.revision, scanWorkspace(root).revision);
});

/** Runs f with a git on PATH that logs each call's arguments (one line each) and runs the real git. */
function loggingGit<T>(f: () => T): { value: T; calls: string[] } {
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-listing-git-'));
  roots.push(dir);
  const log = path.join(dir, 'calls');
  fs.writeFileSync(path.join(dir, 'git'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${real}' "$@"\n`, { mode: 0o755 });
  const saved = process.env.PATH;
  process.env.PATH = `${dir}:${saved}`;
  try {
    const value = f();
    return { value, calls: fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter((l) => l !== '') : [] };
  } finally {
    process.env.PATH = saved;
  }
}

test('after files are added in some directories, git lists those directories only, and the listing is what a fresh one gives', () => {
  const root = partial;
  const cache = record(root);
  fs.writeFileSync(path.join(root, 'src/deep/new.ts'), 'x\n');
  fs.mkdirSync(path.join(root, 'src/deep/newer'));
  fs.writeFileSync(path.join(root, 'src/deep/newer/c.ts'), 'x\n');
  fs.writeFileSync(path.join(root, 'src/deep/newer/skip.log'), 'x\n');
  fs.writeFileSync(path.join(root, 'build/new.ts'), 'x\n');
  const { value: listed, calls } = loggingGit(() => paths(root, cache));
  assert.deepEqual(listed, paths(root));
  assert.ok(listed.includes('src/deep/newer/c.ts') && listed.includes('build/new.ts') && !listed.includes('src/deep/newer/skip.log'));
  const walks = calls.filter((c) => / (status|ls-files -co) /.test(` ${c} `));
  assert.equal(walks.length, 2, calls.join('\n'));
  for (const c of walks) assert.ok(c.endsWith(' -- build/ src/deep/') || c.endsWith(' -- src/deep/ build/'), `asked about the changed directories only: ${c}`);
});

test('a checkpoint that listed some directories again keeps a listing the next scan uses without git', () => {
  const root = partialKept;
  const store = freshStore();
  const first = decode(store.record(root));
  fs.mkdirSync(path.join(root, 'src/deep/newer'));
  fs.writeFileSync(path.join(root, 'src/deep/newer/c.ts'), 'x\n');
  sleep(RACY_MARGIN_MS + 100);
  const rec = store.record(root, first);
  const second = decode(rec);
  assert.equal(rec.revision, scanWorkspace(root).revision);
  assert.ok(second.listing, 'the listing is kept');
  withoutGit(() => {
    assert.ok(listingClean(root, second.listing!, second.scannedAtMs));
    assert.equal(scanWorkspace(root, second).revision, rec.revision);
  });
  // The new directory is watched: a file added to it is seen.
  fs.writeFileSync(path.join(root, 'src/deep/newer/d.ts'), 'y\n');
  assert.equal(listingClean(root, second.listing!, second.scannedAtMs), false);
  assert.deepEqual(paths(root, second), paths(root));
  assert.ok(paths(root, second).includes('src/deep/newer/d.ts'));
});

test('a file added at the top level of the workspace has the whole tree listed again', () => {
  const root = topLevel;
  const cache = record(root);
  fs.writeFileSync(path.join(root, 'TOP.md'), 'x\n');
  const { value: listed, calls } = loggingGit(() => paths(root, cache));
  assert.deepEqual(listed, paths(root));
  assert.ok(listed.includes('TOP.md'));
  assert.ok(calls.some((c) => c.includes('ls-files -co') && !c.includes(' -- ')), calls.join('\n'));
});

test('a second read takes the listing the first one made: directories it listed again are not asked of git again', () => {
  const root = twoReads;
  const cache = record(root);
  fs.writeFileSync(path.join(root, 'src/deep/new.ts'), 'x\n');
  // Older than the racy margin when the first read takes the directory's stat again.
  sleep(RACY_MARGIN_MS + 100);
  const { value: first, calls } = loggingGit(() => scanWorkspace(root, cache, undefined, { anyGitEnv: true }));
  assert.ok(calls.some((c) => c.endsWith(' -- src/deep/')), calls.join('\n'));
  assert.ok(first.manifest.entries.some((e) => e.path === 'src/deep/new.ts'));
  const second = withoutGit(() => scanWorkspace(root, cache, undefined, { anyGitEnv: true, previous: first }));
  assert.equal(second.revision, first.revision);
  // A file added after the first read is seen by the second.
  fs.writeFileSync(path.join(root, 'src/newer.ts'), 'y\n');
  const third = scanWorkspace(root, cache, undefined, { anyGitEnv: true, previous: first });
  assert.ok(third.manifest.entries.some((e) => e.path === 'src/newer.ts'));
  assert.equal(third.revision, scanWorkspace(root).revision);
});

for (const [i, { what, want }] of replacements.entries()) {
  test(`a tracked file under a directory replaced by ${what} is absent, as git has it: in git's listing and in the listing cache`, () => {
    const root = replacedBefore[i]!;
    const fresh = scanWorkspace(root);
    assert.deepEqual(fresh.manifest.entries.map((e) => e.path), want);
    assert.ok(!fresh.manifest.entries.some((e) => e.sha256 === createHash('sha256').update('outside the workspace\n').digest('hex')), 'no bytes from outside');
    const cache = record(root);
    assert.equal(cache.revision, fresh.revision);
    assert.ok(cache.listing && listingClean(root, cache.listing, cache.scannedAtMs), 'the listing cache answers');
    const cached = withoutGit(() => scanWorkspace(root, cache));
    assert.deepEqual(cached.manifest.entries.map((e) => e.path), want);
    assert.equal(cached.revision, cache.revision);
  });

  test(`a tracked file under a directory replaced by ${what} since the checkpoint is absent when its directory is listed again`, () => {
    const root = replacedAfter[i]!;
    const cache = record(root);
    assert.ok(paths(root, cache).includes('src/deep/more/c.ts'));
    replacements[i]!.replace(path.join(root, 'src/deep'));
    assert.equal(listingClean(root, cache.listing!, cache.scannedAtMs), false);
    assert.deepEqual(paths(root, cache), want);
    assert.deepEqual(paths(root), want);
    assert.equal(scanWorkspace(root, cache).revision, scanWorkspace(root).revision);
  });
}
