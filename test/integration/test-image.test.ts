// agentscm agent-task test-image prints the pinned ID of the demo's busybox image, which runtime-probe takes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentscm, json } from '../support/cli.js';
import { ensureEngine, ensureTestImage } from '../support/engine.js';

test('test-image builds or reuses the demo\'s image and prints its full ID alone; --json adds reference and endpoint', async () => {
  const engine = await ensureEngine();
  const env = { ...process.env, DOCKER_HOST: engine.endpoint.url };
  const expected = await ensureTestImage(engine.docker);
  const text = agentscm(['agent-task', 'test-image'], { env });
  assert.equal(text.code, 0, text.stderr);
  assert.equal(text.stdout, `${expected}\n`);
  const j = agentscm(['agent-task', 'test-image', '--json'], { env });
  assert.equal(j.code, 0, j.stderr);
  assert.deepEqual(json(j), { image_id: expected, reference: 'localhost/agentscm-test-busybox:1', docker_host: engine.endpoint.url });
  const probe = agentscm(['agent-task', 'runtime-probe', '--image', expected, '--json'], { env });
  assert.equal(probe.code, 0, probe.stderr);
  assert.equal((json(probe).runtime_identity as { image_id: string }).image_id, expected);
});

test('test-image with no engine answering exits 12', () => {
  const r = agentscm(['agent-task', 'test-image', '--docker-host', 'unix:///nonexistent/agentscm.sock', '--json']);
  assert.equal(r.code, 12, r.stderr);
  assert.equal((json(r).error as { kind: string }).kind, 'RUNTIME_UNAVAILABLE');
});
