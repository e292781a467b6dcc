// Forge commit statuses from a real Hub (hub serve --forge) to loopback GitHub and GitLab stand-ins that
// check request shapes and tokens: the sequence for checkpoint, collect, finalize, supersession and a
// failing check; a 5xx retried; a 401 reported once and not retried; a Hub killed (SIGKILL) with
// statuses queued delivers them after it starts again. Subjects are qualified the real way (real
// container engine, enrolled collector).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { agentscm } from '../support/cli.js';
import { checkpoint, claim, collect, collectorRig, finalize, ok, type CollectorRig } from '../support/collector.js';
import { forgeStandIn, type ForgeStandIn } from '../support/forge.js';
import { EXAMPLE_REQUIREMENT, PROFILE, REPO, startHub, type RunningHub } from '../support/hub.js';
import { COLLECTOR_SKIP } from '../support/qualified.js';

const cleanup: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanup.reverse()) await c();
});

const git = (ws: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: ws, stdio: ['ignore', 'pipe', 'pipe'] }).toString().trim();

function commitAll(ws: string, msg: string): string {
  git(ws, 'add', '-A');
  git(ws, 'commit', '-q', '-m', msg);
  return git(ws, 'rev-parse', 'HEAD');
}

interface ForgeRig {
  rig: CollectorRig;
  forge: ForgeStandIn;
  hubLog: string[];
  startForgeHub(): Promise<RunningHub>;
}

async function forgeRig(kind: 'github' | 'gitlab'): Promise<ForgeRig> {
  const rig = await collectorRig();
  cleanup.push(() => rig.stop());
  const token = `forge-token-${kind}`;
  const forge = await forgeStandIn(kind, token, REPO);
  cleanup.push(() => forge.close());
  const tokenFile = path.join(rig.root, 'forge-token');
  fs.writeFileSync(tokenFile, token + '\n', { mode: 0o600 });
  // Setting the flag keeps the policy epoch (and so every subject, task and receipt).
  const before = ok(agentscm(['authority', 'profile', 'add', '--data-dir', rig.dataDir, '--repository', REPO, '--profile', PROFILE, '--target', 'main', '--requirement', EXAMPLE_REQUIREMENT, '--json']), 'profile add');
  const flagged = ok(
    agentscm(['authority', 'profile', 'add', '--data-dir', rig.dataDir, '--repository', REPO, '--profile', PROFILE, '--target', 'main', '--requirement', EXAMPLE_REQUIREMENT, '--publish-forge-status', '--json']),
    'profile add --publish-forge-status',
  );
  assert.equal(flagged.publish_forge_status, true);
  assert.equal(flagged.policy_epoch, before.policy_epoch);
  const hubLog: string[] = [];
  const startForgeHub = async () => {
    const hub = await startHub(rig.dataDir, ['--forge', kind, '--forge-api', forge.url, '--forge-token-file', tokenFile, '--forge-poll-ms', '100', '--forge-retry-ms', '50', '--forge-max-attempts', '20']);
    hub.child.stderr!.on('data', (b: Buffer) => hubLog.push(...b.toString().split('\n').filter(Boolean)));
    return hub;
  };
  await rig.hub.stop();
  rig.hub = await startForgeHub();
  rig.stop = () => rig.hub.stop();
  git(rig.workspace, 'init', '-q');
  return { rig, forge, hubLog, startForgeHub };
}

function outbox(rig: CollectorRig): { state: string; delivery: string; attempts: number }[] {
  const db = new Database(path.join(rig.dataDir, 'journal.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT state, delivery, attempts FROM forge_outbox ORDER BY seq').all() as { state: string; delivery: string; attempts: number }[];
  } finally {
    db.close();
  }
}

const brief = (s: { sha: string; state: string }[]) => s.map((x) => `${x.state}@${x.sha.slice(0, 8)}`);

