// Owner-private, non-symlink, create-only durable files. Key, token and collector state go through
// these helpers: a directory is 0700 and not a symlink, a secret file is a 0600 regular file owned by
// us, and publication never overwrites (write temp, fsync it, link to the final name, fsync the dir).

import { randomBytes } from '../crypto/random.js';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AgentscmError, localState, badInput } from '../errors.js';

const GROUP_WORLD = 0o077;

function currentUid(): number | undefined {
  return typeof process.getuid === 'function' ? process.getuid() : undefined;
}

/** lstat that returns undefined for a missing path and throws LOCAL_STATE for anything else odd. */
export function lstatOrUndefined(p: string): fs.Stats | undefined {
  try {
    // throwIfNoEntry: a missing path is common (hooks probe for optional files) and a thrown error,
    // with its stack trace, costs a cold process more than the lstat itself.
    return fs.lstatSync(p, { throwIfNoEntry: false });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    // The system error is kept (its code and path): a caller may tell a workspace path's error from a store's.
    throw new AgentscmError('LOCAL_STATE', 'FS_ERROR', `cannot inspect ${p}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`, undefined, { cause: e });
  }
}

/** Refuses a symlink, a non-directory, a foreign owner or group/world access bits. */
export function assertPrivateDir(dir: string, what = 'directory'): void {
  const st = lstatOrUndefined(dir);
  if (!st) throw localState(`${what} ${dir} does not exist`, 'MISSING');
  if (st.isSymbolicLink()) throw localState(`${what} ${dir} is a symlink; refusing it`, 'SYMLINK');
  if (!st.isDirectory()) throw localState(`${what} ${dir} is not a directory`, 'NOT_A_DIRECTORY');
  const uid = currentUid();
  if (uid !== undefined && st.uid !== uid) throw localState(`${what} ${dir} is owned by another user`, 'FOREIGN_OWNER');
  if ((st.mode & GROUP_WORLD) !== 0) {
    throw localState(`${what} ${dir} is accessible by group or others (mode ${(st.mode & 0o777).toString(8)}); chmod 700 it`, 'LOOSE_PERMISSIONS');
  }
}

/**
 * A store file of the data dir as lstat found it (absent: undefined): it must be a regular file, not a
 * symlink (SQLite would follow one and write its database and its -wal and -shm elsewhere), with no
 * group or world access (the data dir's databases are 0600).
 */
export function checkStoreFile(file: string, st: fs.Stats | undefined, what: string): fs.Stats | undefined {
  if (!st) return undefined;
  if (st.isSymbolicLink()) throw localState(`${what} ${file} is a symlink; refusing it`, 'SYMLINK');
  if (!st.isFile()) throw localState(`${what} ${file} is not a regular file`, 'STORE_UNAVAILABLE');
  if ((st.mode & GROUP_WORLD) !== 0) {
    throw localState(`${what} ${file} is accessible by group or others (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it`, 'LOOSE_PERMISSIONS');
  }
  return st;
}

/** Creates dir (0700) if absent, parents as needed, then checks it with assertPrivateDir. */
export function ensurePrivateDir(dir: string, what = 'directory'): void {
  const st = lstatOrUndefined(dir);
  if (!st) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.chmodSync(dir, 0o700); // mkdir's mode is filtered by umask
    fsyncDir(path.dirname(path.resolve(dir)));
  }
  assertPrivateDir(dir, what);
}

/** Reads a secret file: must be a regular non-symlink file owned by us with no group/world bits. */
export function readPrivateFile(file: string, what = 'file', maxBytes = 1 << 20): Buffer {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw localState(`${what} ${file} does not exist`, 'MISSING');
    if (code === 'ELOOP') throw localState(`${what} ${file} is a symlink; refusing it`, 'SYMLINK');
    throw localState(`cannot open ${what} ${file}: ${code ?? 'error'}`, 'FS_ERROR');
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw localState(`${what} ${file} is not a regular file`, 'NOT_A_FILE');
    const uid = currentUid();
    if (uid !== undefined && st.uid !== uid) throw localState(`${what} ${file} is owned by another user`, 'FOREIGN_OWNER');
    if ((st.mode & GROUP_WORLD) !== 0) {
      throw localState(`${what} ${file} is accessible by group or others (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it`, 'LOOSE_PERMISSIONS');
    }
    if (st.size > maxBytes) throw localState(`${what} ${file} is larger than ${maxBytes} bytes`, 'TOO_LARGE');
    return readAllFd(fd, st.size, maxBytes);
  } finally {
    fs.closeSync(fd);
  }
}

