// node:fs for the one-file hook bundles (scripts/bundle-builtins.ts aliases `node:fs` to this module in
// them; everything else imports node:fs itself). A hook is a fresh process on every event, and node:fs's
// JavaScript, which Node compiles only when a function is first called (its built-in code cache holds
// no function bodies), costs such a process more than the system calls it makes: a cold `lstatSync`
// takes about 0.35 ms where the call itself takes 0.04 ms. The bundles carry their own compiled code
// (src/cli/code-cache.ts), so the same calls made from here, straight to the fs binding node:fs wraps,
// cost only the system call.
//
// Each function below takes exactly the forms the bundles use and gives node:fs's result and errors:
// the binding is the one node:fs calls (binding.ts), and on Node 20.19+ its synchronous functions
// throw the same errors node:fs lets through. Any other form (a Buffer or URL path, a path with a NUL
// byte, an option this module does not know, an out-of-range offset) goes to node:fs itself, which
// validates it and answers as always; so do all calls on any other Node version, where the binding's
// shape is not this one, and on Windows (binding.ts). test/unit/fs-direct.test.ts compares both on
// the same files.

import type * as NodeFs from 'node:fs';
import { fsBinding, type FsBinding } from './binding.js';

// Not an import: the bundles alias `node:fs` to this very module.
const nodeFs: typeof NodeFs = process.getBuiltinModule('node:fs');

const binding = fsBinding();

/** Whether this process calls the binding directly (false: every call goes to node:fs). */
export const direct = binding !== undefined;

const S_IFMT = 0o170000;

/** A stat time as node:fs makes its Date: milliseconds rounded to the nearest (Date alone would truncate). */
function dateFromMs(ms: number | bigint): Date {
  return new Date(Math.round(Number(ms)));
}

/** The type predicates of fs.Stats and fs.Dirent, from the file type bits (mode & S_IFMT). */
abstract class FileType {
  protected abstract type(): number;
  isFile(): boolean {
    return this.type() === 0o100000;
  }
  isDirectory(): boolean {
    return this.type() === 0o040000;
  }
  isSymbolicLink(): boolean {
    return this.type() === 0o120000;
  }
  isFIFO(): boolean {
    return this.type() === 0o010000;
  }
  isSocket(): boolean {
    return this.type() === 0o140000;
  }
  isBlockDevice(): boolean {
    return this.type() === 0o060000;
  }
  isCharacterDevice(): boolean {
    return this.type() === 0o020000;
  }
}

/** fs.Stats and fs.BigIntStats as node:fs builds them from the binding's field array. */
class DirectStats extends FileType {
  readonly dev: number | bigint;
  readonly mode: number | bigint;
  readonly nlink: number | bigint;
  readonly uid: number | bigint;
  readonly gid: number | bigint;
  readonly rdev: number | bigint;
  readonly blksize: number | bigint;
  readonly ino: number | bigint;
  readonly size: number | bigint;
  readonly blocks: number | bigint;
  readonly atimeMs: number | bigint;
  readonly mtimeMs: number | bigint;
  readonly ctimeMs: number | bigint;
  readonly birthtimeMs: number | bigint;
  readonly atimeNs?: bigint;
  readonly mtimeNs?: bigint;
  readonly ctimeNs?: bigint;
  readonly birthtimeNs?: bigint;

  constructor(a: Float64Array | BigInt64Array) {
    super();
    this.dev = a[0]!;
    this.mode = a[1]!;
    this.nlink = a[2]!;
    this.uid = a[3]!;
    this.gid = a[4]!;
    this.rdev = a[5]!;
    this.blksize = a[6]!;
    this.ino = a[7]!;
    this.size = a[8]!;
    this.blocks = a[9]!;
    if (a instanceof BigInt64Array) {
      const ns = (i: number) => a[i]! * 1_000_000_000n + a[i + 1]!;
      this.atimeNs = ns(10);
      this.mtimeNs = ns(12);
      this.ctimeNs = ns(14);
      this.birthtimeNs = ns(16);
      this.atimeMs = this.atimeNs / 1_000_000n;
      this.mtimeMs = this.mtimeNs / 1_000_000n;
      this.ctimeMs = this.ctimeNs / 1_000_000n;
      this.birthtimeMs = this.birthtimeNs / 1_000_000n;
    } else {
      const ms = (i: number) => a[i]! * 1e3 + a[i + 1]! / 1e6;
      this.atimeMs = ms(10);
      this.mtimeMs = ms(12);
      this.ctimeMs = ms(14);
      this.birthtimeMs = ms(16);
    }
  }

