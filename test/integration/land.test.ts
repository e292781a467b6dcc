// approve, land and snapshot export against subjects qualified the real way (real Hub over HTTP, real
// container engine, enrolled collector): a landing moves the target; each refusal cause is produced for
// real and refused with its code and exit code while nothing changes; two concurrent landings of two
// Changes on the same base land exactly one.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { AGENTSCM_BIN, agentscm, json, REPO_ROOT, type RunResult } from '../support/cli.js';
import { checkpoint, claim, collect, collectorRig, finalize, installProfile, ok, profileDoc, qualification, type CollectorRig } from '../support/collector.js';
import { PROFILE, REPO, tempDir } from '../support/hub.js';
import { COLLECTOR_SKIP } from '../support/qualified.js';

const rigs: CollectorRig[] = [];
after(async () => {
  for (const r of rigs) await r.stop();
});

/** A rig whose Changes are each checkpointed at the workspace and qualified by a real collector run. */
async function qualified(...changes: string[]): Promise<CollectorRig> {
  const rig = await collectorRig();
  rigs.push(rig);
  for (const c of changes) checkpoint(rig, c);
  for (const c of changes) {
    ok(collect(rig, c, claim(rig, c)), 'collect');
    ok(finalize(rig, c), 'collector-finalize');
    assert.equal(qualification(rig, c).doc.qualified, true);
  }
  return rig;
}

