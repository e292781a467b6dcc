// The hook path (Stop hooks, the tree-ring lifecycle hook) must never load ink, react, dockerode, execa
// or the full zod (zod/mini is allowed): hooks run on every agent stop and must start in tens of
// milliseconds.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { COMMANDS } from '../../src/entries/cli.js';
import { BODY_NAME } from '../../src/entries/stop-hook-files.js';
import { cacheFileOf, compileBody, readCodeCache } from '../../src/cli/code-cache.js';
import { REPO_ROOT } from '../support/cli.js';
import { commandModuleFile, forbiddenIn, HOOK_FORBIDDEN_PACKAGES, importsOf, walkImports } from '../support/import-graph.js';

const CLI = path.join(REPO_ROOT, 'dist', 'src', 'entries', 'cli.js');
const COMMANDS_DIR = path.join(REPO_ROOT, 'dist', 'src', 'commands') + path.sep;

test('no hook command reaches a forbidden package (static and dynamic imports)', () => {
  const hooks = COMMANDS.filter((c) => c.errorPolicy === 'hook');
  for (const c of hooks) {
    const graph = walkImports(commandModuleFile(CLI, c.load));
    assert.deepEqual(forbiddenIn(graph), [], `hook "${c.path.join(' ')}" must not load ${HOOK_FORBIDDEN_PACKAGES.join(', ')}`);
  }
});

test('the entry module (command table, parser, runner) statically reaches no command module and no forbidden package', () => {
  const graph = walkImports(CLI, { dynamic: false });
  assert.ok(graph.files.has(path.join(REPO_ROOT, 'dist', 'src', 'cli', 'run.js')), 'the walker followed the static imports');
  assert.deepEqual(forbiddenIn(graph), []);
  assert.deepEqual([...graph.files].filter((f) => f.startsWith(COMMANDS_DIR)), [], 'command modules are only imported lazily');
  assert.deepEqual([...graph.packages], ['commander'], 'the entry path imports no package but the argv parser');
});

test('the launchers\' --version fast path loads one module that imports nothing', () => {
  const graph = walkImports(path.join(REPO_ROOT, 'dist', 'src', 'version.js'));
  assert.equal(graph.files.size, 1);
  assert.equal(graph.packages.size, 0);
  for (const bin of ['agentscm.js', 'tree-ring.js']) {
    const found = importsOf(path.join(REPO_ROOT, 'bin', bin));
    assert.deepEqual(found.static, [], `${bin} has no static imports`);
    assert.deepEqual(found.dynamic, ['../dist/src/version.js', '../dist/src/entries/cli.js'], bin);
  }
});

test('self-test: the walker finds forbidden packages through relative and dynamic imports', () => {
  const sign = COMMANDS.find((c) => c.path.join(' ') === 'agent-task observation sign')!;
  const file = commandModuleFile(CLI, sign.load);
  assert.equal(file, path.join(COMMANDS_DIR, 'agent-task', 'observation-sign.js'));
  const graph = walkImports(file);
  // observation-sign -> assertion-input -> core/contract/assertion -> zod
  assert.ok(graph.files.has(path.join(REPO_ROOT, 'dist', 'src', 'core', 'contract', 'assertion.js')));
  assert.deepEqual(forbiddenIn(graph).map((s) => s.split(' ')[0]), ['zod']);
  assert.ok(graph.packages.has('@noble/ed25519'));
  // Following dynamic imports from the table reaches every command module, and so zod.
  const all = walkImports(CLI);
  for (const c of COMMANDS) assert.ok(all.files.has(commandModuleFile(CLI, c.load)), c.path.join(' '));
  assert.ok(all.packages.has('zod'));
});

test('the hook bundles are CommonJS, require only Node builtins (and better-sqlite3\'s addon loader), and carry zod/mini but not the full zod', () => {
  // Every module a hook process loads costs start-up time on every stop: the bodies carry everything
  // they import (better-sqlite3's JavaScript too, its addon loaded from the package: src/core/sqlite/bundled.ts;
  // `bindings` only when the installed package is another version), and the loaders only Node's own modules.
  const requires = (file: string) => {
    const text = fs.readFileSync(path.join(REPO_ROOT, 'dist', 'bundles', file), 'utf8');
    assert.doesNotMatch(text, /\bimport\s*\(|\bimport\.meta\b/, `${file}: no ES module loading at run time`);
    return { text, required: [...new Set([...text.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]!))].sort() };
  };
  const body = requires(BODY_NAME);
  // better-sqlite3's bundled JavaScript requires builtins by their bare names, and `bindings` lazily.
  assert.deepEqual(body.required.filter((r) => !r.startsWith('node:')), ['bindings', 'fs', 'path', 'util'], 'the Stop hook body requires no package but better-sqlite3\'s addon loader');
  assert.match(body.text, /\$constructor\("ZodMiniObject"/, 'the qualification answer is checked by its zod/mini schema');
  assert.doesNotMatch(body.text, /\$constructor\("Zod(?!Mini)[A-Za-z]+"/, 'no schema of the full zod');
  for (const loader of ['agentscm-stop-hook.cjs', 'tree-ring-hook.cjs', 'tree-ring-recall.cjs']) {
    assert.deepEqual(requires(loader).required.filter((r) => !r.startsWith('node:')), [], `${loader} requires no package`);
  }
  // A builtin's namespace is copied once per body (scripts/build-bundles.ts), not once per importing module.
  for (const file of [BODY_NAME, 'tree-ring-hook.body.cjs', 'tree-ring-recall.body.cjs']) {
    const text = requires(file).text;
    assert.doesNotMatch(text, /__toESM\(require\("node:/, `${file}: no namespace copy of a builtin per importing module`);
    const copies = [...text.matchAll(/__reExport\(\w+, ?require\("(node:[^"]+)"\)\)/g)].map((m) => m[1]!);
    assert.ok(copies.includes('node:fs'), `${file}: node:fs through its one module`);
    assert.equal(new Set(copies).size, copies.length, `${file}: each builtin copied once`);
  }
});

test('the build stores a code cache of the Stop hook body that this Node accepts', () => {
  const body = path.join(REPO_ROOT, 'dist', 'bundles', BODY_NAME);
  const cache = readCodeCache(cacheFileOf(body));
  assert.ok(cache && cache.length > 0, 'npm run build writes the code cache');
  assert.equal(compileBody(body, cache).cachedDataRejected, false);
});