  protected type(): number {
    return Number(this.mode) & S_IFMT;
  }
  get atime(): Date {
    return dateFromMs(this.atimeMs);
  }
  get mtime(): Date {
    return dateFromMs(this.mtimeMs);
  }
  get ctime(): Date {
    return dateFromMs(this.ctimeMs);
  }
  get birthtime(): Date {
    return dateFromMs(this.birthtimeMs);
  }
}

/** A path the binding may be given as it is: a string without NUL (node:fs refuses those itself). */
const plainPath = (p: unknown): p is string => typeof p === 'string' && !p.includes('\u0000');

/**
 * The stat family's options as node:fs hands them to the binding, which reads `bigint` as set only when
 * it is true and `throwIfNoEntry` as cleared only when it is false (other keys are ignored there too);
 * undefined for what is not an options object (node:fs then answers).
 */
function statOptions(o: unknown): { bigint: boolean; throwIfNoEntry: boolean } | undefined {
  if (o === undefined) return { bigint: false, throwIfNoEntry: true };
  if (typeof o !== 'object' || o === null) return undefined;
  const r = o as { bigint?: unknown; throwIfNoEntry?: unknown };
  return { bigint: r.bigint === true, throwIfNoEntry: r.throwIfNoEntry !== false };
}

const isFd = (fd: unknown): fd is number => typeof fd === 'number' && Number.isInteger(fd) && fd >= 0 && fd <= 0x7fffffff;
const isMode = (m: unknown): m is number => typeof m === 'number' && Number.isInteger(m) && m >= 0 && m <= 0o7777;

const O = nodeFs.constants;
/** The string flags the bundles use, as node:fs's stringToFlags maps them. */
const FLAGS: Readonly<Record<string, number>> = {
  r: O.O_RDONLY,
  w: O.O_TRUNC | O.O_CREAT | O.O_WRONLY,
  wx: O.O_TRUNC | O.O_CREAT | O.O_WRONLY | O.O_EXCL,
};
const flagsOf = (f: unknown): number | undefined => (f === undefined ? O.O_RDONLY : typeof f === 'number' && Number.isInteger(f) ? f : typeof f === 'string' ? FLAGS[f] : undefined);

// Every export has node:fs's own type: callers keep their types whichever module they get.

export const lstatSync = ((path: unknown, options?: unknown) => {
  const o = statOptions(options);
  if (!binding || !plainPath(path) || !o) return nodeFs.lstatSync(path as string, options as NodeFs.StatSyncOptions);
  const a = binding.lstat(path, o.bigint, undefined, o.throwIfNoEntry);
  return a === undefined ? undefined : new DirectStats(a);
}) as typeof NodeFs.lstatSync;

export const statSync = ((path: unknown, options?: unknown) => {
  const o = statOptions(options);
  if (!binding || !plainPath(path) || !o) return nodeFs.statSync(path as string, options as NodeFs.StatSyncOptions);
  const a = binding.stat(path, o.bigint, undefined, o.throwIfNoEntry);
  return a === undefined ? undefined : new DirectStats(a);
}) as typeof NodeFs.statSync;

export const fstatSync = ((fd: unknown, options?: unknown) => {
  const o = statOptions(options);
  if (!binding || !isFd(fd) || !o) return nodeFs.fstatSync(fd as number, options as NodeFs.StatOptions);
  return new DirectStats(binding.fstat(fd, o.bigint, undefined, false));
}) as typeof NodeFs.fstatSync;

export const openSync = ((path: unknown, flags?: unknown, mode?: unknown): number => {
  const f = flagsOf(flags);
  if (!binding || !plainPath(path) || f === undefined || !(mode === undefined || isMode(mode))) return nodeFs.openSync(path as string, flags as number, mode as number);
  return binding.open(path, f, mode ?? 0o666);
}) as typeof NodeFs.openSync;

