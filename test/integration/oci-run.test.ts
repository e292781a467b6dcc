// The container primitive against a real engine: exact argv over a read-only snapshot, no network,
// fixed environment, timeout, bounded output and confirmed removal. Never a pull.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { containerConfig, containerExists, FIXED_ENV, removeConfirmed, runInContainer, SNAPSHOT_MOUNT, type OciRunSpec } from '../../src/collectors/oci-run.js';
import { isAgentscmError } from '../../src/core/errors.js';
import { ensureEngine, ensureTestImage } from '../support/engine.js';

describe('runInContainer', () => {
  let docker: Docker;
  let image: string;
  let snap: string;

  before(async () => {
    ({ docker } = await ensureEngine());
    image = await ensureTestImage(docker);
    snap = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-oci-snap-'));
    fs.writeFileSync(path.join(snap, 'answer.txt'), '42\n');
    fs.mkdirSync(path.join(snap, 'src'));
    fs.writeFileSync(path.join(snap, 'src', 'lib.txt'), 'library\n');
  });
  after(() => fs.rmSync(snap, { recursive: true, force: true }));

  const spec = (argv: string[], extra: Partial<OciRunSpec> = {}): OciRunSpec => ({
    imageId: image,
    argv,
    snapshotDir: snap,
    timeoutMs: 30_000,
    maxOutputBytes: 64 * 1024,
    ...extra,
  });

  it('runs a passing check over the read-only snapshot and removes the container', async () => {
    let created = '';
    const r = await runInContainer(docker, spec(['sh', '-c', 'test "$(cat answer.txt)" = 42 && pwd && cat src/lib.txt'], { onCreated: (id) => void (created = id) }));
    assert.equal(r.exitCode, 0, r.stderr.bytes.toString());
    assert.equal(r.timedOut, false);
    assert.equal(r.stdout.bytes.toString(), `${SNAPSHOT_MOUNT}\nlibrary\n`);
    assert.equal(r.stdout.sha256, createHash('sha256').update(r.stdout.bytes).digest('hex'));
    assert.equal(r.stdout.truncated, false);
    assert.equal(r.stderr.bytes.length, 0);
    assert.equal(r.containerId, created);
    assert.equal(r.removed, true);
    assert.equal(await containerExists(docker, r.containerId), false);
    assert.ok(Date.parse(r.finishedAt) >= Date.parse(r.startedAt));
  });

  it('reports a failing check, and a write to the snapshot or the root fails', async () => {
    const check = 'if touch /snapshot/new 2>/dev/null; then echo snapshot-writable; fi; if touch /bin/new 2>/dev/null; then echo root-writable; fi; echo checking >&2; test "$(cat answer.txt)" = 41';
    const r = await runInContainer(docker, spec(['sh', '-c', check]));
    assert.equal(r.exitCode, 1);
    assert.equal(r.timedOut, false);
    assert.equal(r.stdout.bytes.toString(), '');
    assert.equal(r.stderr.bytes.toString(), 'checking\n');
    assert.equal(fs.existsSync(path.join(snap, 'new')), false);
    assert.equal(r.removed, true);
  });

  it('runs the exact argv with no shell added, in the given working directory, with the fixed environment', async () => {
    const r = await runInContainer(docker, spec(['/bin/env'], { workingDir: `${SNAPSHOT_MOUNT}/src` }));
    assert.equal(r.exitCode, 0);
    const vars = r.stdout.bytes.toString().trim().split('\n');
    for (const v of FIXED_ENV) assert.ok(vars.includes(v), `missing ${v}`);
    assert.ok(!vars.some((v) => v.startsWith('DOCKER_HOST=') || v.startsWith('CI=')), vars.join(' '));
    const pwd = await runInContainer(docker, spec(['pwd'], { workingDir: `${SNAPSHOT_MOUNT}/src` }));
    assert.equal(pwd.stdout.bytes.toString(), `${SNAPSHOT_MOUNT}/src\n`);
    const args = await runInContainer(docker, spec(['echo', 'a b', '$HOME', '*']));
    assert.equal(args.stdout.bytes.toString(), 'a b $HOME *\n');
  });

  it('has no network: only the loopback interface, and a connect attempt fails', async () => {
    const r = await runInContainer(docker, spec(['sh', '-c', "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; nc -w 2 10.0.2.2 80 </dev/null && echo connected || echo no-connect"]));
    assert.equal(r.exitCode, 0, r.stderr.bytes.toString());
    assert.deepEqual(r.stdout.bytes.toString().trim().split('\n'), ['lo', 'no-connect']);
  });

  it('drops privileges and applies the nofile and nproc limits', async () => {
    const r = await runInContainer(docker, spec(['sh', '-c', 'ulimit -n; ulimit -u; grep -E "^(CapEff|NoNewPrivs)" /proc/self/status'], { ulimits: { nofile: 512, nproc: 300 } }));
    assert.equal(r.exitCode, 0, r.stderr.bytes.toString());
    const lines = r.stdout.bytes.toString().trim().split('\n');
    assert.equal(lines[0], '512');
    assert.equal(lines[1], '300');
    assert.match(lines.find((l) => l.startsWith('CapEff')) ?? '', /^CapEff:\s+0+$/);
    assert.match(lines.find((l) => l.startsWith('NoNewPrivs')) ?? '', /^NoNewPrivs:\s+1$/);
  });

  it('kills a command that runs past its timeout, reports it and removes the container', async () => {
    const leftoverName = `agentscm-test-${process.pid}-timeout`;
    const r = await runInContainer(docker, spec(['sh', '-c', 'echo started; sleep 600'], { timeoutMs: 3_000, name: leftoverName }));
    assert.equal(r.timedOut, true);
    assert.notEqual(r.exitCode, 0);
    assert.equal(r.stdout.bytes.toString(), 'started\n');
    assert.equal(r.removed, true);
    assert.equal(await containerExists(docker, r.containerId), false);
    assert.equal(await containerExists(docker, leftoverName), false);
  });

  it('finds and removes a leftover container by name, confirming it is gone', async () => {
    const name = `agentscm-test-${process.pid}-leftover`;
    // A container left behind by a collector killed mid-run: created, never cleaned up.
    await docker.createContainer({ ...containerConfig(spec(['sleep', '600'])), name });
    assert.equal(await containerExists(docker, name), true);
    assert.equal(await removeConfirmed(docker, name), true);
    assert.equal(await containerExists(docker, name), false);
    assert.equal(await removeConfirmed(docker, name), true);
  });

  it('truncates output at the bound and still counts and drains the rest', async () => {
    const r = await runInContainer(docker, spec(['sh', '-c', 'yes x | head -c 300000; yes e | head -c 10 >&2'], { maxOutputBytes: 1000 }));
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout.bytes.length, 1000);
    assert.equal(r.stdout.truncated, true);
    assert.equal(r.stdout.totalBytes, 300000);
    assert.equal(r.stdout.bytes.toString(), 'x\n'.repeat(500));
    assert.equal(r.stderr.truncated, false);
    assert.equal(r.stderr.bytes.toString(), 'e\n'.repeat(5));
    assert.equal(r.removed, true);
  });

  it('refuses a missing image without pulling and creates no container', async () => {
    const missing = `sha256:${'f'.repeat(64)}`;
    const imagesBefore = (await docker.listImages({ all: true })).length;
    const containersBefore = (await docker.listContainers({ all: true })).map((c) => c.Id);
    await assert.rejects(
      runInContainer(docker, spec(['true'], { imageId: missing })),
      (e: unknown) => isAgentscmError(e) && e.kind === 'RUNTIME_UNAVAILABLE' && e.code === 'IMAGE_MISSING',
    );
    await assert.rejects(runInContainer(docker, spec(['true'], { imageId: 'localhost/agentscm-test-busybox:1' })), (e: unknown) => isAgentscmError(e) && e.code === 'IMAGE_NOT_PINNED');
    assert.equal((await docker.listImages({ all: true })).length, imagesBefore);
    const containersAfter = (await docker.listContainers({ all: true })).map((c) => c.Id);
    assert.deepEqual(containersAfter.filter((id) => !containersBefore.includes(id)), []);
  });
});
