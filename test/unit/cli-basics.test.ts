import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { AGENTSCM_VERSION, TREE_RING_VERSION } from '../../src/version.js';
import { agentscm, json, REPO_ROOT, treeRing } from '../support/cli.js';

test('version constant matches package.json', () => {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(AGENTSCM_VERSION, pkg.version);
});

test('--version names both programs', () => {
  const r = agentscm(['--version']);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, `agentscm ${AGENTSCM_VERSION} (tree-ring ${TREE_RING_VERSION})\n`);
  // The launchers answer a bare --version without loading the table; the full path must agree.
  assert.equal(agentscm(['--json', '--version']).stdout, r.stdout);
  const t = treeRing(['--version']);
  assert.equal(t.code, 0);
  assert.equal(t.stdout, `tree-ring ${TREE_RING_VERSION}\n`);
  assert.equal(treeRing(['--json', '--version']).stdout, t.stdout);
});

test('unknown command and option are usage errors (exit 2), JSON error when --json', () => {
  const r = agentscm(['no-such-command']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown command "no-such-command"/);
  const j = agentscm(['agent-task', 'key', 'show', '--bogus', '--json']);
  assert.equal(j.code, 2);
  assert.deepEqual(json<{ error: { kind: string; exit_code: number } }>(j).error.kind, 'USAGE');
});

test('missing required option is a usage error', () => {
  const r = agentscm(['agent-task', 'key', 'generate']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /missing required option --key-dir/);
});