/** The Change's current subject as the authority holds it (what checkpoint printed last). */
function checkpointSubject(rig: CollectorRig, change: string): Record<string, unknown> {
  const db = new Database(path.join(rig.dataDir, 'authority.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const cv = db.prepare('SELECT v.* FROM changes c JOIN change_versions v ON v.repository = c.repository AND v.change_id = c.change_id AND v.change_version = c.current_version WHERE c.change_id = ?').get(change) as Record<string, unknown>;
    const p = db.prepare('SELECT p.*, r.plan_digest FROM profiles p JOIN requirements r USING (requirement_digest) WHERE p.profile = ?').get(PROFILE) as Record<string, unknown>;
    return {
      repository: REPO, profile: PROFILE, target: p.target, change_id: change, change_version: cv.change_version, revision: cv.revision,
      context_digest: cv.context_digest, policy_epoch: p.policy_epoch, requirement_digest: p.requirement_digest, plan_digest: p.plan_digest,
    };
  } finally {
    db.close();
  }
}

const local = (rig: CollectorRig, verb: string, change: string, ...extra: string[]): RunResult =>
  agentscm([verb, change, '--data-dir', rig.dataDir, '--repository', REPO, '--profile', PROFILE, ...extra, '--json']);

/** What landing may change: the target rows and the integrations, read from the authority read-only. */
function landed(rig: CollectorRig): { targets: unknown[]; integrations: number } {
  const db = new Database(path.join(rig.dataDir, 'authority.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return {
      targets: db.prepare('SELECT repository, target, revision FROM targets').all(),
      integrations: (db.prepare('SELECT COUNT(*) AS n FROM integrations').get() as { n: number }).n,
    };
  } finally {
    db.close();
  }
}

function refused(r: RunResult, code: string, exit: number): void {
  assert.equal(r.code, exit, r.stdout + r.stderr);
  const e = json(r).error as Record<string, unknown>;
  assert.equal(e.code, code.toUpperCase());
  assert.equal((e.detail as Record<string, unknown>).refusal, code);
}

describe('approve and land', { skip: COLLECTOR_SKIP }, () => {
  test('a qualified, approved subject lands: the target moves to its revision, and export gives back its files', async () => {
    const rig = await qualified('c1');
    const a = ok(local(rig, 'approve', 'c1'), 'approve');
    const subject = a.subject as Record<string, unknown>;
    assert.equal(a.actor, 'operator');
    assert.match(String(a.receipt_digest), /^[0-9a-f]{64}$/);
    assert.equal(a.receipt_digest, qualification(rig, 'c1').doc.receipt_digest);
    const l = ok(local(rig, 'land', 'c1'), 'land');
    assert.equal(l.target, 'main');
    assert.equal(l.from_revision, null);
    assert.equal(l.revision, subject.revision);
    assert.equal(l.receipt_digest, a.receipt_digest);
    assert.equal(l.approval_id, a.approval_id);
    assert.deepEqual(landed(rig), { targets: [{ repository: REPO, target: 'main', revision: subject.revision }], integrations: 1 });
    // Landing again: the target is no longer at the version's base.
    refused(local(rig, 'land', 'c1'), 'target_moved', 19);
    assert.equal(landed(rig).integrations, 1);

    const out = path.join(tempDir('export'), 'tree');
    const x = ok(agentscm(['snapshot', 'export', '--data-dir', rig.dataDir, '--revision', String(l.revision), '--out', out, '--json']), 'export');
    assert.equal(x.file_count, fs.readdirSync(rig.workspace, { recursive: true }).filter((f) => fs.statSync(path.join(rig.workspace, String(f))).isFile()).length);
    for (const f of ['check.sh', 'greet.sh', 'README.md', 'docs/CHECK.md']) assert.deepEqual(fs.readFileSync(path.join(out, f)), fs.readFileSync(path.join(rig.workspace, f)), f);
    assert.equal(fs.statSync(path.join(out, 'check.sh')).mode & 0o777, fs.statSync(path.join(rig.workspace, 'check.sh')).mode & 0o100 ? 0o755 : 0o644);
    // A Change checkpointed on the exported target is based on it, and may land on top of it.
    fs.writeFileSync(path.join(out, 'NOTES.md'), 'on top of main\n');
    const cp = ok(agentscm(['checkpoint', 'c2', '--data-dir', rig.dataDir, '--repository', REPO, '--profile', PROFILE, '--workspace', out, '--json']), 'checkpoint c2');
    const c = claim(rig, 'c2');
    ok(collect(rig, 'c2', c), 'collect c2');
    ok(finalize(rig, 'c2'), 'finalize c2');
    ok(local(rig, 'approve', 'c2'), 'approve c2');
    const l2 = ok(local(rig, 'land', 'c2'), 'land c2');
    assert.equal(l2.from_revision, l.revision);
    assert.equal(l2.revision, (cp.subject as Record<string, unknown>).revision);
    // Export refuses to write into a non-empty directory, and an unknown revision.
    assert.equal(agentscm(['snapshot', 'export', '--data-dir', rig.dataDir, '--revision', String(l.revision), '--out', out, '--json']).code, 3);
    assert.equal(agentscm(['snapshot', 'export', '--data-dir', rig.dataDir, '--revision', 'e'.repeat(64), '--out', path.join(out, 'x'), '--json']).code, 13);
  });

  test('each refusal cause is refused with its code and exit code, and nothing changes', async () => {
    const nothing = { targets: [], integrations: 0 };

    // not_qualified, then not_approved: a checkpoint without any collector run.
    {
      const rig = await qualified();
      checkpoint(rig, 'c1');
      refused(local(rig, 'approve', 'c1'), 'not_qualified', 8);
      refused(local(rig, 'land', 'c1'), 'not_approved', 20);
      assert.deepEqual(landed(rig), nothing);
    }
    const rig = await qualified('c1', 'c2', 'c3', 'c4', 'c5');
    const rev = String(qualification(rig, 'c1').doc.revision);
    // subject_superseded: approve names another revision; land after a new checkpoint of the Change.
    refused(local(rig, 'approve', 'c1', '--revision', 'f'.repeat(64)), 'subject_superseded', 14);
    ok(local(rig, 'approve', 'c1', '--revision', rev), 'approve c1');
    fs.writeFileSync(path.join(rig.workspace, 'later.txt'), 'later\n');
    checkpoint(rig, 'c1');
    refused(local(rig, 'land', 'c1'), 'subject_superseded', 14);
    assert.deepEqual(landed(rig), nothing);

    // The other causes are applied one after another, each caught before the ones applied earlier
    // (admission checks the origin grant, then the executor, then the collector profile).
    ok(local(rig, 'approve', 'c2'), 'approve c2');
    ok(local(rig, 'approve', 'c3'), 'approve c3');
    ok(local(rig, 'approve', 'c4'), 'approve c4');
    ok(local(rig, 'approve', 'c5'), 'approve c5');

    // profile_changed: another collector profile is installed for the registration.
    installProfile(rig, profileDoc(rig, ['sh', '-c', 'sh check.sh']));
    refused(local(rig, 'land', 'c3'), 'profile_changed', 18);
    refused(local(rig, 'approve', 'c3'), 'profile_changed', 18);
    assert.deepEqual(landed(rig), nothing);

    // executor_revoked: the registration is revoked.
    ok(agentscm(['authority', 'revoke-enrollment', '--yes', '--data-dir', rig.dataDir, '--registration-id', rig.registrationId, '--json']), 'revoke-enrollment');
    refused(local(rig, 'land', 'c4'), 'executor_revoked', 16);
    assert.deepEqual(landed(rig), nothing);

    // origin_revoked: the token is revoked.
    ok(agentscm(['authority', 'token', 'revoke', '--data-dir', rig.dataDir, '--token-id', rig.tokenId, '--json']), 'token revoke');
    refused(local(rig, 'land', 'c2'), 'origin_revoked', 17);
    assert.deepEqual(landed(rig), nothing);

    // policy_changed: a new requirement is installed (a new policy epoch) after c5's approval.
    const req = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples', 'requirement.json'), 'utf8')) as { workflow: string };
    req.workflow = 'example-check-2';
    const reqFile = path.join(rig.root, 'requirement-2.json');
    fs.writeFileSync(reqFile, JSON.stringify(req));
    ok(agentscm(['authority', 'profile', 'add', '--data-dir', rig.dataDir, '--repository', REPO, '--profile', PROFILE, '--target', 'main', '--requirement', reqFile, '--json']), 'profile add');
    refused(local(rig, 'land', 'c5'), 'policy_changed', 15);
    refused(local(rig, 'approve', 'c5'), 'not_qualified', 8);
    assert.deepEqual(landed(rig), nothing);
  });

  test('the Hub\'s approve and land: only for a token allowed to integrate, only for the current subject', async () => {
    const rig = await qualified('c1');
    const cp = checkpointSubject(rig, 'c1');
    const integrator = path.join(rig.root, 'integrator-token');
    ok(agentscm(['authority', 'token', 'issue', '--data-dir', rig.dataDir, '--owner', 'ops', '--agent', 'release', '--may-integrate', '--out', integrator, '--json']), 'token issue --may-integrate');
    const call = async (tokenFile: string, operation: string, subject: unknown) => {
      const r = await fetch(`${rig.hub.url}/v1/hub/workspace/repositories/${encodeURIComponent(REPO)}/profiles/${PROFILE}/agent-tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fs.readFileSync(tokenFile, 'utf8').trim()}`, 'content-type': 'application/json' },
        body: JSON.stringify({ operation, subject }),
      });
      return { status: r.status, doc: (await r.json()) as Record<string, unknown> };
    };
    // The agent's own token may not integrate.
    let r = await call(rig.tokenFile, 'approve', cp);
    assert.equal(r.status, 403);
    assert.equal((r.doc.error as Record<string, unknown>).code, 'not_authorized');
    r = await call(integrator, 'land', cp);
    assert.equal(r.status, 409);
    assert.equal((r.doc.error as Record<string, unknown>).code, 'not_approved');
    r = await call(integrator, 'approve', cp);
    assert.equal(r.status, 200, JSON.stringify(r.doc));
    assert.match(String(r.doc.actor), /^token:[0-9a-f]{24}$/);
    // A subject that is not the current one is refused as superseded.
    r = await call(integrator, 'land', { ...cp, change_version: 99 });
    assert.equal(r.status, 409);
    assert.equal((r.doc.error as Record<string, unknown>).code, 'subject_superseded');
    assert.deepEqual(landed(rig), { targets: [], integrations: 0 });
    r = await call(integrator, 'land', cp);
    assert.equal(r.status, 200, JSON.stringify(r.doc));
    assert.equal(r.doc.revision, cp.revision);
    assert.equal(landed(rig).integrations, 1);
  });

  test('two concurrent landings of two Changes based on the same target revision: exactly one lands', async () => {
    const rig = await qualified('a1', 'b1');
    ok(local(rig, 'approve', 'a1'), 'approve a1');
    ok(local(rig, 'approve', 'b1'), 'approve b1');
    const run = (change: string) =>
      new Promise<RunResult>((resolve, reject) => {
        const child = spawn(process.execPath, [AGENTSCM_BIN, 'land', change, '--data-dir', rig.dataDir, '--repository', REPO, '--profile', PROFILE, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
        child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
        child.once('error', reject);
        child.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
      });
    const [a, b] = await Promise.all([run('a1'), run('b1')]);
    const codes = [a.code, b.code].sort();
    assert.deepEqual(codes, [0, 19], a.stdout + a.stderr + b.stdout + b.stderr);
    const loser = a.code === 19 ? a : b;
    refused(loser, 'target_moved', 19);
    const st = landed(rig);
    assert.equal(st.integrations, 1);
    assert.equal(st.targets.length, 1);
  });
});
