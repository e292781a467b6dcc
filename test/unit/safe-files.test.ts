// Owner-private, non-symlink, create-only files (src/core/fs/safe.ts) on real temp directories.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';
import { AgentscmError } from '../../src/core/errors.js';
import {
  assertPrivateDir,
  ensurePrivateDir,
  publishCreateOnly,
  readBoundedInput,
  readBoundedInputFrom,
  readPrivateFile,
  replaceDurably,
  requireAbsolute,
} from '../../src/core/fs/safe.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-safe-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const fresh = () => path.join(tmp, `c${++n}`);
const mode = (p: string) => fs.lstatSync(p).mode & 0o777;
const isError = (kind: string, code: string) => (e: unknown) => e instanceof AgentscmError && e.kind === kind && e.code === code;

test('publishCreateOnly creates a 0600 file and leaves no temp file', () => {
  const dir = fresh();
  ensurePrivateDir(dir);
  const file = path.join(dir, 'secret');
  assert.equal(publishCreateOnly(file, 'one'), true);
  assert.equal(fs.readFileSync(file, 'utf8'), 'one');
  assert.equal(mode(file), 0o600);
  assert.deepEqual(fs.readdirSync(dir), ['secret']);
  assert.equal(publishCreateOnly(path.join(dir, 'public'), 'p', 0o644), true);
  assert.equal(mode(path.join(dir, 'public')), 0o644, 'mode is applied regardless of umask');
});

test('publishCreateOnly returns false and leaves the bytes when the target exists', () => {
  const dir = fresh();
  ensurePrivateDir(dir);
  const file = path.join(dir, 'secret');
  fs.writeFileSync(file, 'original', { mode: 0o600 });
  assert.equal(publishCreateOnly(file, 'replacement'), false);
  assert.equal(fs.readFileSync(file, 'utf8'), 'original');
  assert.deepEqual(fs.readdirSync(dir), ['secret'], 'the temp file was removed');
  // A dangling symlink at the name is also "exists": nothing is written through it.
  const target = path.join(dir, 'elsewhere');
  fs.symlinkSync(target, path.join(dir, 'link'));
  assert.equal(publishCreateOnly(path.join(dir, 'link'), 'x'), false);
  assert.equal(fs.existsSync(target), false);
  assert.deepEqual(fs.readdirSync(dir).sort(), ['link', 'secret']);
});

test('replaceDurably replaces atomically and leaves no temp file', () => {
  const dir = fresh();
  ensurePrivateDir(dir);
  const file = path.join(dir, 'state');
  replaceDurably(file, 'a');
  replaceDurably(file, 'b');
  assert.equal(fs.readFileSync(file, 'utf8'), 'b');
  assert.equal(mode(file), 0o600);
  assert.deepEqual(fs.readdirSync(dir), ['state']);
});

test('ensurePrivateDir creates 0700 dirs and refuses symlinks, loose modes and files', () => {
  const dir = path.join(fresh(), 'a', 'b');
  const old = process.umask(0o000);
  try {
    ensurePrivateDir(dir);
  } finally {
    process.umask(old);
  }
  assert.equal(mode(dir), 0o700);
  assert.equal(mode(path.dirname(dir)), 0o700, 'created parents are private too');
  ensurePrivateDir(dir); // idempotent
  const link = fresh();
  fs.symlinkSync(dir, link);
  assert.throws(() => ensurePrivateDir(link), isError('LOCAL_STATE', 'SYMLINK'));
  const loose = fresh();
  fs.mkdirSync(loose);
  for (const m of [0o755, 0o750, 0o701, 0o710]) {
    fs.chmodSync(loose, m);
    assert.throws(() => assertPrivateDir(loose), isError('LOCAL_STATE', 'LOOSE_PERMISSIONS'), m.toString(8));
  }
  const file = fresh();
  fs.writeFileSync(file, '');
  assert.throws(() => ensurePrivateDir(file), isError('LOCAL_STATE', 'NOT_A_DIRECTORY'));
  assert.throws(() => assertPrivateDir(fresh()), isError('LOCAL_STATE', 'MISSING'));
});

test('readPrivateFile refuses symlinks, loose modes, non-files and oversized files', () => {
  const dir = fresh();
  ensurePrivateDir(dir);
  const file = path.join(dir, 'k');
  fs.writeFileSync(file, 'secret', { mode: 0o600 });
  assert.equal(readPrivateFile(file).toString(), 'secret');
  fs.symlinkSync(file, path.join(dir, 'l'));
  assert.throws(() => readPrivateFile(path.join(dir, 'l')), isError('LOCAL_STATE', 'SYMLINK'));
  for (const m of [0o644, 0o640, 0o604, 0o660]) {
    fs.chmodSync(file, m);
    assert.throws(() => readPrivateFile(file), isError('LOCAL_STATE', 'LOOSE_PERMISSIONS'), m.toString(8));
  }
  fs.chmodSync(file, 0o600);
  assert.throws(() => readPrivateFile(file, 'key', 5), isError('LOCAL_STATE', 'TOO_LARGE'));
  assert.throws(() => readPrivateFile(dir), isError('LOCAL_STATE', 'NOT_A_FILE'));
  assert.throws(() => readPrivateFile(path.join(dir, 'none')), isError('LOCAL_STATE', 'MISSING'));
});

test('bounded input: size checked before reading, stdin streamed with the same bound', async () => {
  const file = fresh();
  fs.writeFileSync(file, 'x'.repeat(10));
  assert.equal(readBoundedInput(file, 10).length, 10);
  assert.throws(() => readBoundedInput(file, 9), isError('BAD_INPUT', 'TOO_LARGE'));
  assert.throws(() => readBoundedInput(fresh(), 9), isError('BAD_INPUT', 'UNREADABLE'));
  assert.throws(() => readBoundedInput(tmp, 9), isError('BAD_INPUT', 'NOT_A_FILE'));
  const stream = (chunks: string[]) => Readable.from(chunks.map((c) => Buffer.from(c)));
  assert.equal((await readBoundedInputFrom('-', 10, 'input', stream(['abc', 'def', 'ghij']))).toString(), 'abcdefghij');
  await assert.rejects(readBoundedInputFrom('-', 9, 'input', stream(['abc', 'def', 'ghij'])), isError('BAD_INPUT', 'TOO_LARGE'));
  assert.equal((await readBoundedInputFrom(file, 10, 'input', stream(['ignored']))).length, 10);
});

test('requireAbsolute', () => {
  assert.equal(requireAbsolute('/a/b', 'token file'), '/a/b');
  assert.throws(() => requireAbsolute('a/b', 'token file'), isError('BAD_INPUT', 'RELATIVE_PATH'));
});
