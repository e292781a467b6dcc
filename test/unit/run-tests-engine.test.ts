// `npm test` without a container engine: the runner (dist/scripts/run-tests.js, what `npm test` runs
// after the build) sees at once that DOCKER_HOST does not answer and podman is not installed, skips the
// engine test files with one line of advice and runs the rest; with CI=true it fails instead.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../support/cli.js';

const RUNNER = path.join(REPO_ROOT, 'dist', 'scripts', 'run-tests.js');

function noEngineEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  // PATH holds node and nothing else: no podman to start.
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'no-engine-bin-'));
  fs.symlinkSync(process.execPath, path.join(bin, 'node'));
  const env: NodeJS.ProcessEnv = { HOME: os.tmpdir(), PATH: bin, DOCKER_HOST: `unix://${path.join(bin, 'missing.sock')}`, ...extra };
  return env;
}

test('without an engine the engine files are skipped with one advice line, the others run', () => {
  const r = spawnSync(process.execPath, [RUNNER, 'integration/oci-probe', 'integration/demo.test', 'unit/bytes.test'], { encoding: 'utf8', env: noEngineEnv(), timeout: 120_000 });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const advice = r.stderr.split('\n').filter((l) => l.startsWith('run-tests:'));
  assert.equal(advice.length, 1, r.stderr);
  assert.match(advice[0]!, /skipping 2 engine test file\(s\).*apt-get install -y podman runc busybox-static/);
  assert.ok(!r.stdout.includes('runtime-probe') && !r.stdout.includes('the demo runs'), 'the engine tests did not run');
  // node --test reports TAP when its output is not a terminal on Node 20, the spec reporter on Node 22+.
  assert.match(r.stdout, /^(# |ℹ )pass [1-9]/m, 'the other tests ran');
  assert.match(r.stdout, /^(# |ℹ )fail 0$/m);
});

test('with CI=true a missing engine fails the run instead of skipping', () => {
  const r = spawnSync(process.execPath, [RUNNER, 'integration/oci-probe', 'unit/bytes.test'], { encoding: 'utf8', env: noEngineEnv({ CI: 'true' }), timeout: 60_000 });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /CI runs every test: .*apt-get install/);
  assert.equal(r.stdout, '', 'nothing ran');
});

test("npm run demo's first step stops at once without an engine, saying what to install (before any build)", () => {
  const script = path.join(REPO_ROOT, 'scripts', 'demo-preflight.mjs');
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  assert.ok(pkg.scripts.demo!.startsWith('node scripts/demo-preflight.mjs && npm run build'), pkg.scripts.demo);
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8', env: noEngineEnv(), timeout: 30_000 });
  assert.equal(r.status, 12, r.stderr);
  assert.match(r.stderr, /^agentscm demo: .*apt-get install -y podman runc busybox-static/);
  assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  if (process.env.DOCKER_HOST) {
    const ok = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(ok.status, 0, `with the engine this run has: ${ok.stderr}`);
  }
});
