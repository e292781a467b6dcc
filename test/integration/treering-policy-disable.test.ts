// `tree-ring policy disable` needs the current coordinator capability; an open store has none, so
// disabling it is refused like `policy rotate` and leaves the store exactly as it was.

import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { json } from '../support/cli.js';
import { snapshot, tempProject, tr } from '../support/treering.js';

type Status = { mode: string; coordinator_label: string | null; enabled_at: string | null; updated_at: string };

function refused(r: { code: number; stdout: string; stderr: string }): void {
  assert.equal(r.code, 2, `expected exit 2, got ${r.code}: ${r.stdout} ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^error: authorization denied: coordinated policy is not enabled/);
}

test('policy disable on an open store is refused (exit 2) and changes nothing, however often it runs', () => {
  const dir = tempProject();
  const store = path.join(dir, '.tree-ring');
  assert.equal(tr(dir, ['init']).code, 0);
  const before = snapshot(store);
  const status = json<Status>(tr(dir, ['--json', 'policy', 'status']));
  assert.equal(status.mode, 'open');
  refused(tr(dir, ['policy', 'disable']));
  refused(tr(dir, ['policy', 'disable']));
  // Any token is not the current capability: an open store has none.
  refused(tr(dir, ['policy', 'disable'], { TREE_RING_COORDINATOR_TOKEN: `trcap_v1_${'a'.repeat(64)}` }));
  assert.deepEqual(json<Status>(tr(dir, ['--json', 'policy', 'status'])), status);
  assert.deepEqual(json<unknown[]>(tr(dir, ['--json', 'policy', 'audit'])), []);
  assert.deepEqual(snapshot(store), before);
});

test('after a coordinated store is disabled with its capability, a second disable is refused and writes nothing', () => {
  const dir = tempProject();
  const store = path.join(dir, '.tree-ring');
  const grant = json<{ capability: string }>(tr(dir, ['--json', 'policy', 'enable', '--coordinator', 'lead']));
  const first = tr(dir, ['--json', 'policy', 'disable'], { TREE_RING_COORDINATOR_TOKEN: grant.capability });
  assert.equal(first.code, 0, first.stderr);
  const opened = json<Status>(first);
  assert.deepEqual([opened.mode, opened.coordinator_label, opened.enabled_at], ['open', null, null]);
  const audit = tr(dir, ['--json', 'policy', 'audit', '--limit', '100']).stdout;
  const before = snapshot(store);
  refused(tr(dir, ['policy', 'disable']));
  refused(tr(dir, ['policy', 'disable'], { TREE_RING_COORDINATOR_TOKEN: grant.capability }));
  assert.deepEqual(json<Status>(tr(dir, ['--json', 'policy', 'status'])), opened);
  assert.equal(tr(dir, ['--json', 'policy', 'audit', '--limit', '100']).stdout, audit);
  assert.deepEqual(snapshot(store), before);
});