export const closeSync = ((fd: unknown): void => {
  if (!binding || !isFd(fd)) return nodeFs.closeSync(fd as number);
  binding.close(fd);
}) as typeof NodeFs.closeSync;

/** readSync(fd, buffer, offset, length, position) with numbers inside the buffer; position null = current. */
export const readSync = ((...args: unknown[]): number => {
  const [fd, buffer, offset, length, position] = args;
  if (
    !binding || args.length !== 5 || !isFd(fd) || !(buffer instanceof Uint8Array) || !Number.isSafeInteger(offset) || !Number.isSafeInteger(length) ||
    (offset as number) < 0 || (length as number) < 0 || (offset as number) + (length as number) > buffer.byteLength ||
    !(position === null || position === undefined || position === -1 || (Number.isSafeInteger(position) && (position as number) >= 0))
  ) {
    return (nodeFs.readSync as (...a: unknown[]) => number)(...args);
  }
  if (length === 0) return 0;
  // node:fs refuses an empty buffer even for a zero length; a non-zero length cannot fit one anyway.
  return binding.read(fd, buffer, offset as number, length as number, (position ?? -1) as number);
}) as typeof NodeFs.readSync;

/** The whole file from an open descriptor: its size first when it is a regular file, else until EOF. */
function readAll(b: FsBinding, fd: number): Buffer | undefined {
  const st = b.fstat(fd, false, undefined, false) as Float64Array;
  const size = (st[1]! & S_IFMT) === 0o100000 ? st[8]! : 0;
  if (size > 0x7fffffff) return undefined;
  if (size > 0) {
    const buf = Buffer.allocUnsafe(size);
    let pos = 0;
    for (;;) {
      const n = pos < size ? b.read(fd, buf, pos, size - pos, -1) : 0;
      if (n === 0) return pos === size ? buf : buf.subarray(0, pos);
      pos += n;
    }
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(64 * 1024);
    const n = b.read(fd, chunk, 0, chunk.length, -1);
    if (n === 0) return Buffer.concat(chunks, total);
    chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    total += n;
  }
}

export const readFileSync = ((path: unknown, options?: unknown) => {
  const utf8 = options === 'utf8' || options === 'utf-8' || (isPlainObject(options) && onlyKeys(options, ['encoding']) && (options.encoding === 'utf8' || options.encoding === 'utf-8'));
  if (binding && isFd(path) && options === undefined) {
    // A caller's descriptor: read from its current position to the end, and leave it open.
    return readAll(binding, path) ?? nodeFs.readFileSync(path);
  }
  if (!binding || !plainPath(path) || !(options === undefined || utf8)) return nodeFs.readFileSync(path as string, options as undefined);
  if (utf8) return binding.readFileUtf8(path, O.O_RDONLY);
  const fd = binding.open(path, O.O_RDONLY, 0o666);
  let bytes: Buffer | undefined;
  try {
    bytes = readAll(binding, fd);
  } finally {
    binding.close(fd);
  }
  // Over 2 GiB: node:fs says why it will not read that.
  return bytes ?? nodeFs.readFileSync(path);
}) as typeof NodeFs.readFileSync;

function isPlainObject(o: unknown): o is Record<string, unknown> {
  return typeof o === 'object' && o !== null && Object.getPrototypeOf(o) === Object.prototype;
}

function onlyKeys(o: Record<string, unknown>, keys: readonly string[]): boolean {
  return Object.keys(o).every((k) => keys.includes(k) && o[k] !== undefined);
}

/** libuv's directory entry types, which node:fs.constants carries (its typings do not list them). */
type DirentType = 'UV_DIRENT_UNKNOWN' | 'UV_DIRENT_FILE' | 'UV_DIRENT_DIR' | 'UV_DIRENT_LINK' | 'UV_DIRENT_FIFO' | 'UV_DIRENT_SOCKET' | 'UV_DIRENT_CHAR' | 'UV_DIRENT_BLOCK';
const DT = nodeFs.constants as unknown as Record<DirentType, number>;

