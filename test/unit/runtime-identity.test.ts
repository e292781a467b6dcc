// The runtime identity's derivation from engine answers (src/collectors/runtime-probe.ts): which
// answers let /version alone name the default OCI runtime, and which need /info.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultRuntimeOf, identityOf, podmanDefaultRuntime } from '../../src/collectors/runtime-probe.js';

const IMAGE = `sha256:${'a'.repeat(64)}`;

const podmanVersion = (components: { Name: string; Version: string }[]) => ({
  Version: '4.3.1',
  ApiVersion: '1.41',
  MinAPIVersion: '1.24',
  Os: 'linux',
  Arch: 'amd64',
  Platform: { Name: 'linux/amd64/debian-12' },
  Components: [{ Name: 'Podman Engine', Version: '4.3.1' }, { Name: 'Conmon', Version: 'conmon version 2.1.6' }, ...components],
});

describe('runtime identity derivation', () => {
  it('takes podman\'s default runtime from its one "OCI Runtime (NAME)" component', () => {
    const v = podmanVersion([{ Name: 'OCI Runtime (crun)', Version: 'crun version 1.8' }]);
    assert.equal(podmanDefaultRuntime(v), 'crun');
    const id = identityOf({ version: v, runtimeName: 'crun' }, IMAGE).identity;
    assert.deepEqual(id.oci_runtime, { name: 'crun', version: 'crun version 1.8' });
    assert.equal(id.engine.name, 'podman');
  });

  it('asks /info when /version does not name exactly one runtime, or is not podman', () => {
    assert.equal(podmanDefaultRuntime(podmanVersion([])), undefined);
    assert.equal(podmanDefaultRuntime(podmanVersion([{ Name: 'OCI Runtime (runc)', Version: '1' }, { Name: 'OCI Runtime (crun)', Version: '2' }])), undefined);
    const docker = { Version: '29.0.0', Components: [{ Name: 'Engine', Version: '29.0.0' }, { Name: 'runc', Version: '1.2.0', Details: { GitCommit: 'v1.2.0-0-g0' } }] };
    assert.equal(podmanDefaultRuntime(docker), undefined);
    const id = identityOf({ version: docker, runtimeName: defaultRuntimeOf({ DefaultRuntime: 'runc' }) }, IMAGE).identity;
    assert.deepEqual(id.oci_runtime, { name: 'runc', version: '1.2.0 (v1.2.0-0-g0)' });
    assert.equal(defaultRuntimeOf({}), 'unknown');
  });

  it('gives a different digest for a different runtime name or version', () => {
    const a = identityOf({ version: podmanVersion([{ Name: 'OCI Runtime (runc)', Version: '1.1.5' }]), runtimeName: 'runc' }, IMAGE).digest;
    const b = identityOf({ version: podmanVersion([{ Name: 'OCI Runtime (runc)', Version: '1.1.6' }]), runtimeName: 'runc' }, IMAGE).digest;
    const c = identityOf({ version: podmanVersion([{ Name: 'OCI Runtime (runc)', Version: '1.1.5' }]), runtimeName: 'crun' }, IMAGE).digest;
    assert.notEqual(a, b);
    assert.notEqual(a, c);
  });
});
