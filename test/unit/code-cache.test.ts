// The bundles' one loader (src/cli/code-cache.ts) runs a plain CommonJS body with the code cache this
// Node offers: module.enableCompileCache (Node >= 22.1) or vm.Script's cachedData (Node 20).

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
globalThis.codeCacheTestRun = { filename: __filename, dirname: __dirname, base: path.basename(__filename), exportsIsModuleExports: exports === module.exports };
`;

test('runBundle runs a body as a CommonJS module, with its own file name, directory and require', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-code-cache-'));
  try {
    const body = path.join(dir, 'body.cjs');
    fs.writeFileSync(body, BODY);
    const g = globalThis as { codeCacheTestRun?: Record<string, unknown> };
    delete g.codeCacheTestRun;
    runBundle(body, createRequire(body));
    assert.deepEqual(g.codeCacheTestRun, { filename: body, dirname: dir, base: 'body.cjs', exportsIsModuleExports: true });
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
