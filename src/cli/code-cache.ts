// The one loader of the one-file CommonJS bundles (dist/bundles/*.body.cjs), with a code cache through
// Node's public APIs. Hooks and recall are fresh processes on every call, and much of their own time goes
// to compiling the functions they run; a code cache spares later runs that work:
//
// - The cache the build stores beside the body (`<body>.v8-<V8 version>.cache`, scripts/warm-code-cache.ts):
//   V8's code cache taken after one real run of the body, so it holds every function that run compiled.
//   The body is compiled with `vm.Script` and that `cachedData` on a Node with the V8 that built it; the
//   file's name carries the V8 version, so that another Node does not read it (V8 would reject it only
//   after compiling the body's top level, which then would be compiled again).
// - Otherwise, on Node >= 22.1, Node's own compile cache: `module.enableCompileCache()`, then the body is
//   required as any CommonJS module. Node keeps that cache in its compile cache directory
//   (NODE_COMPILE_CACHE, else one under the system's temporary directory) and checks it against the
//   body's contents itself, but it holds only what compiling the body's top level made: the functions a
//   run calls are compiled again on every run (the Stop hook on Node 24 took about 96 ms with it against
//   about 76 ms with the build's cache; bench/README.md).
// - Otherwise (Node 20 with no cache that fits) the body is compiled as usual.
//
// A body that its loader hands modules of its own (agent-task collect's, src/commands/agent-task/collect.ts)
// is compiled with vm.Script and its stored cache on every Node: require would give it Node's modules.
//
// A cache from another Node or V8 version is rejected by V8 itself: the cache only changes speed, never
// behaviour.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vm from 'node:vm';

type ModuleFunction = (exports: object, require: NodeJS.Require, module: { exports: object }, filename: string, dirname: string) => void;

/** The cache file the build stores beside a body, for the V8 version this Node has. */
export const cacheFileOf = (body: string): string => `${body}.v8-${process.versions.v8}.cache`;

/** The wrapper Node gives a CommonJS module, which a body compiled with vm.Script gets too. */
const BODY_HEAD = '(function (exports, require, module, __filename, __dirname) {';
const BODY_TAIL = '\n})';

/** Compiles the CommonJS body as Node would wrap it, with the code cache when one is given. */
export function compileBody(file: string, cachedData: Uint8Array | undefined): vm.Script {
  const source = `${BODY_HEAD}${fs.readFileSync(file, 'utf8')}${BODY_TAIL}`;
  return new vm.Script(source, cachedData ? { filename: file, cachedData } : { filename: file });
}

/** compileBody with the code cache read from cacheFile (none when it cannot be read). */
export function compileBodyCached(file: string, cacheFile: string): vm.Script {
  return compileBody(file, readCodeCache(cacheFile));
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
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}

/**
 * module.enableCompileCache where this Node has it (22.1 and later; @types/node 20 does not know it).
 * node:module is not loaded at a Node 20 start, and loading it there (about 0.2 ms, for a function that
 * Node does not have) is skipped.
 */
const enableCompileCache =
  Number(process.versions.node.split('.')[0]) >= 22 ? (process.getBuiltinModule('node:module') as { enableCompileCache?: () => unknown }).enableCompileCache : undefined;

/** Whether this Node keeps the code cache itself (module.enableCompileCache). */
export const hasCompileCache = (): boolean => typeof enableCompileCache === 'function';

/**
 * Loads a body (a path beside the loader) with the best code cache this Node can use and returns its
 * exports: the build's stored cache when V8 accepts it, else Node's own compile cache where there is one
 * (the body is then required), else none. `req` is the loader's own require: a body compiled with
 * vm.Script gets it as its require too.
 */
export function requireBundle(file: string, req: NodeJS.Require): object {
  const stored = readCodeCache(cacheFileOf(file));
  if (stored !== undefined || !enableCompileCache) {
    const script = compileBody(file, stored);
    if (script.cachedDataRejected !== true || !enableCompileCache) return loadBody(script, file, path.dirname(file), req);
  }
  enableCompileCache!();
  return req(file) as object;
}

/** Runs a body (a path beside the loader) as this process's program: requireBundle, its exports unused. */
export function runBundle(file: string, req: NodeJS.Require): void {
  requireBundle(file, req);
}
