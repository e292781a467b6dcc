// The modules of src/ import one another as a directed acyclic graph: what two modules share lives in a
// third that both import (e.g. src/hub/subjects.ts and receipts.ts), never in one of the two. A cycle
// makes the evaluation order of ES modules decide which of them sees the other half-initialised.

import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../support/cli.js';
import { importCycles, sourceImportGraph } from '../support/import-graph.js';

const SRC = path.join(REPO_ROOT, 'src');

test('the cycle finder reports a cycle, a self-import and nothing for a DAG', () => {
  const cyclic = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a', 'd']],
    ['d', []],
    ['e', ['e']],
  ]);
  assert.deepEqual(importCycles(cyclic), [['a', 'b', 'c'], ['e']]);
  const dag = new Map([
    ['a', ['b', 'c']],
    ['b', ['c']],
    ['c', []],
  ]);
  assert.deepEqual(importCycles(dag), []);
});

test('the source graph follows relative imports, type-only ones included', () => {
  const graph = sourceImportGraph(SRC);
  assert.ok(graph.size > 50, 'the walker found the modules of src/');
  const reads = graph.get(path.join(SRC, 'hub', 'reads.ts'));
  assert.ok(reads?.includes(path.join(SRC, 'hub', 'subjects.ts')), 'reads.ts imports subjects.ts');
  assert.ok(reads?.includes(path.join(SRC, 'core', 'authority', 'plan.ts')), 'a type-only import is an edge');
});

test('no import cycle among the modules of src/', () => {
  const cycles = importCycles(sourceImportGraph(SRC)).map((c) => c.map((f) => path.relative(SRC, f)).join(' <-> '));
  assert.deepEqual(cycles, []);
});

/** Imports from files under any of `lower` to files under any of `upper` (directories of src/). */
function importsUpward(lower: readonly string[], upper: readonly string[]): string[] {
  const up = upper.map((d) => path.join(SRC, d) + path.sep);
  const low = lower.map((d) => path.join(SRC, d) + path.sep);
  const found: string[] = [];
  for (const [file, targets] of sourceImportGraph(SRC)) {
    if (!low.some((d) => file.startsWith(d))) continue;
    for (const t of targets) if (up.some((u) => t.startsWith(u))) found.push(`${path.relative(SRC, file)} -> ${path.relative(SRC, t)}`);
  }
  return found;
}

test('the library layers (core, collectors, hub) import nothing of the command layer (src/cli, src/commands, src/entries)', () => {
  assert.deepEqual(importsUpward(['core', 'collectors', 'hub'], ['cli', 'commands', 'entries']), []);
});

test('the commands and the runner import nothing of the process entries (src/entries)', () => {
  assert.deepEqual(importsUpward(['cli', 'commands'], ['entries']), []);
});
