// The runtime identity's derivation from engine answers (src/collectors/engine-facts.ts and
// runtime-probe.ts): podman's libpod info with its /_ping headers, Docker's /version with /info's default
// runtime, and the identity's canonical bytes as a fixed vector.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultRuntimeOf, factsFromLibpodInfo, factsFromVersion, identityOf, podmanDefaultRuntime } from '../../src/collectors/runtime-probe.js';
import { domainDigest, DOMAINS } from '../../src/core/crypto/digest.js';

const IMAGE = `sha256:${'a'.repeat(64)}`;

const RUNC = 'runc version 1.1.5+ds1\ncommit: 1.1.5+ds1-1+deb12u1\nspec: 1.0.2-dev\ngo: go1.19.8\nlibseccomp: 2.5.4';

/** The parts of Debian's podman 4.3.1 answers the identity reads (other fields left out). */
const PING = { apiVersion: '1.41', libpodApiVersion: '4.3.1' };
const LIBPOD_INFO = {
  host: {
    arch: 'amd64',
    os: 'linux',
    kernel: '6.18.44',
    distribution: { distribution: 'debian', version: '12', codename: 'bookworm' },
    ociRuntime: { name: 'runc', package: 'runc_1.1.5+ds1-1+deb12u1_amd64', path: '/usr/bin/runc', version: RUNC },
  },
  version: { APIVersion: '4.3.1', Version: '4.3.1', GoVersion: 'go1.19.8', OsArch: 'linux/amd64', Os: 'linux' },
};
const podmanVersion = (components: { Name: string; Version: string }[]) => ({
  Version: '4.3.1',
  ApiVersion: '1.41',
  MinAPIVersion: '1.24',
  Os: 'linux',
  Arch: 'amd64',
  KernelVersion: '6.18.44',
  Platform: { Name: 'linux/amd64/debian-12' },
  Components: [{ Name: 'Podman Engine', Version: '4.3.1' }, { Name: 'Conmon', Version: 'conmon version 2.1.6' }, ...components],
});

describe('runtime identity derivation', () => {
  it("takes podman's facts from its libpod info and /_ping, the same as its /version gives", () => {
    const fromInfo = factsFromLibpodInfo(PING, LIBPOD_INFO);
    assert.deepEqual(fromInfo, {
      name: 'podman',
      version: '4.3.1',
      apiVersion: '1.41',
      platform: 'linux/amd64/debian-12',
      os: 'linux',
      arch: 'amd64',
      runtime: { name: 'runc', version: RUNC },
    });
    const v = podmanVersion([{ Name: 'OCI Runtime (runc)', Version: RUNC }]);
    assert.deepEqual(factsFromVersion(v, podmanDefaultRuntime(v)!), fromInfo);
  });

  it('leaves nothing out silently: missing fields are empty or unknown, never a default engine', () => {
    const f = factsFromLibpodInfo({ apiVersion: undefined, libpodApiVersion: '4.3.1' }, {});
    assert.deepEqual(f, { name: 'podman', version: '', apiVersion: '', platform: '//-', os: '', arch: '', runtime: { name: 'unknown', version: 'unknown' } });
  });

  it('takes podman\'s default runtime from its one "OCI Runtime (NAME)" component', () => {
    const v = podmanVersion([{ Name: 'OCI Runtime (crun)', Version: 'crun version 1.8' }]);
    assert.equal(podmanDefaultRuntime(v), 'crun');
    const id = identityOf(factsFromVersion(v, 'crun'), IMAGE).identity;
    assert.deepEqual(id.oci_runtime, { name: 'crun', version: 'crun version 1.8' });
    assert.equal(id.engine.name, 'podman');
  });

  it('asks /info when /version does not name exactly one runtime, or is not podman', () => {
    assert.equal(podmanDefaultRuntime(podmanVersion([])), undefined);
    assert.equal(podmanDefaultRuntime(podmanVersion([{ Name: 'OCI Runtime (runc)', Version: '1' }, { Name: 'OCI Runtime (crun)', Version: '2' }])), undefined);
    const docker = { Version: '29.0.0', ApiVersion: '1.52', Components: [{ Name: 'Engine', Version: '29.0.0' }, { Name: 'runc', Version: '1.2.0', Details: { GitCommit: 'v1.2.0-0-g0' } }] };
    assert.equal(podmanDefaultRuntime(docker), undefined);
    const facts = factsFromVersion(docker, defaultRuntimeOf({ DefaultRuntime: 'runc' }));
    assert.equal(facts.name, 'docker');
    assert.equal(facts.apiVersion, '1.52');
    assert.deepEqual(facts.runtime, { name: 'runc', version: '1.2.0 (v1.2.0-0-g0)' });
    assert.equal(defaultRuntimeOf({}), 'unknown');
  });

  it('has fixed canonical bytes (version 2, declared field order) and a domain-separated digest', () => {
    const probe = identityOf(factsFromLibpodInfo(PING, LIBPOD_INFO), IMAGE);
    const expected =
      '{"version":2,"engine":{"name":"podman","version":"4.3.1","api_version":"1.41","platform":"linux/amd64/debian-12"},' +
      '"os":"linux","arch":"amd64","oci_runtime":{"name":"runc","version":"runc version 1.1.5+ds1\\ncommit: 1.1.5+ds1-1+deb12u1\\nspec: 1.0.2-dev\\ngo: go1.19.8\\nlibseccomp: 2.5.4"},' +
      `"image_id":"${IMAGE}"}`;
    assert.equal(probe.canonical.toString('utf8'), expected);
    assert.equal(probe.digest, domainDigest(DOMAINS.runtimeIdentity, Buffer.from(expected, 'utf8')));
    assert.match(probe.digest, /^[0-9a-f]{64}$/);
  });

  it('gives a different digest for a different runtime name or version, engine version or API version', () => {
    const base = factsFromLibpodInfo(PING, LIBPOD_INFO);
    const d = (f: typeof base) => identityOf(f, IMAGE).digest;
    const a = d(base);
    assert.notEqual(a, d({ ...base, runtime: { ...base.runtime, version: 'runc version 1.1.6' } }));
    assert.notEqual(a, d({ ...base, runtime: { ...base.runtime, name: 'crun' } }));
    assert.notEqual(a, d({ ...base, version: '4.3.2' }));
    assert.notEqual(a, d({ ...base, apiVersion: '1.40' }));
    assert.notEqual(a, d({ ...base, platform: 'linux/amd64/debian-13' }));
  });
});
