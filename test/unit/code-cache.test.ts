// The bundles' one loader (src/cli/code-cache.ts) runs a plain CommonJS body with the best code cache
// this Node can use: the build's stored cache (vm.Script's cachedData) when V8 accepts it, else
// module.enableCompileCache (Node >= 22.1) and a plain require, else none.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as nodeModule from 'node:module';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { cacheFileOf, compileBody, hasCompileCache, runBundle } from '../../src/cli/code-cache.js';

const BODY = `'use strict';
const path = require('node:path');
globalThis.codeCacheTestRun = { filename: __filename, dirname: __dirname, base: path.basename(__filename), exportsIsModuleExports: exports === module.exports, required: require.cache[__filename] !== undefined };
`;

test('runBundle runs a body as a CommonJS module, with its own file name, directory and require', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-code-cache-'));
  try {
    const body = path.join(dir, 'body.cjs');
    fs.writeFileSync(body, BODY);
    const g = globalThis as { codeCacheTestRun?: Record<string, unknown> };
    delete g.codeCacheTestRun;
    runBundle(body, createRequire(body));
    // No stored cache: Node's own compile cache and a plain require where this Node has it.
    assert.deepEqual(g.codeCacheTestRun, { filename: body, dirname: dir, base: 'body.cjs', exportsIsModuleExports: true, required: hasCompileCache() });
    assert.equal(hasCompileCache(), typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a stored vm.Script cache is accepted when it fits the body, rejected (and the body still runs) when it does not', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-code-cache-'));
  try {
    const body = path.join(dir, 'body.cjs');
    fs.writeFileSync(body, BODY);
    const script = compileBody(body, undefined);
    script.runInThisContext();
    fs.writeFileSync(cacheFileOf(body), script.createCachedData());
    assert.equal(compileBody(body, fs.readFileSync(cacheFileOf(body))).cachedDataRejected, false);
    fs.writeFileSync(body, `${BODY}// changed\n`);
    assert.equal(compileBody(body, fs.readFileSync(cacheFileOf(body))).cachedDataRejected, true);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('runBundle compiles the body with the stored cache when V8 accepts it, on every Node; a cache that does not fit leaves it to Node\'s compile cache where there is one', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-code-cache-'));
  const g = globalThis as { codeCacheTestRun?: Record<string, unknown> };
  try {
    const run = (file: string): Record<string, unknown> | undefined => {
      delete g.codeCacheTestRun;
      runBundle(file, createRequire(file));
      return g.codeCacheTestRun;
    };
    // A fitting cache, taken after a run as scripts/warm-code-cache.ts takes it: the body is not required.
    const fits = path.join(dir, 'fits.cjs');
    fs.writeFileSync(fits, BODY);
    const script = compileBody(fits, undefined);
    script.runInThisContext();
    fs.writeFileSync(cacheFileOf(fits), script.createCachedData());
    assert.equal(run(fits)?.required, false);
    // A cache of other bytes (compiled here only by runBundle: V8 would take a source it compiled before from
    // its own in-memory cache and not look at the stored one): rejected, and the body still runs (required where Node has a compile cache).
    const other = path.join(dir, 'other.cjs');
    fs.writeFileSync(other, `${BODY}// other bytes\n`);
    fs.copyFileSync(cacheFileOf(fits), cacheFileOf(other));
    assert.deepEqual(run(other), { filename: other, dirname: dir, base: 'other.cjs', exportsIsModuleExports: true, required: hasCompileCache() });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the stored cache is named for the V8 that made it: a cache another Node stored beside the body is never read', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-code-cache-'));
  const g = globalThis as { codeCacheTestRun?: Record<string, unknown> };
  try {
    const body = path.join(dir, 'body.cjs');
    assert.equal(cacheFileOf(body), `${body}.v8-${process.versions.v8}.cache`);
    fs.writeFileSync(body, `${BODY}// foreign\n`);
    // A fitting cache, but under another V8 version's name (as a package built by another Node ships it).
    const script = compileBody(body, undefined);
    script.runInThisContext();
    fs.writeFileSync(`${body}.v8-0.0.0-other.cache`, script.createCachedData());
    delete g.codeCacheTestRun;
    runBundle(body, createRequire(body));
    // Not taken: Node's compile cache (a plain require) where there is one, else a plain compile.
    assert.equal((g.codeCacheTestRun as Record<string, unknown> | undefined)?.required, hasCompileCache());
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
