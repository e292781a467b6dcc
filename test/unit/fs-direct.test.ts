// src/core/fs/direct.ts (node:fs in the hook bundles) against node:fs itself, on the same files: every
// function the bundles use, in the forms they use and in forms it leaves to node:fs, with the same
// results and the same errors.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import * as direct from '../../src/core/fs/direct.js';

const [major, minor] = process.versions.node.split('.').map(Number);

function tree(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-fs-direct-'));
  fs.writeFileSync(path.join(d, 'file.txt'), 'hello\nworld\n');
  fs.writeFileSync(path.join(d, 'empty'), '');
  fs.mkdirSync(path.join(d, 'sub'));
  fs.writeFileSync(path.join(d, 'sub', 'inner.bin'), Buffer.from([0, 1, 2, 255]));
  fs.symlinkSync('file.txt', path.join(d, 'link'));
  fs.symlinkSync('missing', path.join(d, 'dangling'));
  return d;
}

/** What a thrown error says, as a comparable record (undefined when nothing was thrown). */
function outcome<T>(f: () => T): { value?: T; error?: Record<string, unknown> } {
  try {
    return { value: f() };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return { error: { name: err.name, code: err.code, errno: err.errno, syscall: err.syscall, path: err.path, dest: (err as { dest?: string }).dest, message: err.message } };
  }
}

const STAT_FIELDS = ['dev', 'mode', 'nlink', 'uid', 'gid', 'rdev', 'blksize', 'ino', 'size', 'blocks', 'atimeMs', 'mtimeMs', 'ctimeMs', 'birthtimeMs'] as const;
const NS_FIELDS = ['atimeNs', 'mtimeNs', 'ctimeNs', 'birthtimeNs'] as const;
const TYPES = ['isFile', 'isDirectory', 'isSymbolicLink', 'isFIFO', 'isSocket', 'isBlockDevice', 'isCharacterDevice'] as const;

function sameStats(got: unknown, want: unknown, what: string): void {
  if (want === undefined) return assert.equal(got, undefined, what);
  const g = got as Record<string, unknown> & Record<(typeof TYPES)[number], () => boolean>;
  const w = want as Record<string, unknown> & Record<(typeof TYPES)[number], () => boolean>;
  for (const k of [...STAT_FIELDS, ...(typeof w.dev === 'bigint' ? NS_FIELDS : [])]) assert.equal(g[k], w[k], `${what}: ${k}`);
  for (const t of TYPES) assert.equal(g[t](), w[t](), `${what}: ${t}()`);
  assert.equal((g.mtime as Date).getTime(), (w.mtime as Date).getTime(), `${what}: mtime`);
}

test('direct.ts reaches the fs binding on the Node versions it was written for', () => {
  assert.equal(direct.direct, major === 20 && minor! >= 19 && process.platform !== 'win32' && (process as { permission?: unknown }).permission === undefined);
});

test('lstatSync, statSync and fstatSync give node:fs stats and errors, plain and bigint', () => {
  const d = tree();
  try {
    const paths = ['file.txt', 'empty', 'sub', 'link', 'dangling', 'nope', 'file.txt/below', 'sub/inner.bin'].map((p) => path.join(d, p));
    const options = [undefined, { throwIfNoEntry: false }, { bigint: true }, { bigint: true, throwIfNoEntry: false }, { throwIfNoEntry: true }, {}, { bigint: 1 }, { throwIfNoEntry: 0 }, { other: true }];
    for (const p of paths) {
      for (const o of options) {
        for (const f of ['lstatSync', 'statSync'] as const) {
          const got = outcome(() => (direct[f] as (p: string, o?: object) => unknown)(p, o));
          const want = outcome(() => (fs[f] as (p: string, o?: object) => unknown)(p, o));
          const what = `${f}(${path.basename(p)}, ${JSON.stringify(o)})`;
          assert.deepEqual(got.error, want.error, what);
          sameStats(got.value, want.value, what);
        }
      }
    }
    const fd = fs.openSync(path.join(d, 'file.txt'), 'r');
    try {
      sameStats(direct.fstatSync(fd), fs.fstatSync(fd), 'fstatSync');
      sameStats(direct.fstatSync(fd, { bigint: true }), fs.fstatSync(fd, { bigint: true }), 'fstatSync bigint');
      sameStats(direct.fstatSync(fd, { bigint: false }), fs.fstatSync(fd, { bigint: false }), 'fstatSync bigint false');
    } finally {
      fs.closeSync(fd);
    }
    assert.deepEqual(outcome(() => direct.fstatSync(999_999)).error, outcome(() => fs.fstatSync(999_999)).error);
  } finally {
    fs.rmSync(d, { recursive: true, force: true });
  }
});

