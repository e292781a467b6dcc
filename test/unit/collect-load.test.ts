// What `agent-task collect` loads before it can start: its entry reads the engine, then loads one
// bundle of its body (scripts/bundle-hook.ts). The bundle must carry zod inside it, share the one
// errors module with the CLI runner (exit codes are mapped by error class), and never load ink, react
// or dockerode up front (ink only for a terminal, dockerode not at all).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { COMMANDS } from '../../src/cli.js';
import { REPO_ROOT } from '../support/cli.js';
import { commandModuleFile, importsOf, walkImports } from '../support/import-graph.js';

const CLI = path.join(REPO_ROOT, 'dist', 'src', 'cli.js');
const DIR = path.join(REPO_ROOT, 'dist', 'src', 'commands', 'agent-task');
const BUNDLE = path.join(DIR, 'collect-flow.bundle.js');

test('collect\'s entry loads the bundle, and statically only light modules', () => {
  const spec = COMMANDS.find((c) => c.path.join(' ') === 'agent-task collect')!;
  const entry = commandModuleFile(CLI, spec.load);
  assert.equal(entry, path.join(DIR, 'collect.js'));
  assert.match(readFileSync(entry, 'utf8'), /['"]\.\/collect-flow\.bundle\.js['"]/);
  const graph = walkImports(entry, { dynamic: false });
  assert.deepEqual([...graph.packages], [], 'the entry imports no package before the engine reads start');
});

test('the collect bundle inlines zod, shares errors.js and loads no ink, react or dockerode up front', () => {
  const source = readFileSync(BUNDLE, 'utf8');
  const graph = walkImports(BUNDLE, { dynamic: false });
  assert.deepEqual([...graph.packages].sort(), ['better-sqlite3']);
  assert.ok(graph.files.has(path.join(REPO_ROOT, 'dist', 'src', 'core', 'errors.js')), 'errors.js stays one shared module');
  assert.doesNotMatch(source, /class AgentscmError\b/);
  assert.ok(graph.files.has(path.join(REPO_ROOT, 'dist', 'src', 'collectors', 'snapshot-stage.js')), 'the stager stays beside its worker');
  assert.deepEqual(importsOf(BUNDLE).dynamic.filter((s) => !s.startsWith('.')), [], 'no package is imported dynamically from the bundle');
  assert.ok(importsOf(BUNDLE).dynamic.includes('./../../collectors/progress-view.js'), 'the ink view is loaded only when needed');
});
