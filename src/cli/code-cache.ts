// Loading a one-file CommonJS bundle with V8's code cache. Hooks and recall are fresh processes on
// every call, and much of their own time goes to compiling the functions they run; the build runs each
// such body once and stores the compiled code next to it (scripts/warm-code-cache.ts), so later runs
// skip that work. A cache from another Node or V8 version is rejected by V8 itself, and the body is then
// compiled as usual: the cache only changes speed, never behaviour.

import * as fs from 'node:fs';
import * as vm from 'node:vm';
import { isAscii } from 'node:buffer';
import { fsBinding, type FsBinding } from '../core/fs/binding.js';

/** Buffer's own decoders (what toString calls, without its argument checks). */
interface SliceMethods {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}

type ModuleFunction = (exports: object, require: NodeJS.Require, module: { exports: object }, filename: string, dirname: string) => void;

/** The cache file that belongs to a body. */
export const cacheFileOf = (body: string): string => `${body}.cache`;

/**
 * The wrapper Node gives a CommonJS module. The build writes every body with it already (wrapBodyText),
 * so that a run uses the file's text as it was read: wrapping it then would copy the whole body into a
 * second string, fresh memory that a cold process pays for page by page. A body without it is wrapped
 * here.
 */
export const BODY_HEAD = '(function (exports, require, module, __filename, __dirname) {';
export const BODY_TAIL = '\n})';

/** The body's text as a function expression: as it is when the build wrapped it, else wrapped. */
export const wrapBodyText = (source: string): string => (source.startsWith(BODY_HEAD) ? source : `${BODY_HEAD}${source}${BODY_TAIL}`);

/** Compiles the CommonJS body as Node would wrap it, with the code cache when one is given. */
export function compileBody(file: string, cachedData: Uint8Array | undefined): vm.Script {
  // The loaders run without a code cache of their own: the binding spares them node:fs's cold JavaScript.
  const b = fsBinding();
  const source = b ? b.readFileUtf8(file, fs.constants.O_RDONLY) : fs.readFileSync(file, 'utf8');
  return new vm.Script(wrapBodyText(source), cachedData ? { filename: file, cachedData } : { filename: file });
}

/**
 * compileBody with the code cache read from cacheFile (none when it cannot be read). The body and the
 * cache are read into one buffer in turn: the body's text is copied out of it before the cache goes in,
 * and V8 reads the cache only while it compiles. Each page of fresh memory costs a cold process a page
 * fault, and on some virtual machines a fault costs microseconds; for the Stop hook this touches about
 * 80 pages fewer than reading each file into its own memory did (bench/README.md).
 */
export function compileBodyCached(file: string, cacheFile: string): vm.Script {
  const b = fsBinding();
  if (!b) return compileBody(file, readCodeCache(cacheFile));
  let cacheFd: number | undefined;
  try {
    cacheFd = b.open(cacheFile, fs.constants.O_RDONLY, 0);
  } catch {
    cacheFd = undefined;
  }
  try {
    const bodyFd = b.open(file, fs.constants.O_RDONLY, 0);
    let source: string;
    let buf: Buffer;
    let cacheSize = 0;
    try {
      const size = sizeOf(b, bodyFd);
      cacheSize = cacheFd === undefined ? 0 : sizeOf(b, cacheFd);
      buf = Buffer.allocUnsafe(Math.max(size, cacheSize, 1));
      if (readFull(b, bodyFd, buf, size) !== size) throw new Error(`${file} changed while it was read`);
      // The build's bodies are ASCII (esbuild escapes the rest), where Latin-1 is a plain copy; anything
      // else is decoded as UTF-8, as compileBody does.
      const text = buf as Buffer & SliceMethods;
      source = isAscii(buf.subarray(0, size)) ? text.latin1Slice(0, size) : text.utf8Slice(0, size);
    } finally {
      b.close(bodyFd);
    }
    // A cache that changed size while it was read is not used (V8 would reject a partial one anyway).
    const cachedData = cacheFd !== undefined && cacheSize > 0 && readFull(b, cacheFd, buf, cacheSize) === cacheSize ? buf.subarray(0, cacheSize) : undefined;
    return new vm.Script(wrapBodyText(source), cachedData ? { filename: file, cachedData } : { filename: file });
  } finally {
    if (cacheFd !== undefined) b.close(cacheFd);
  }
}

function sizeOf(b: FsBinding, fd: number): number {
  return (b.fstat(fd, false, undefined, false) as Float64Array)[8]!;
}

/** Reads up to size bytes from the start of fd into buf; returns how many it got. */
function readFull(b: FsBinding, fd: number, buf: Uint8Array, size: number): number {
  let off = 0;
  for (let n = -1; off < size && n !== 0; off += n) n = b.read(fd, buf, off, size - off, off);
  return off;
}

/** Runs a compiled body as the main module of this process. */
export function runBody(script: vm.Script, file: string, dirname: string, req: NodeJS.Require): void {
  loadBody(script, file, dirname, req);
}

/** Runs a compiled body as a module and returns its exports. */
export function loadBody(script: vm.Script, file: string, dirname: string, req: NodeJS.Require): object {
  const fn = script.runInThisContext() as ModuleFunction;
  const mod = { exports: {} };
  fn.call(mod.exports, mod.exports, req, mod, file, dirname);
  return mod.exports;
}

/** The cache file's bytes, or undefined when there is none (a build without one still works). */
export function readCodeCache(file: string): Uint8Array | undefined {
  try {
    const b = fsBinding();
    if (!b) return fs.readFileSync(file);
    const fd = b.open(file, fs.constants.O_RDONLY, 0);
    try {
      const size = sizeOf(b, fd);
      const bytes = new Uint8Array(size);
      // A cache that changed size while it was read is not used (V8 would reject a partial one anyway).
      return readFull(b, fd, bytes, size) === size ? bytes : undefined;
    } finally {
      b.close(fd);
    }
  } catch {
    return undefined;
  }
}