test('stat times become the Dates node:fs makes, sub-millisecond parts rounded as it rounds them', () => {
  const d = tree();
  try {
    const p = path.join(d, 'file.txt');
    // Fractions of a millisecond on both sides of one half: Date alone would truncate them all.
    for (const frac of [0.0004, 0.4996, 0.5, 0.5004, 0.9996]) {
      const t = 1_796_067_600 + (575 + frac) / 1000;
      fs.utimesSync(p, t, t);
      for (const o of [undefined, { bigint: true }]) {
        const got = direct.statSync(p, o) as fs.Stats;
        const want = fs.statSync(p, o) as fs.Stats;
        for (const k of ['atime', 'mtime', 'ctime', 'birthtime'] as const) assert.equal(got[k].getTime(), want[k].getTime(), `${k} at +${frac} ms ${JSON.stringify(o)}`);
      }
    }
  } finally {
    fs.rmSync(d, { recursive: true, force: true });
  }
});

test('openSync, readSync, closeSync and readFileSync read what node:fs reads', () => {
  const d = tree();
  try {
    const file = path.join(d, 'file.txt');
    for (const flags of [fs.constants.O_RDONLY, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW, 'r', undefined]) {
      const fd = direct.openSync(file, flags as number);
      try {
        const a = Buffer.alloc(16);
        const b = Buffer.alloc(16);
        assert.equal(direct.readSync(fd, a, 2, 5, 6), fs.readSync(fd, b, 2, 5, 6));
        assert.deepEqual(a, b);
        assert.equal(direct.readSync(fd, a, 0, 0, 0), 0);
        // Current position: reads advance it.
        assert.equal(direct.readSync(fd, a, 0, 4, null), 4);
        assert.equal(direct.readSync(fd, a, 4, 4, null), 4);
        assert.equal(a.subarray(0, 8).toString(), 'hello\nwo');
      } finally {
        direct.closeSync(fd);
      }
    }
    // Out-of-range lengths and bad descriptors get node:fs's own errors.
    const fd = fs.openSync(file, 'r');
    try {
      assert.deepEqual(outcome(() => direct.readSync(fd, Buffer.alloc(4), 0, 8, 0)).error, outcome(() => fs.readSync(fd, Buffer.alloc(4), 0, 8, 0)).error);
      assert.deepEqual(outcome(() => direct.readSync(fd, Buffer.alloc(4), -1, 2, 0)).error, outcome(() => fs.readSync(fd, Buffer.alloc(4), -1, 2, 0)).error);
      // The caller's descriptor from its position to the end, left open.
      fs.readSync(fd, Buffer.alloc(6), 0, 6, null);
      assert.deepEqual(direct.readFileSync(fd), Buffer.from('world\n'));
      assert.equal(fs.fstatSync(fd).isFile(), true);
    } finally {
      fs.closeSync(fd);
    }
    assert.deepEqual(outcome(() => direct.closeSync(999_999)).error, outcome(() => fs.closeSync(999_999)).error);
    assert.deepEqual(outcome(() => direct.openSync(path.join(d, 'nope'), 'r')).error, outcome(() => fs.openSync(path.join(d, 'nope'), 'r')).error);
    assert.deepEqual(outcome(() => direct.openSync(path.join(d, 'link'), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)).error, outcome(() => fs.openSync(path.join(d, 'link'), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)).error);

    for (const p of ['file.txt', 'empty', 'sub/inner.bin', 'link', 'sub', 'nope'].map((x) => path.join(d, x)).concat(['/proc/self/stat'])) {
      for (const o of [undefined, 'utf8', { encoding: 'utf8' }, 'utf-8', 'latin1', { encoding: 'hex' }, { flag: 'r' }]) {
        const got = outcome(() => direct.readFileSync(p, o as 'utf8'));
        const want = outcome(() => fs.readFileSync(p, o as 'utf8'));
        const what = `readFileSync(${p}, ${JSON.stringify(o)})`;
        assert.deepEqual(got.error, want.error, what);
        // /proc files change between reads: only their shape is compared.
        if (p.startsWith('/proc/')) assert.equal(typeof got.value, typeof want.value, what);
        else assert.deepEqual(got.value, want.value, what);
      }
    }
    assert.ok((direct.readFileSync('/proc/self/stat') as Buffer).length > 0, 'a file whose size stat gives as 0 is read to its end');
  } finally {
    fs.rmSync(d, { recursive: true, force: true });
  }
});

