// Loading a one-file CommonJS bundle with V8's code cache. Hooks and recall are fresh processes on
// every call, and much of their own time goes to compiling the functions they run; the build runs each
// such body once and stores the compiled code next to it (scripts/warm-code-cache.ts), so later runs
// skip that work. A cache from another Node or V8 version is rejected by V8 itself, and the body is then
// compiled as usual: the cache only changes speed, never behaviour.

import * as fs from 'node:fs';
import * as vm from 'node:vm';
import { fsBinding } from '../core/fs/binding.js';

type ModuleFunction = (exports: object, require: NodeJS.Require, module: { exports: object }, filename: string, dirname: string) => void;

/** The cache file that belongs to a body. */
export const cacheFileOf = (body: string): string => `${body}.cache`;

/** Compiles the CommonJS body as Node would wrap it, with the code cache when one is given. */
export function compileBody(file: string, cachedData: Uint8Array | undefined): vm.Script {
  // The loaders run without a code cache of their own: the binding spares them node:fs's cold JavaScript.
  const b = fsBinding();
  const source = b ? b.readFileUtf8(file, fs.constants.O_RDONLY) : fs.readFileSync(file, 'utf8');
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  return new vm.Script(wrapped, cachedData ? { filename: file, cachedData } : { filename: file });
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
      const size = (b.fstat(fd, false, undefined, false) as Float64Array)[8]!;
      const bytes = new Uint8Array(size);
      let off = 0;
      for (let n = -1; off < size && n !== 0; off += n) n = b.read(fd, bytes, off, size - off, -1);
      // A cache that changed size while it was read is not used (V8 would reject a partial one anyway).
      return off === size ? bytes : undefined;
    } finally {
      b.close(fd);
    }
  } catch {
    return undefined;
  }
}
