// What `agent-task collect` loads before it can start: its entry starts the engine reads (dockerode),
// then runs one CommonJS bundle of its body with V8's code cache (scripts/build-bundles.ts). The bundle
// must carry zod and better-sqlite3's JavaScript inside it, take the modules it shares with the CLI (errors.js: exit codes are mapped by
// error class) from the entry instead of carrying copies, and never load ink, react or a copy of
// dockerode up front (ink only for a terminal; the body uses the entry's engine client).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import { test } from 'node:test';
import { COMMANDS } from '../../src/entries/cli.js';
import { cacheFileOf, compileBody, readCodeCache } from '../../src/cli/code-cache.js';
import { COLLECT_BODY, SHARED_WITH_BODY } from '../../src/commands/agent-task/collect.js';
import { workerFile } from '../../src/collectors/stager.js';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from '../support/cli.js';
import { commandModuleFile, importsOf, walkImports } from '../support/import-graph.js';

const CLI = path.join(REPO_ROOT, 'dist', 'src', 'entries', 'cli.js');
const DIR = path.join(REPO_ROOT, 'dist', 'src', 'commands', 'agent-task');

test('collect\'s entry runs the body bundle, and statically loads only light modules', () => {
  const spec = COMMANDS.find((c) => c.path.join(' ') === 'agent-task collect')!;
  const entry = commandModuleFile(CLI, spec.load);
  assert.equal(entry, path.join(DIR, 'collect.js'));
  assert.equal(COLLECT_BODY, path.join(REPO_ROOT, 'dist', 'bundles', 'agentscm-collect.body.cjs'));
  const graph = walkImports(entry, { dynamic: false });
  assert.deepEqual([...graph.packages], ['dockerode'], 'the entry imports only the engine client before the engine reads start');
  assert.ok(graph.files.has(path.join(REPO_ROOT, 'dist', 'src', 'core', 'errors.js')));
});

test('the collect body inlines zod, takes the shared modules from the entry and loads no ink, react or dockerode up front', () => {
  const source = readFileSync(COLLECT_BODY, 'utf8');
  const required = new Set([...source.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]!));
  const packages = [...required].filter((id) => !id.startsWith('node:') && !builtinModules.includes(id) && !id.startsWith('agentscm:'));
  // better-sqlite3's JavaScript is inside too: only `bindings`, which it would load its addon with when
  // not handed it (src/core/sqlite/bundled.ts hands it the installed addon).
  assert.deepEqual(packages, ['bindings']);
  assert.deepEqual([...required].filter((id) => id.startsWith('agentscm:')).sort(), Object.keys(SHARED_WITH_BODY).sort());
  assert.doesNotMatch(source, /class AgentscmError\b/, 'errors.js stays one shared module');
  assert.match(source, /ZodObject/, 'zod is inside the bundle');
  assert.deepEqual(importsOf(COLLECT_BODY).dynamic, [], 'no dynamic import() (a vm.Script body cannot make one)');
  assert.ok(importsOf(path.join(REPO_ROOT, 'dist', 'src', 'collectors', 'progress.js')).dynamic.includes('./progress-view.js'), 'the ink view is loaded only when needed');
});

test('the build\'s code cache of the collect body is accepted by this node', () => {
  const cache = readCodeCache(cacheFileOf(COLLECT_BODY));
  assert.ok(cache, 'npm run build makes the cache');
  assert.equal(compileBody(COLLECT_BODY, cache).cachedDataRejected, false);
});

test('the snapshot staging worker runs from its one-file CommonJS bundle, which needs no ES module loader', () => {
  const file = fileURLToPath(workerFile());
  assert.equal(file, path.join(REPO_ROOT, 'dist', 'bundles', 'stage-worker.cjs'));
  const source = readFileSync(file, 'utf8');
  const required = new Set([...source.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]!));
  assert.deepEqual([...required].filter((id) => !id.startsWith('node:')), [], 'builtins only: the worker carries its modules');
  assert.deepEqual(importsOf(file).dynamic, [], 'no dynamic import()');
});
