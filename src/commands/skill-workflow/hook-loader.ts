// Loading the Stop hook body with V8's code cache. The hook is a fresh process on every stop, and most
// of its own time goes to compiling the functions it runs; the build runs the hook once and stores the
// compiled code next to the bundle (scripts/bundle-stop-hook.ts), so later runs skip that work. A cache
// from another Node or V8 version is rejected by V8 itself, and the body is then compiled as usual:
// the cache only changes speed, never behaviour.

import * as fs from 'node:fs';
import * as vm from 'node:vm';

export const BODY_NAME = 'agentscm-stop-hook.body.cjs';
export const CACHE_NAME = 'agentscm-stop-hook.body.cjs.cache';

type ModuleFunction = (exports: object, require: NodeJS.Require, module: { exports: object }, filename: string, dirname: string) => void;

/** Compiles the CommonJS body as Node would wrap it, with the code cache when one is given. */
export function compileHookBody(file: string, cachedData: Buffer | undefined): vm.Script {
  const source = fs.readFileSync(file, 'utf8');
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  return new vm.Script(wrapped, cachedData ? { filename: file, cachedData } : { filename: file });
}

/** Runs a compiled body as the main module of this process. */
export function runHookBody(script: vm.Script, file: string, dirname: string, req: NodeJS.Require): void {
  const fn = script.runInThisContext() as ModuleFunction;
  const mod = { exports: {} };
  fn.call(mod.exports, mod.exports, req, mod, file, dirname);
}

/** The cache file's bytes, or undefined when there is none (a build without one still works). */
export function readCodeCache(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}
