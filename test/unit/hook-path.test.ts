// The hook path (Stop hooks, the tree-ring lifecycle hook) must never load ink, react, dockerode, execa
// or zod: hooks run on every agent stop and must start in tens of milliseconds.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { COMMANDS } from '../../src/cli.js';
import { BODY_NAME, CACHE_NAME, compileHookBody } from '../../src/commands/skill-workflow/hook-loader.js';
import { BODY_HEAD, BODY_TAIL, readCodeCache } from '../../src/cli/code-cache.js';
import { REPO_ROOT } from '../support/cli.js';
import { commandModuleFile, forbiddenIn, HOOK_FORBIDDEN_PACKAGES, importsOf, walkImports } from '../support/import-graph.js';

const CLI = path.join(REPO_ROOT, 'dist', 'src', 'cli.js');
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
  assert.deepEqual([...graph.packages], [], 'the entry path imports no package at all');
});

test('the launchers\' --version fast path loads one module that imports nothing', () => {
  const graph = walkImports(path.join(REPO_ROOT, 'dist', 'src', 'version.js'));
  assert.equal(graph.files.size, 1);
  assert.equal(graph.packages.size, 0);
  for (const bin of ['agentscm.js', 'tree-ring.js']) {
    const found = importsOf(path.join(REPO_ROOT, 'bin', bin));
    assert.deepEqual(found.static, [], `${bin} has no static imports`);
    assert.deepEqual(found.dynamic, ['../dist/src/version.js', '../dist/src/cli.js'], bin);
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

test('the Stop hook bundle is CommonJS and requires only node:buffer and node:path (both loaded by Node before any script) and what the bundled better-sqlite3 JavaScript requires, with node:fs through direct.ts', () => {
  // Every module a hook process loads costs start-up time on every stop: better-sqlite3's JavaScript is
  // bundled (its addon loaded from the package, src/core/sqlite/bundled.ts; `bindings` only when the
  // installed package is another version), node:http is replaced by a one-request client on libuv's TCP handle;
  // node:net comes only for a host-name endpoint, node:crypto (crypto/lazy.ts) only for a larger
  // workspace, child_process only for git work trees. The body's file calls go through
  // src/core/fs/direct.ts (the build aliases node:fs to it), which takes node:fs for what it leaves to it.
  const requires = (file: string) => {
    const text = fs.readFileSync(path.join(REPO_ROOT, 'dist', 'hook', file), 'utf8');
    assert.doesNotMatch(text, /\bimport\s*\(|\bimport\.meta\b/, `${file}: no ES module loading at run time`);
    assert.doesNotMatch(text, /__toESM\(require\("node:/, `${file}: builtins are used directly, not copied into namespaces`);
    return [...new Set([...text.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]))].sort();
  };
  assert.deepEqual(requires('agentscm-stop-hook.body.cjs'), ['bindings', 'fs', 'node:buffer', 'node:path', 'path', 'util']);
  for (const body of ['agentscm-stop-hook.body.cjs', 'tree-ring-hook.body.cjs', 'tree-ring-recall.body.cjs']) {
    const text = fs.readFileSync(path.join(REPO_ROOT, 'dist', 'hook', body), 'utf8');
    assert.equal(text.match(/process\.getBuiltinModule\("node:fs"\)/g)?.length, 1, `${body}: node:fs is reached once, by direct.ts`);
    assert.doesNotMatch(text, /require\("node:fs"\)/, `${body}: no module of the body takes node:fs itself`);
  }
  assert.deepEqual(requires('agentscm-stop-hook.cjs'), ['node:buffer', 'node:fs', 'node:path', 'node:vm']);
});

test('the build stores a code cache of the Stop hook body that this Node accepts', () => {
  const body = path.join(REPO_ROOT, 'dist', 'hook', BODY_NAME);
  const cache = readCodeCache(path.join(REPO_ROOT, 'dist', 'hook', CACHE_NAME));
  assert.ok(cache && cache.length > 0, 'npm run build writes the code cache');
  assert.equal(compileHookBody(body, path.join(REPO_ROOT, 'dist', 'hook', CACHE_NAME)).cachedDataRejected, false);
});

test('the build writes each body wrapped and in ASCII, as its loader reads it without a copy', () => {
  for (const body of ['agentscm-stop-hook.body.cjs', 'tree-ring-hook.body.cjs', 'tree-ring-recall.body.cjs', 'agentscm-collect.body.cjs']) {
    const bytes = fs.readFileSync(path.join(REPO_ROOT, 'dist', 'hook', body));
    const text = bytes.toString('utf8');
    assert.ok(text.startsWith(BODY_HEAD) && text.endsWith(BODY_TAIL), `${body} is a function expression`);
    assert.ok(!bytes.some((b) => b > 0x7f), `${body} is ASCII`);
  }
});
