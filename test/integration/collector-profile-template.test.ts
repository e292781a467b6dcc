// authority collector-profile template: from an enrollment, a runtime probe's output and a recipe to a
// profile file that installs as written; create-only, and every input checked.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { generateKeyPair, toHex } from '../../src/core/crypto/ed25519.js';
import { runtimeIdentityDigest, type RuntimeIdentity } from '../../src/collectors/runtime-probe.js';
import { agentscm, json } from '../support/cli.js';
import { adminSetup, PROFILE, REPO } from '../support/hub.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const IMAGE = `sha256:${'ab'.repeat(32)}`;
const identity: RuntimeIdentity = {
  version: 2,
  engine: { name: 'podman', version: '5.4.2', api_version: '1.41', platform: 'linux/amd64/debian-13' },
  os: 'linux',
  arch: 'amd64',
  oci_runtime: { name: 'runc', version: '1.1.15' },
  image_id: IMAGE,
};
const probe = { docker_host: 'unix:///run/podman/podman.sock', runtime_identity: identity, runtime_identity_digest: runtimeIdentityDigest(identity) };

function enroll(dataDir: string, step = 'check'): Doc {
  const key = toHex(generateKeyPair().publicKey);
  const r = agentscm(['authority', 'enroll', '--data-dir', dataDir, '--repository', REPO, '--profile', PROFILE, '--step', step, '--executor-id', 'laptop-1', '--public-key', key, '--yes', '--json']);
  assert.equal(r.code, 0, r.stderr);
  return json(r);
}

describe('authority collector-profile template', () => {
  const s = adminSetup();
  const reg = enroll(s.dataDir);
  const probeFile = path.join(s.root, 'probe.json');
  fs.writeFileSync(probeFile, JSON.stringify(probe));
  const template = (out: string, ...extra: string[]) =>
    agentscm(['authority', 'collector-profile', 'template', '--data-dir', s.dataDir, '--registration-id', String(reg.registration_id), '--probe', probeFile, '--out', out, ...extra]);

  test('writes a profile from the enrollment, the probe and the argv, which installs as written', () => {
    const out = path.join(s.root, 'cp.json');
    const r = template(out, '--json', '--', 'sh', '-c', 'sh check.sh');
    assert.equal(r.code, 0, r.stderr);
    const written = JSON.parse(fs.readFileSync(out, 'utf8')) as Doc;
    assert.deepEqual(json(r).profile, written);
    assert.deepEqual(written, {
      version: 1,
      kind: 'command',
      repository: REPO,
      profile: PROFILE,
      step_id: 'check',
      registration_id: reg.registration_id,
      registration_epoch: reg.registration_epoch,
      recipe: { image_id: IMAGE, argv: ['sh', '-c', 'sh check.sh'], working_dir: '/snapshot', timeout_ms: 60000, max_output_bytes: 65536, network: 'none' },
      runtime_identity_digest: probe.runtime_identity_digest,
    });
    const inst = agentscm(['authority', 'collector-profile', 'install', '--data-dir', s.dataDir, '--file', out, '--json']);
    assert.equal(inst.code, 0, inst.stderr);
    assert.equal(json(inst).registration_id, reg.registration_id);
    assert.equal(json(inst).changed, true);
  });

  test('recipe options; the probe from stdin; text output names the file', () => {
    const out = path.join(s.root, 'cp-opts.json');
    const r = agentscm(
      ['authority', 'collector-profile', 'template', '--data-dir', s.dataDir, '--registration-id', String(reg.registration_id), '--probe', '-', '--out', out,
        '--image', IMAGE, '--working-dir', '/snapshot/sub', '--timeout-ms', '5000', '--max-output-bytes', '0', '--', 'sh', 'check.sh'],
      { input: JSON.stringify(probe) },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^wrote ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: collector profile for registration `));
    const recipe = (JSON.parse(fs.readFileSync(out, 'utf8')) as Doc).recipe;
    assert.deepEqual(recipe, { image_id: IMAGE, argv: ['sh', 'check.sh'], working_dir: '/snapshot/sub', timeout_ms: 5000, max_output_bytes: 0, network: 'none' });
  });

  test('never overwrites: an existing --out exits 9 and keeps its bytes', () => {
    const out = path.join(s.root, 'existing.json');
    fs.writeFileSync(out, 'keep me');
    const r = template(out, '--json', '--', 'sh', 'check.sh');
    assert.equal(r.code, 9, r.stderr);
    assert.equal(json<Doc>(r).error.code, 'FILE_EXISTS');
    assert.equal(fs.readFileSync(out, 'utf8'), 'keep me');
  });

  test('refuses bad input and writes nothing', () => {
    const out = path.join(s.root, 'never.json');
    const expect = (r: ReturnType<typeof agentscm>, exit: number, code: string) => {
      assert.equal(r.code, exit, `${r.stdout}\n${r.stderr}`);
      assert.equal(json<Doc>(r).error.code, code);
      assert.equal(fs.existsSync(out), false);
    };
    // No command.
    assert.equal(template(out).code, 2);
    // A probe whose digest is not its identity's.
    const forged = path.join(s.root, 'forged.json');
    fs.writeFileSync(forged, JSON.stringify({ ...probe, runtime_identity: { ...identity, oci_runtime: { name: 'crun', version: '1.0' } } }));
    expect(agentscm(['authority', 'collector-profile', 'template', '--data-dir', s.dataDir, '--registration-id', String(reg.registration_id), '--probe', forged, '--out', out, '--json', '--', 'sh']), 3, 'RUNTIME_PROBE_DIGEST_MISMATCH');
    // Not a probe's output at all.
    fs.writeFileSync(forged, JSON.stringify({ runtime_identity_digest: probe.runtime_identity_digest }));
    expect(agentscm(['authority', 'collector-profile', 'template', '--data-dir', s.dataDir, '--registration-id', String(reg.registration_id), '--probe', forged, '--out', out, '--json', '--', 'sh']), 3, 'INVALID_RUNTIME_PROBE');
    // Another image than the probe's.
    expect(template(out, '--json', '--image', `sha256:${'cd'.repeat(32)}`, '--', 'sh'), 3, 'PROBE_IMAGE_MISMATCH');
    // A recipe the profile format refuses.
    expect(template(out, '--json', '--working-dir', 'relative', '--', 'sh'), 3, 'INVALID_COLLECTOR_PROFILE');
    // An unknown enrollment.
    expect(agentscm(['authority', 'collector-profile', 'template', '--data-dir', s.dataDir, '--registration-id', 'reg-nope', '--probe', probeFile, '--out', out, '--json', '--', 'sh']), 13, 'ENROLLMENT_NOT_FOUND');
  });

  test('refuses an enrollment that is no longer current', () => {
    const t = adminSetup();
    const old = enroll(t.dataDir);
    enroll(t.dataDir); // a new epoch of the same executor
    const out = path.join(t.root, 'cp.json');
    const r = agentscm(['authority', 'collector-profile', 'template', '--data-dir', t.dataDir, '--registration-id', String(old.registration_id), '--probe', probeFile, '--out', out, '--json', '--', 'sh']);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(json<Doc>(r).error.code, 'ENROLLMENT_NOT_CURRENT');
    assert.equal(fs.existsSync(out), false);
  });
});
