// Engine-free parts of the container primitive: Docker's multiplexed stream into the bounded captures,
// the output bound and the endpoint URLs. The engine-facing behaviour is covered against real podman in
// test/integration/oci-*.test.ts.

import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { dockerFor, engineAddressFor, engineCandidates } from '../../src/collectors/engine.js';
import { BoundedCapture, containerConfig, demultiplex } from '../../src/collectors/oci-run.js';
import { isAgentscmError } from '../../src/core/errors.js';

function frame(type: number, payload: string): Buffer {
  const body = Buffer.from(payload);
  const head = Buffer.alloc(8);
  head[0] = type;
  head.writeUInt32BE(body.length, 4);
  return Buffer.concat([head, body]);
}

describe('oci stream handling', () => {
  // The client is never connected: demultiplexing is dockerode's, on any stream. (Frames of type 0,
  // stdin, never come: the container is created without stdin.)
  const docker = dockerFor({ socketPath: '/nonexistent/agentscm.sock' });

  it('demultiplexes frames split at every possible byte boundary', async () => {
    const whole = Buffer.concat([frame(1, 'hello '), frame(2, 'warn\n'), frame(1, 'world\n'), frame(2, '')]);
    for (let cut = 0; cut <= whole.length; cut++) {
      const out = new BoundedCapture(1024);
      const err = new BoundedCapture(1024);
      const stream = new PassThrough();
      const done = demultiplex(docker, stream, out, err);
      stream.write(whole.subarray(0, cut));
      stream.end(whole.subarray(cut));
      await done;
      assert.equal(out.result().bytes.toString(), 'hello world\n', `cut ${cut}`);
      assert.equal(err.result().bytes.toString(), 'warn\n', `cut ${cut}`);
    }
  });

  it('bounds each demultiplexed stream and counts what it did not keep', async () => {
    const out = new BoundedCapture(10);
    const err = new BoundedCapture(3);
    const stream = new PassThrough();
    const done = demultiplex(docker, stream, out, err);
    for (let i = 0; i < 100; i++) stream.write(Buffer.concat([frame(1, 'x'.repeat(1000)), frame(2, 'e')]));
    stream.end();
    await done;
    assert.deepEqual([out.result().bytes.toString(), out.result().totalBytes, out.result().truncated], ['x'.repeat(10), 100_000, true]);
    assert.deepEqual([err.result().bytes.toString(), err.result().totalBytes, err.result().truncated], ['eee', 100, true]);
  });

  it('keeps at most the bound, counts the rest and hashes what it kept', () => {
    const c = new BoundedCapture(5);
    c.push(Buffer.from('abc'));
    c.push(Buffer.from('defgh'));
    c.push(Buffer.from('ij'));
    const r = c.result();
    assert.equal(r.bytes.toString(), 'abcde');
    assert.equal(r.totalBytes, 10);
    assert.equal(r.truncated, true);
    assert.equal(r.sha256, '36bbe50ed96841d10443bcb670d6554f0a34b761be67ec9c4a8ad2c0c44ca42c');
    const exact = new BoundedCapture(3);
    exact.push(Buffer.from('abc'));
    assert.equal(exact.result().truncated, false);
    const none = new BoundedCapture(0);
    none.push(Buffer.from('x'));
    assert.deepEqual([none.result().bytes.length, none.result().truncated], [0, true]);
  });

  it('asks for no network, a read-only snapshot and root, no privileges and explicit ulimits', () => {
    const c = containerConfig({ imageId: `sha256:${'a'.repeat(64)}`, argv: ['sh', '-c', 'true'], snapshotDir: '/tmp/s', timeoutMs: 1, maxOutputBytes: 1 });
    assert.deepEqual([c.Entrypoint, c.Cmd, c.WorkingDir], [['sh'], ['-c', 'true'], '/snapshot']);
    const hc = c.HostConfig!;
    assert.equal(hc.NetworkMode, 'none');
    assert.deepEqual(hc.Binds, ['/tmp/s:/snapshot:ro']);
    assert.equal(hc.ReadonlyRootfs, true);
    assert.equal(hc.Privileged, false);
    assert.deepEqual(hc.CapDrop, ['ALL']);
    assert.deepEqual(hc.Ulimits?.map((u) => u.Name), ['nofile', 'nproc']);
  });

  it('parses unix and tcp engine URLs and refuses others', () => {
    assert.deepEqual(engineAddressFor('unix:///run/podman/podman.sock'), { socketPath: '/run/podman/podman.sock' });
    assert.deepEqual(engineAddressFor('tcp://127.0.0.1:2375'), { host: '127.0.0.1', port: 2375 });
    for (const bad of ['unix://relative.sock', 'tcp://host', 'ssh://user@host', 'http://x:1', '/var/run/docker.sock']) {
      assert.throws(() => engineAddressFor(bad), (e: unknown) => isAgentscmError(e) && e.kind === 'BAD_INPUT' && e.code === 'BAD_DOCKER_HOST', bad);
    }
  });

  it('uses only the named endpoint when a flag or DOCKER_HOST is given', () => {
    assert.deepEqual(engineCandidates('tcp://127.0.0.1:1', { DOCKER_HOST: 'unix:///x.sock' }), [{ url: 'tcp://127.0.0.1:1', source: 'flag' }]);
    assert.deepEqual(engineCandidates(undefined, { DOCKER_HOST: 'unix:///x.sock' }), [{ url: 'unix:///x.sock', source: 'env' }]);
  });
});