test('readdirSync, readlinkSync, realpathSync and existsSync answer as node:fs does', () => {
  const d = tree();
  try {
    const sortByName = <T extends { name: string } | string>(a: T[]) => [...a].sort((x, y) => (String((x as { name?: string }).name ?? x) < String((y as { name?: string }).name ?? y) ? -1 : 1));
    assert.deepEqual(sortByName(direct.readdirSync(d)), sortByName(fs.readdirSync(d)));
    const got = sortByName(direct.readdirSync(d, { withFileTypes: true }));
    const want = sortByName(fs.readdirSync(d, { withFileTypes: true }));
    assert.equal(got.length, want.length);
    got.forEach((e, i) => {
      const w = want[i]!;
      assert.equal(e.name, w.name);
      assert.equal(e.parentPath, w.parentPath);
      assert.equal(e.path, w.path);
      for (const t of TYPES) assert.equal(e[t](), w[t](), `${e.name}: ${t}`);
    });
    for (const p of ['nope', 'file.txt'].map((x) => path.join(d, x))) {
      assert.deepEqual(outcome(() => direct.readdirSync(p)).error, outcome(() => fs.readdirSync(p)).error);
    }
    assert.equal(direct.readlinkSync(path.join(d, 'link')), fs.readlinkSync(path.join(d, 'link')));
    assert.deepEqual(outcome(() => direct.readlinkSync(path.join(d, 'file.txt'))).error, outcome(() => fs.readlinkSync(path.join(d, 'file.txt'))).error);
    for (const p of ['link', 'sub/../file.txt', 'sub', '.'].map((x) => path.join(d, x))) {
      assert.equal(direct.realpathSync(p), fs.realpathSync(p), p);
      assert.equal(direct.realpathSync.native(p), fs.realpathSync.native(p), p);
    }
    // A missing path fails in both, with the same code (the JavaScript walk names lstat as its call).
    assert.equal(outcome(() => direct.realpathSync(path.join(d, 'dangling'))).error?.code, outcome(() => fs.realpathSync(path.join(d, 'dangling'))).error?.code);
    assert.deepEqual(outcome(() => direct.realpathSync.native(path.join(d, 'nope'))).error, outcome(() => fs.realpathSync.native(path.join(d, 'nope'))).error);
    for (const p of ['file.txt', 'dangling', 'nope', 'sub'].map((x) => path.join(d, x))) assert.equal(direct.existsSync(p), fs.existsSync(p), p);
  } finally {
    fs.rmSync(d, { recursive: true, force: true });
  }
});