/** The file type bits of each libuv directory entry type (an unknown type has none). */
const DIRENT_TYPES: ReadonlyMap<number, number> = new Map([
  [DT.UV_DIRENT_FILE, 0o100000],
  [DT.UV_DIRENT_DIR, 0o040000],
  [DT.UV_DIRENT_LINK, 0o120000],
  [DT.UV_DIRENT_FIFO, 0o010000],
  [DT.UV_DIRENT_SOCKET, 0o140000],
  [DT.UV_DIRENT_CHAR, 0o020000],
  [DT.UV_DIRENT_BLOCK, 0o060000],
]);

/** Dirent as node:fs builds it from the binding's names and types (an unknown type is looked up). */
class DirectDirent extends FileType {
  constructor(
    readonly name: string,
    private readonly fileType: number,
    readonly parentPath: string,
  ) {
    super();
  }
  get path(): string {
    return this.parentPath;
  }
  protected type(): number {
    return this.fileType;
  }
}

export const readdirSync = ((path: unknown, options?: unknown) => {
  const withTypes = isPlainObject(options) && onlyKeys(options, ['withFileTypes']) && options.withFileTypes === true;
  if (!binding || !plainPath(path) || !(options === undefined || withTypes)) return nodeFs.readdirSync(path as string, options as undefined);
  if (!withTypes) return binding.readdir(path, 'utf8', false) as string[];
  const [names, types] = binding.readdir(path, 'utf8', true) as [string[], number[]];
  return names.map((name, i) => {
    let fileType = DIRENT_TYPES.get(types[i]!) ?? 0;
    if (types[i] === DT.UV_DIRENT_UNKNOWN) {
      // As node:fs does: the file system gave no type, so the entry itself says.
      const a = binding.lstat(`${path}/${name}`, false, undefined, false) as Float64Array | undefined;
      if (a !== undefined) fileType = a[1]! & S_IFMT;
    }
    return new DirectDirent(name, fileType, path);
  });
}) as typeof NodeFs.readdirSync;

export const readlinkSync = ((path: unknown, options?: unknown) => {
  if (!binding || !plainPath(path) || options !== undefined) return nodeFs.readlinkSync(path as string, options as undefined);
  return binding.readlink(path, 'utf8');
}) as typeof NodeFs.readlinkSync;

export const renameSync = ((from: unknown, to: unknown): void => {
  if (!binding || !plainPath(from) || !plainPath(to)) return nodeFs.renameSync(from as string, to as string);
  binding.rename(from, to);
}) as typeof NodeFs.renameSync;

export const mkdirSync = ((path: unknown, options?: unknown) => {
  const mode = options === undefined ? 0o777 : isMode(options) ? options : isPlainObject(options) && onlyKeys(options, ['mode']) && isMode(options.mode) ? options.mode : undefined;
  if (!binding || !plainPath(path) || mode === undefined) return nodeFs.mkdirSync(path as string, options as NodeFs.MakeDirectoryOptions);
  binding.mkdir(path, mode, false);
  return undefined;
}) as typeof NodeFs.mkdirSync;

export const chmodSync = ((path: unknown, mode: unknown): void => {
  if (!binding || !plainPath(path) || !isMode(mode)) return nodeFs.chmodSync(path as string, mode as number);
  binding.chmod(path, mode);
}) as typeof NodeFs.chmodSync;

export const fchmodSync = ((fd: unknown, mode: unknown): void => {
  if (!binding || !isFd(fd) || !isMode(mode)) return nodeFs.fchmodSync(fd as number, mode as number);
  binding.fchmod(fd, mode);
}) as typeof NodeFs.fchmodSync;

export const fsyncSync = ((fd: unknown): void => {
  if (!binding || !isFd(fd)) return nodeFs.fsyncSync(fd as number);
  binding.fsync(fd);
}) as typeof NodeFs.fsyncSync;

export const unlinkSync = ((path: unknown): void => {
  if (!binding || !plainPath(path)) return nodeFs.unlinkSync(path as string);
  binding.unlink(path);
}) as typeof NodeFs.unlinkSync;

export const linkSync = ((from: unknown, to: unknown): void => {
  if (!binding || !plainPath(from) || !plainPath(to)) return nodeFs.linkSync(from as string, to as string);
  binding.link(from, to);
}) as typeof NodeFs.linkSync;