function readAllFd(fd: number, hint: number, maxBytes: number): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  const buf = Buffer.allocUnsafe(Math.max(4096, Math.min(hint + 1, maxBytes + 1)));
  for (;;) {
    const n = fs.readSync(fd, buf, 0, buf.length, null);
    if (n === 0) break;
    total += n;
    if (total > maxBytes) throw localState(`file is larger than ${maxBytes} bytes`, 'TOO_LARGE');
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  // A small file comes in one read: no concatenation.
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

/** Reads an input document (not secret) with a size bound checked before reading. "-" reads stdin. */
export function readBoundedInput(file: string, maxBytes: number, what = 'input file'): Buffer {
  if (file === '-') return readAllFd(0, 0, maxBytes);
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw badInput(`cannot read ${what} ${file}: ${code === 'ENOENT' ? 'no such file' : (code ?? 'error')}`, 'UNREADABLE');
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw badInput(`${what} ${file} is not a regular file`, 'NOT_A_FILE');
    if (st.size > maxBytes) throw badInput(`${what} ${file} is ${st.size} bytes, over the ${maxBytes}-byte limit`, 'TOO_LARGE');
    return readAllFd(fd, st.size, maxBytes);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * readBoundedInput for commands: "-" reads the command's stdin stream asynchronously (a synchronous
 * read of fd 0 fails with EAGAIN on a non-blocking pipe or terminal), stopping once past maxBytes.
 */
export async function readBoundedInputFrom(file: string, maxBytes: number, what: string, stdin: NodeJS.ReadableStream): Promise<Buffer> {
  if (file !== '-') return readBoundedInput(file, maxBytes, what);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stdin) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk);
    total += b.byteLength;
    if (total > maxBytes) throw badInput(`${what} on stdin is over the ${maxBytes}-byte limit`, 'TOO_LARGE');
    chunks.push(b);
  }
  return Buffer.concat(chunks, total);
}

/** Reads exactly `length` bytes of fd at `position`; undefined when the file ends before them. */
export function readExactly(fd: number, length: number, position: number): Buffer | undefined {
  const buf = Buffer.alloc(length);
  for (let off = 0; off < length; ) {
    const n = fs.readSync(fd, buf, off, length - off, position + off);
    if (n === 0) return undefined;
    off += n;
  }
  return buf;
}

export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Creates `file` (O_EXCL|O_NOFOLLOW: never an existing file, never through a symlink) holding bytes, with
 * exactly `mode` whatever the umask, and no fsync: for files whose durability comes from elsewhere.
 */
export function writeNewFile(file: string, bytes: Uint8Array, mode: number): void {
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, mode);
  try {
    fs.writeFileSync(fd, bytes);
    fs.fchmodSync(fd, mode);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes bytes to a fresh exclusive temp file beside `file` and fsyncs it; returns its path. */
export function writeSyncedTemp(dir: string, file: string, bytes: Uint8Array | string, mode: number): string {
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, mode);
  try {
    fs.writeFileSync(fd, bytes);
    fs.fchmodSync(fd, mode);
    fs.fsyncSync(fd);
  } catch (e) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  fs.closeSync(fd);
  return tmp;
}

/**
 * Create-only durable publication: writes bytes to a fresh temp file in the same directory, fsyncs
 * it, links it to `file` (link(2) fails with EEXIST instead of replacing), removes the temp name and
 * fsyncs the directory. Returns false, leaving the existing file untouched, when `file` exists.
 */
export function publishCreateOnly(file: string, bytes: Uint8Array | string, mode = 0o600): boolean {
  const dir = path.dirname(path.resolve(file));
  const tmp = writeSyncedTemp(dir, file, bytes, mode);
  try {
    fs.linkSync(tmp, file);
  } catch (e) {
    fs.unlinkSync(tmp);
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  fs.unlinkSync(tmp);
  fsyncDir(dir);
  return true;
}

/** Atomic durable replacement (temp + fsync + rename + dir fsync) for state files we own. */
export function replaceDurably(file: string, bytes: Uint8Array | string, mode = 0o600): void {
  const dir = path.dirname(path.resolve(file));
  const tmp = writeSyncedTemp(dir, file, bytes, mode);
  fs.renameSync(tmp, file);
  fsyncDir(dir);
}

/** Requires an absolute path (token files, hook arguments). */
export function requireAbsolute(p: string, what: string): string {
  if (!path.isAbsolute(p)) throw badInput(`${what} must be an absolute path (got ${JSON.stringify(p)})`, 'RELATIVE_PATH');
  return p;
}