test('writes, renames, links, modes and syncs do what node:fs does, and fail as it fails', () => {
  const d = tree();
  try {
    const p = path.join(d, 'w.json');
    direct.writeFileSync(p, '{"a":"é"}', { mode: 0o600, flag: 'wx' });
    assert.equal(fs.readFileSync(p, 'utf8'), '{"a":"é"}');
    assert.equal(fs.statSync(p).mode & 0o777, 0o600);
    assert.deepEqual(outcome(() => direct.writeFileSync(p, 'x', { mode: 0o600, flag: 'wx' })).error, outcome(() => fs.writeFileSync(p, 'x', { mode: 0o600, flag: 'wx' })).error);
    direct.writeFileSync(p, 'over');
    assert.equal(fs.readFileSync(p, 'utf8'), 'over');
    direct.writeFileSync(p, Buffer.from('bytes to a path'));
    assert.equal(fs.readFileSync(p, 'utf8'), 'bytes to a path');
    const fd = fs.openSync(path.join(d, 'fd.bin'), 'wx', 0o600);
    try {
      direct.writeFileSync(fd, Buffer.from('one,'));
      direct.writeFileSync(fd, Buffer.from('two'));
      direct.writeFileSync(fd, ',é');
      direct.fsyncSync(fd);
      direct.fchmodSync(fd, 0o400);
    } finally {
      fs.closeSync(fd);
    }
    assert.equal(fs.readFileSync(path.join(d, 'fd.bin'), 'utf8'), 'one,two,é');
    assert.equal(fs.statSync(path.join(d, 'fd.bin')).mode & 0o777, 0o400);
    const w = fs.openSync(path.join(d, 'ws.bin'), 'wx', 0o600);
    try {
      assert.equal(direct.writeSync(w, Buffer.from('abcdef'), 1, 3), 3);
      assert.equal(direct.writeSync(w, Buffer.from('xyz'), 0, 3, null), 3);
      assert.equal(direct.writeSync(w, 'str'), 3);
      assert.deepEqual(outcome(() => direct.writeSync(w, Buffer.from('ab'), 1, 5)).error, outcome(() => fs.writeSync(w, Buffer.from('ab'), 1, 5)).error);
    } finally {
      fs.closeSync(w);
    }
    assert.equal(fs.readFileSync(path.join(d, 'ws.bin'), 'utf8'), 'bcdxyzstr');
    const ro = fs.openSync(path.join(d, 'file.txt'), 'r');
    try {
      assert.deepEqual(outcome(() => direct.writeSync(ro, Buffer.from('x'), 0, 1)).error, outcome(() => fs.writeSync(ro, Buffer.from('x'), 0, 1)).error);
      assert.deepEqual(outcome(() => direct.writeFileSync(ro, Buffer.from('x'))).error, outcome(() => fs.writeFileSync(ro, Buffer.from('x'))).error);
    } finally {
      fs.closeSync(ro);
    }

    direct.mkdirSync(path.join(d, 'm1'), { mode: 0o700 });
    direct.mkdirSync(path.join(d, 'm2'), 0o750);
    direct.mkdirSync(path.join(d, 'm3'));
    assert.equal(fs.statSync(path.join(d, 'm1')).mode & 0o777, 0o700 & ~process.umask());
    assert.equal(fs.statSync(path.join(d, 'm2')).mode & 0o777, 0o750 & ~process.umask());
    assert.deepEqual(outcome(() => direct.mkdirSync(path.join(d, 'm1'), { mode: 0o700 })).error, outcome(() => fs.mkdirSync(path.join(d, 'm1'), { mode: 0o700 })).error);
    direct.mkdirSync(path.join(d, 'r1', 'r2'), { recursive: true });
    assert.ok(fs.statSync(path.join(d, 'r1', 'r2')).isDirectory());

    direct.chmodSync(path.join(d, 'm3'), 0o711);
    assert.equal(fs.statSync(path.join(d, 'm3')).mode & 0o777, 0o711);
    direct.renameSync(p, path.join(d, 'renamed'));
    assert.equal(fs.existsSync(p), false);
    assert.deepEqual(outcome(() => direct.renameSync(p, path.join(d, 'x'))).error, outcome(() => fs.renameSync(p, path.join(d, 'x'))).error);
    direct.linkSync(path.join(d, 'renamed'), path.join(d, 'hard'));
    assert.equal(fs.statSync(path.join(d, 'hard')).nlink, 2);
    assert.deepEqual(outcome(() => direct.linkSync(path.join(d, 'renamed'), path.join(d, 'hard'))).error, outcome(() => fs.linkSync(path.join(d, 'renamed'), path.join(d, 'hard'))).error);
    direct.unlinkSync(path.join(d, 'hard'));
    assert.deepEqual(outcome(() => direct.unlinkSync(path.join(d, 'hard'))).error, outcome(() => fs.unlinkSync(path.join(d, 'hard'))).error);
  } finally {
    fs.rmSync(d, { recursive: true, force: true });
  }
});

test('forms direct.ts does not take are node:fs answers, errors included', () => {
  const d = tree();
  try {
    const nul = path.join(d, 'file.txt\u0000evil');
    const calls: (() => unknown)[] = [() => direct.lstatSync(nul), () => direct.statSync(nul), () => direct.openSync(nul, 'r'), () => direct.readFileSync(nul), () => direct.realpathSync(nul), () => direct.existsSync(nul)];
    for (const f of calls) {
      const got = outcome(f);
      assert.ok(got.error === undefined ? got.value === false : got.error.code === 'ERR_INVALID_ARG_VALUE' || got.error.code === 'ERR_INVALID_ARG_TYPE', JSON.stringify(got));
    }
    assert.deepEqual(outcome(() => direct.lstatSync(nul)).error, outcome(() => fs.lstatSync(nul)).error);
    // A Buffer path and a URL go to node:fs, which takes them.
    assert.equal((direct.lstatSync(Buffer.from(path.join(d, 'file.txt'))) as fs.Stats).size, 12);
    assert.equal(direct.readFileSync(new URL(`file://${path.join(d, 'file.txt')}`), 'utf8'), 'hello\nworld\n');
    assert.deepEqual(outcome(() => direct.openSync(path.join(d, 'file.txt'), 'bogus')).error, outcome(() => fs.openSync(path.join(d, 'file.txt'), 'bogus')).error);
    assert.deepEqual(outcome(() => direct.chmodSync(path.join(d, 'file.txt'), 'rw' as unknown as number)).error, outcome(() => fs.chmodSync(path.join(d, 'file.txt'), 'rw' as unknown as number)).error);
  } finally {
    fs.rmSync(d, { recursive: true, force: true });
  }
});