export const existsSync = ((path: unknown): boolean => {
  if (!binding || !plainPath(path)) return nodeFs.existsSync(path as string);
  return binding.existsSync(path);
}) as typeof NodeFs.existsSync;

/**
 * writeFileSync of a string as UTF-8 to a path, with at most a numeric mode and one of the flags above;
 * or of bytes or a string (UTF-8) to a caller's descriptor, at its current position (the descriptor
 * stays open).
 */
export const writeFileSync = ((path: unknown, data: unknown, options?: unknown) => {
  if (binding && isFd(path) && (data instanceof Uint8Array || typeof data === 'string') && options === undefined) {
    // As node:fs does: a string is written as its UTF-8 bytes.
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let off = 0;
    while (off < bytes.byteLength) {
      const ctx: { errno?: number } = {};
      const n = binding.writeBuffer(path, bytes, off, bytes.byteLength - off, null, undefined, ctx);
      // A failed write wrote nothing: node:fs writes the rest, and throws its own error if it fails again.
      if (ctx.errno !== undefined) return writeRest(path, bytes, off);
      off += n;
    }
    return;
  }
  const o = options === undefined ? {} : isPlainObject(options) && onlyKeys(options, ['mode', 'flag', 'encoding']) ? options : undefined;
  const flags = o && flagsOf(o.flag ?? 'w');
  const simple =
    o !== undefined && typeof data === 'string' && (o.encoding === undefined || o.encoding === 'utf8' || o.encoding === 'utf-8') && flags !== undefined &&
    (o.mode === undefined || isMode(o.mode));
  if (!binding || !plainPath(path) || !simple) return nodeFs.writeFileSync(path as string, data as string, options as NodeFs.WriteFileOptions);
  binding.writeFileUtf8(path, data as string, flags!, (o!.mode as number | undefined) ?? 0o666);
}) as typeof NodeFs.writeFileSync;

/**
 * realpathSync and realpathSync.native both as realpath(3) through the binding. node:fs's realpathSync
 * walks the path in JavaScript instead; for a path that exists both give the same answer on Linux (only
 * a failure's `syscall` differs: 'realpath' here, 'lstat' there).
 */
const realpathNative = ((path: unknown, options?: unknown) => {
  if (!binding || !plainPath(path) || options !== undefined) return nodeFs.realpathSync.native(path as string, options as undefined);
  return binding.realpath(path, 'utf8');
}) as typeof NodeFs.realpathSync.native;
export const realpathSync = Object.assign(
  ((path: unknown, options?: unknown) => (binding && plainPath(path) && options === undefined ? binding.realpath(path, 'utf8') : nodeFs.realpathSync(path as string, options as undefined))) as typeof NodeFs.realpathSync,
  { native: realpathNative },
);

/** writeSync(fd, bytes, offset, length[, position]) with numbers inside the buffer, at the current position. */
export const writeSync = ((...args: unknown[]): number => {
  const [fd, buffer, offset, length, position] = args;
  if (
    !binding || args.length < 4 || args.length > 5 || !isFd(fd) || !(buffer instanceof Uint8Array) || !Number.isSafeInteger(offset) || !Number.isSafeInteger(length) ||
    (offset as number) < 0 || (length as number) < 0 || (offset as number) + (length as number) > buffer.byteLength || !(position === undefined || position === null)
  ) {
    return (nodeFs.writeSync as (...a: unknown[]) => number)(...args);
  }
  const ctx: { errno?: number } = {};
  const n = binding.writeBuffer(fd, buffer, offset as number, length as number, null, undefined, ctx);
  // A failed write wrote nothing: node:fs makes it again, and throws its own error (EAGAIN included) if it fails.
  return ctx.errno === undefined ? n : (nodeFs.writeSync as (...a: unknown[]) => number)(...args);
}) as typeof NodeFs.writeSync;

function writeRest(fd: number, data: Uint8Array, from: number): void {
  let off = from;
  while (off < data.byteLength) off += nodeFs.writeSync(fd, data, off, data.byteLength - off);
}

// Used by the bundles as node:fs gives them.
export const constants = nodeFs.constants;
export const rmSync = nodeFs.rmSync;
export const fsync = nodeFs.fsync;
export const access = nodeFs.access;
