// runtime-probe against a real engine (podman in CI): the identity is stable for one engine and image,
// moves with the image, and a missing or unpinned image is refused without any pull.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { pingEngine } from '../../src/collectors/engine-endpoint.js';
import type { EngineVersion } from '../../src/collectors/engine-facts.js';
import { defaultRuntimeOf, factsFromVersion, identityOf, podmanDefaultRuntime, probeRuntime, readEngineFacts, runtimeIdentityBytes } from '../../src/collectors/runtime-probe.js';
import { domainDigest, DOMAINS } from '../../src/core/crypto/digest.js';
import { agentscm, json } from '../support/cli.js';
import { ensureEngine, ensureTestImage } from '../support/engine.js';

const MISSING = `sha256:${'0'.repeat(63)}1`;

describe('agent-task runtime-probe', () => {
  let docker: Docker;
  let url: string;
  let image: string;
  let variant: string;

  before(async () => {
    const e = await ensureEngine();
    docker = e.docker;
    url = e.endpoint.url;
    image = await ensureTestImage(docker);
    variant = await ensureTestImage(docker, 'probe-b');
  });

  it('gives the same digest for two probes of the same engine and image', async () => {
    const a = await probeRuntime(docker, image);
    const b = await probeRuntime(docker, image);
    assert.equal(a.digest, b.digest);
    assert.deepEqual(a.canonical, b.canonical);
    assert.equal(a.digest, domainDigest(DOMAINS.runtimeIdentity, runtimeIdentityBytes(a.identity)));
    assert.equal(a.identity.image_id, image);
    assert.notEqual(a.identity.engine.version, '');
    assert.notEqual(a.identity.engine.api_version, '');
    assert.notEqual(a.identity.oci_runtime.name, 'unknown');
    assert.match(a.canonical.toString('utf8'), /^\{"version":2,"engine":\{"name":"[a-z]+","version":/);
  });

  it("observes the same engine facts as the engine's /version and /info say", async () => {
    // podman's facts come from its libpod info and /_ping (half the time of its /version); Docker's from
    // /version. Either way they must be what /version (with /info's DefaultRuntime) says.
    const ping = await pingEngine(docker);
    assert.ok(ping);
    const facts = await readEngineFacts(docker);
    const version = (await docker.version()) as EngineVersion;
    const info = await docker.info();
    assert.deepEqual(facts, factsFromVersion(version, defaultRuntimeOf(info)));
    assert.equal(facts.apiVersion, ping.apiVersion);
    if (ping.libpodApiVersion !== undefined) {
      assert.equal(facts.name, 'podman');
      assert.equal(podmanDefaultRuntime(version), defaultRuntimeOf(info));
    }
    const probe = await probeRuntime(docker, image);
    assert.deepEqual(probe, identityOf(facts, image));
  });

  it('gives a different digest for a different image', async () => {
    assert.notEqual(image, variant);
    const a = await probeRuntime(docker, image);
    const b = await probeRuntime(docker, variant);
    assert.notEqual(a.digest, b.digest);
    assert.deepEqual({ ...a.identity, image_id: '' }, { ...b.identity, image_id: '' });
  });

  it('prints the identity and digest through the CLI, the same as the library computes', async () => {
    const lib = await probeRuntime(docker, image);
    const r = agentscm(['agent-task', 'runtime-probe', '--docker-host', url, '--image', image, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const doc = json(r);
    assert.equal(doc.runtime_identity_digest, lib.digest);
    assert.deepEqual(doc.runtime_identity, JSON.parse(lib.canonical.toString('utf8')));
    assert.equal(doc.docker_host, url);

    const viaEnv = agentscm(['agent-task', 'runtime-probe', '--image', image, '--json'], { env: { ...process.env, DOCKER_HOST: url } });
    assert.equal(viaEnv.code, 0, viaEnv.stderr);
    assert.equal(json(viaEnv).runtime_identity_digest, lib.digest);
  });

  it('refuses a missing image with exit 12 and pulls nothing', async () => {
    const before = (await docker.listImages({ all: true })).map((i) => i.Id).sort();
    const r = agentscm(['agent-task', 'runtime-probe', '--docker-host', url, '--image', MISSING, '--json']);
    assert.equal(r.code, 12);
    const err = json<{ error: { code: string } }>(r).error;
    assert.equal(err.code, 'IMAGE_MISSING');
    const after = (await docker.listImages({ all: true })).map((i) => i.Id).sort();
    assert.ok(!after.includes(MISSING));
    assert.deepEqual(after.filter((id) => !before.includes(id)), []);
  });

  it('refuses a tag or short ID: only a full pinned ID is accepted', () => {
    for (const ref of ['localhost/agentscm-test-busybox:1', image.slice(0, 19), image.slice('sha256:'.length)]) {
      const r = agentscm(['agent-task', 'runtime-probe', '--docker-host', url, '--image', ref, '--json']);
      assert.equal(r.code, 3, `${ref}: ${r.stdout}`);
      assert.equal(json<{ error: { code: string } }>(r).error.code, 'IMAGE_NOT_PINNED');
    }
  });

  it('exits 12 when the named engine does not answer', () => {
    const r = agentscm(['agent-task', 'runtime-probe', '--docker-host', 'unix:///nonexistent/agentscm.sock', '--image', image, '--json']);
    assert.equal(r.code, 12);
    assert.equal(json<{ error: { code: string } }>(r).error.code, 'ENGINE_UNREACHABLE');
    // An image that is not a pinned ID is bad input before any engine is asked.
    const tag = agentscm(['agent-task', 'runtime-probe', '--docker-host', 'unix:///nonexistent/agentscm.sock', '--image', 'busybox:latest', '--json']);
    assert.equal(tag.code, 3, tag.stdout);
    assert.equal(json<{ error: { code: string } }>(tag).error.code, 'IMAGE_NOT_PINNED');
    // So is an engine address that is neither unix:///path nor tcp://HOST:PORT.
    for (const host of ['ftp://127.0.0.1:1', 'unix://relative.sock', 'tcp://127.0.0.1']) {
      const bad = agentscm(['agent-task', 'runtime-probe', '--docker-host', host, '--image', image, '--json']);
      assert.equal(bad.code, 3, `${host}: ${bad.stdout}`);
      assert.equal(json<{ error: { code: string } }>(bad).error.code, 'BAD_DOCKER_HOST');
    }
  });
});
