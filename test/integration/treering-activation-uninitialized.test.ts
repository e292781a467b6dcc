// Status in a project that was never initialised: the project root is reachable (not
// needs-project-mount) and there is no bridge or manifest to review (not needs-user-review), so every
// maintained harness is `failed` with the concrete diagnostic and the step that repairs it.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { MAINTAINED_HARNESSES, UNSUPPORTED_HARNESSES } from '../../src/core/treering/activation/constants.js';
import { json } from '../support/cli.js';
import { tempProject, tr } from '../support/treering-activation.js';

interface Row {
  harness_id: string;
  state: string;
  detail?: string;
  next_step: string;
}

function status(p: string, env?: NodeJS.ProcessEnv): { initialized: boolean; integrations: Row[] } {
  const r = tr(p, ['integrations', 'status', '--json'], undefined, env);
  assert.equal(r.code, 0, r.stderr);
  return json<{ initialized: boolean; integrations: Row[] }>(r);
}

function assertUninitialized(p: string, diagnostic: RegExp, env?: NodeJS.ProcessEnv): void {
  const doc = status(p, env);
  assert.equal(doc.initialized, false);
  for (const h of MAINTAINED_HARNESSES) {
    const row = doc.integrations.find((x) => x.harness_id === h)!;
    assert.equal(row.state, 'failed', `${h}: ${row.detail}`);
    assert.match(row.detail ?? '', diagnostic, h);
    assert.match(row.next_step, /tree-ring init/, h);
  }
  for (const h of UNSUPPORTED_HARNESSES) assert.equal(doc.integrations.find((x) => x.harness_id === h)!.state, 'unsupported', h);
}

test('status in a never-initialised project: every maintained harness is failed, run tree-ring init', () => {
  const p = tempProject();
  assertUninitialized(p, /no \.tree-ring root/);
  const plain = tr(p, ['integrations', 'status']);
  assert.equal(plain.code, 0, plain.stderr);
  for (const h of MAINTAINED_HARNESSES) assert.match(plain.stdout, new RegExp(`^${h} +failed +run tree-ring init`, 'm'));
  assert.deepEqual(fs.readdirSync(p), [], 'status creates nothing');
});

test('status with a .tree-ring directory but no activation manifest: failed for every maintained harness', () => {
  const p = tempProject();
  fs.mkdirSync(path.join(p, '.tree-ring'));
  assertUninitialized(p, /activation\.json is missing/);
});
