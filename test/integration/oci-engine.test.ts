// Starting and stopping `podman system service` ourselves (what `npm run demo` does without a socket),
// and never substituting another engine for a named one that does not answer.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { describe, it } from 'node:test';
import { pingEngine, startPodmanService, startPodmanServiceIfNeeded } from '../../src/collectors/engine.js';
import { isAgentscmError } from '../../src/core/errors.js';

describe('podman system service', () => {
  it('starts on a private socket, answers, and is gone after stop', async () => {
    const env = { ...process.env };
    delete env.DOCKER_HOST;
    const svc = await startPodmanService({ env, timeoutMs: 60_000 });
    assert.equal(svc.owned, true);
    assert.match(svc.endpoint.url, /^unix:\/\/\/.+\/podman\.sock$/);
    const socket = svc.endpoint.url.slice('unix://'.length);
    assert.equal(fs.statSync(socket).isSocket(), true);
    assert.notEqual(await pingEngine(svc.docker), undefined);
    await svc.stop();
    assert.equal(fs.existsSync(socket), false);
    assert.equal(await pingEngine(svc.docker, 500), undefined);
  });

  it('does not replace a named endpoint that does not answer', async () => {
    await assert.rejects(
      startPodmanServiceIfNeeded({ dockerHost: 'unix:///nonexistent/agentscm.sock' }),
      (e: unknown) => isAgentscmError(e) && e.kind === 'RUNTIME_UNAVAILABLE' && e.code === 'ENGINE_UNREACHABLE',
    );
    await assert.rejects(
      startPodmanServiceIfNeeded({ env: { ...process.env, DOCKER_HOST: 'unix:///nonexistent/agentscm.sock' } }),
      (e: unknown) => isAgentscmError(e) && e.code === 'ENGINE_UNREACHABLE',
    );
  });
});