describe('forge commit statuses', { skip: COLLECTOR_SKIP }, () => {
  test('GitHub: pending, success with the receipt digest, pending on supersession, failure; a 5xx is retried', async () => {
    const { rig, forge } = await forgeRig('github');
    const sha1 = commitAll(rig.workspace, 'one');
    const cp = checkpoint(rig, 'c1');
    assert.deepEqual(cp.git, { head: sha1, tree_matches: true });
    forge.fail(503, 1);
    const c = claim(rig, 'c1');
    await forge.waitFor((d) => d.length >= 1);
    ok(collect(rig, 'c1', c), 'collect');
    const fin = ok(finalize(rig, 'c1'), 'finalize');
    const receipt = String(fin.receipt_digest ?? (fin.receipt as Record<string, unknown> | undefined)?.receipt_digest ?? '');
    let d = await forge.waitFor((x) => x.some((s) => s.state === 'success'));
    assert.deepEqual(brief(d), [`pending@${sha1.slice(0, 8)}`, `success@${sha1.slice(0, 8)}`]);
    assert.ok(d.every((s) => s.context === `agentscm/${PROFILE}`));
    if (receipt) assert.match(d[1]!.description, new RegExp(receipt));
    else assert.match(d[1]!.description, /receipt [0-9a-f]{64}/);
    // The 503 was answered to the first delivery of pending, which was sent again.
    assert.deepEqual(forge.seen.slice(0, 2).map((s) => [s.state, s.answered]), [['pending', 503], ['pending', 201]]);

    // A new commit whose check fails: the checkpoint supersedes the subject (pending), the collector's
    // failed record makes it a failure.
    fs.writeFileSync(path.join(rig.workspace, 'check.sh'), 'echo failing\nexit 1\n');
    const sha2 = commitAll(rig.workspace, 'two');
    checkpoint(rig, 'c1');
    d = await forge.waitFor((x) => x.length >= 3);
    assert.equal(brief(d)[2], `pending@${sha2.slice(0, 8)}`);
    ok(collect(rig, 'c1', claim(rig, 'c1')), 'collect (failing check)');
    d = await forge.waitFor((x) => x.length >= 4);
    assert.deepEqual(brief(d), [`pending@${sha1.slice(0, 8)}`, `success@${sha1.slice(0, 8)}`, `pending@${sha2.slice(0, 8)}`, `failure@${sha2.slice(0, 8)}`]);
    // A workspace that differs from its commit publishes nothing for that checkpoint.
    fs.writeFileSync(path.join(rig.workspace, 'uncommitted.txt'), 'x\n');
    assert.deepEqual(checkpoint(rig, 'c1').git, { head: sha2, tree_matches: false });
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(forge.seen.filter((s) => s.answered < 300).length, 4);
    assert.deepEqual(forge.malformed, []);
    assert.ok(outbox(rig).every((r) => r.delivery === 'delivered'));
  });

  test('GitLab: a Hub killed with statuses queued delivers them after restart; a 401 is reported once, not retried', async () => {
    const { rig, forge, hubLog, startForgeHub } = await forgeRig('gitlab');
    const sha1 = commitAll(rig.workspace, 'one');
    checkpoint(rig, 'c1');
    forge.answerAll(503);
    const c = claim(rig, 'c1');
    await forge.waitFor(() => forge.seen.length >= 2);
    // Killed while pending is queued and failing.
    rig.hub.child.kill('SIGKILL');
    await new Promise((r) => rig.hub.child.once('exit', r));
    assert.deepEqual(outbox(rig).map((r) => [r.state, r.delivery]), [['pending', 'queued']]);
    forge.answerAll(undefined);
    rig.hub = await startForgeHub();
    let d = await forge.waitFor((x) => x.length >= 1);
    assert.deepEqual(brief(d), [`pending@${sha1.slice(0, 8)}`]);
    ok(collect(rig, 'c1', c), 'collect');
    ok(finalize(rig, 'c1'), 'finalize');
    d = await forge.waitFor((x) => x.length >= 2);
    assert.deepEqual(brief(d), [`pending@${sha1.slice(0, 8)}`, `success@${sha1.slice(0, 8)}`]);
    assert.ok(d.every((s) => s.context === `agentscm/${PROFILE}`));

    // A 401: reported once in the Hub's log, the status not sent again.
    forge.answerAll(401);
    fs.writeFileSync(path.join(rig.workspace, 'more.txt'), 'more\n');
    const sha2 = commitAll(rig.workspace, 'two');
    checkpoint(rig, 'c1');
    await forge.waitFor(() => forge.seen.some((s) => s.sha === sha2));
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(forge.seen.filter((s) => s.sha === sha2).length, 1);
    assert.equal(hubLog.filter((l) => /rejected/.test(l)).length, 1, hubLog.join('\n'));
    assert.deepEqual(outbox(rig).at(-1), { state: 'pending', delivery: 'rejected', attempts: 1 });
    assert.deepEqual(forge.malformed, []);
  });
});
