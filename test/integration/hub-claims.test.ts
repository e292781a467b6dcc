// Claims, leases, fences, idempotent mutations, results and recovery over a real Hub (`hub serve` on
// 127.0.0.1:0, real SQLite) driven by the built CLI.

import assert from 'node:assert/strict';
import { HUB_ERROR_HINTS } from '../../src/core/contract/hints.js';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { agentscm, AGENTSCM_BIN, json, type RunResult } from '../support/cli.js';
import { adminSetup, callArgs, checkpointArgs, PROFILE, REPO, startHub, type RunningHub, type Setup } from '../support/hub.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const REQUIREMENT = {
  version: 1,
  workflow: 'claims-test',
  steps: [
    {
      id: 'obs',
      skill: 'observe',
      action_class: 'observation',
      required: true,
      depends_on: [],
      summary: 'observe',
      criteria: [
        { id: 'obs-ok', text: 'observed', required: true, controller_only: false },
        { id: 'obs-review', text: 'independent review', required: true, controller_only: true },
      ],
      references: [],
    },
    { id: 'assert', skill: 'say', action_class: 'agent_assertion', required: false, depends_on: [], summary: 'assert', criteria: [{ id: 'a-ok', text: 'ok', required: true, controller_only: false }], references: [] },
    { id: 'ctl', skill: 'review', action_class: 'controller_only', required: false, depends_on: [], summary: 'review', criteria: [{ id: 'c-ok', text: 'ok', required: true, controller_only: true }], references: [] },
    { id: 'after', skill: 'say', action_class: 'agent_assertion', required: false, depends_on: ['obs'], summary: 'after', criteria: [{ id: 'after-ok', text: 'ok', required: true, controller_only: false }], references: [] },
  ],
};

function runAsync(args: string[]): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [AGENTSCM_BIN, ...args], { encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

const errCode = (r: RunResult): string => (JSON.parse(r.stdout) as Doc).error.code;

describe('reference Hub: claims, fences, idempotency, results, recovery', () => {
  let s: Setup;
  let hub: RunningHub;
  let keyDir: string;
  let registrationId: string;
  const c = (op: string, ...rest: string[]) => agentscm(callArgs(s, hub.url, op, ...rest));
  const ok = (op: string, ...rest: string[]): Doc => {
    const r = c(op, ...rest);
    assert.equal(r.code, 0, `${op} ${rest.join(' ')}: ${r.stdout} ${r.stderr}`);
    return json<Doc>(r);
  };
  const tasksOf = (change: string): Record<string, string> => {
    const q = json<Doc>(c('qualification', change));
    return Object.fromEntries((q.tasks as Doc[]).map((t) => [t.step_id, t.task_id]));
  };
  const qual = (change: string) => json<Doc>(c('qualification', change));
  const writeAssertion = (name: string, claim: Doc, criteria: Doc[], outcome = 'passed', requestId?: string): string => {
    const a = claim.attempt;
    const doc: Doc = {
      version: 1,
      task_id: a.task_id,
      task_digest: a.task_digest,
      attempt_id: a.attempt_id,
      attempt_digest: a.attempt_digest,
      ...(requestId ? { request_id: requestId } : {}),
      execution_operation_id: a.execution_operation_id,
      agent: { owner_id: 'alice', agent_id: 'claude' },
      executor: null,
      fence: a.fence,
      trust_class: 'agent_assertion',
      outcome,
      criteria,
    };
    const f = path.join(s.root, `${name}.json`);
    fs.writeFileSync(f, JSON.stringify(doc));
    return f;
  };
  const row = (criterion: string, outcome = 'passed') => ({ criterion, outcome, findings: [], evidence_digests: [] });

  before(async () => {
    const reqFile = path.join(fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'agentscm-req-')), 'requirement.json');
    fs.writeFileSync(reqFile, JSON.stringify(REQUIREMENT));
    s = adminSetup(reqFile);
    for (const ch of ['c1', 'c2', 'c3']) assert.equal(agentscm(checkpointArgs(s, ch)).code, 0);
    keyDir = path.join(s.root, 'key');
    const k = json<Doc>(agentscm(['agent-task', 'key', 'generate', '--key-dir', keyDir, '--json']));
    const e = agentscm(['authority', 'enroll', '--data-dir', s.dataDir, '--repository', REPO, '--profile', PROFILE, '--step', 'obs', '--executor-id', 'exec1', '--public-key', k.public_key, '--yes', '--json']);
    assert.equal(e.code, 0, e.stderr);
    registrationId = json<Doc>(e).registration_id;
    hub = await startHub(s.dataDir);
  });
  after(async () => {
    await hub?.stop();
  });

  let winner: Doc;
  let winnerArgs: () => string[];

  test('before any claim (no journal yet) the answers are pending, the same each time', () => {
    assert.equal(fs.existsSync(path.join(s.dataDir, 'journal.sqlite')), false);
    const first = qual('c1');
    assert.deepEqual(qual('c1'), first);
    assert.equal((first.tasks as Doc[]).find((t) => t.step_id === 'assert')!.state, 'pending');
  });

  test('16 parallel clients claim one task: exactly one wins, the journal holds one attempt', async () => {
    const task = tasksOf('c1').assert!;
    const args = (i: number) => callArgs(s, hub.url, 'claim', 'c1', '--task-id', task, '--lease-ms', '600000', '--request-id', `race-${i}`, '--execution-operation-id', `exec-${i}`);
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => runAsync(args(i))));
    const wins = results.map((r, i) => ({ r, i })).filter((x) => x.r.code === 0);
    assert.equal(wins.length, 1, results.map((r) => r.stdout).join('\n'));
    for (const r of results) if (r.code !== 0) {
      assert.equal(r.code, 7, r.stdout + r.stderr);
      assert.equal(errCode(r), 'ATTEMPT_IN_PROGRESS');
    }
    winner = json<Doc>(wins[0]!.r);
    const wi = wins[0]!.i;
    winnerArgs = () => args(wi);
    assert.equal(winner.attempt.fence, 1);
    assert.equal(winner.attempt.state, 'leased');
    // The answers the Hub kept while there was no journal give way to the journal the claim created.
    assert.equal((qual('c1').tasks as Doc[]).find((t) => t.step_id === 'assert')!.state, 'claimed');
    assert.ok(winner.attempt.lease_ms <= 600000);
    const db = new Database(path.join(s.dataDir, 'journal.sqlite'), { readonly: true });
    try {
      assert.equal((db.prepare('SELECT COUNT(*) AS n FROM attempts WHERE task_id = ?').get(task) as Doc).n, 1);
      assert.equal((db.prepare('SELECT COUNT(*) AS n FROM idempotency').get() as Doc).n, 1);
    } finally {
      db.close();
    }
    const q = qual('c1');
    assert.equal(q.tasks.find((t: Doc) => t.step_id === 'assert').state, 'claimed');
  });

  test('identical retry returns the retained outcome; changed bytes and another kind conflict', () => {
    const again = agentscm(winnerArgs());
    assert.equal(again.code, 0, again.stdout);
    const d = json<Doc>(again);
    assert.equal(d.replayed, true);
    assert.deepEqual({ ...d, replayed: false }, winner);

    const changed = agentscm(winnerArgs().map((a) => (a === '600000' ? '500000' : a)));
    assert.equal(changed.code, 7);
    assert.equal(errCode(changed), 'REQUEST_ID_CONFLICT');

    const reqId = winnerArgs()[winnerArgs().indexOf('--request-id') + 1]!;
    const cross = c('heartbeat', '--task-id', winner.attempt.task_id, '--request-id', reqId);
    assert.equal(cross.code, 7);
    assert.equal(errCode(cross), 'REQUEST_ID_KIND_CONFLICT');
  });

  test('a generated request id is printed so the request can be retried', () => {
    const r = c('heartbeat', '--task-id', winner.attempt.task_id);
    assert.equal(r.code, 0, r.stdout);
    const id = /request_id (req-[0-9a-f]{32})/.exec(r.stderr)?.[1];
    assert.ok(id, r.stderr);
    assert.equal(json<Doc>(r).request_id, id);
    const again = json<Doc>(c('heartbeat', '--task-id', winner.attempt.task_id, '--request-id', id!));
    assert.equal(again.replayed, true);
  });

  test('a claim run again with its printed request id is the identical request: the retained outcome', () => {
    const task = tasksOf('c3').assert!;
    const first = c('claim', 'c3', '--task-id', task, '--lease-ms', '600000');
    assert.equal(first.code, 0, first.stdout + first.stderr);
    const id = /request_id (req-[0-9a-f]{32})/.exec(first.stderr)?.[1];
    assert.ok(id, first.stderr);
    const claimed = json<Doc>(first);
    // No --execution-operation-id: derived from the request id and the task, never random.
    assert.match(claimed.attempt.execution_operation_id, /^exec-[0-9a-f]{32}$/);
    const again = c('claim', 'c3', '--task-id', task, '--lease-ms', '600000', '--request-id', id!);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    const d = json<Doc>(again);
    assert.equal(d.replayed, true);
    assert.deepEqual({ ...d, replayed: false }, claimed);
    // Another request id is another claim (with another execution identity): refused while this one is live.
    const other = c('claim', 'c3', '--task-id', task, '--lease-ms', '600000', '--request-id', 'c3-other');
    assert.equal(other.code, 7, other.stdout);
    assert.equal(errCode(other), 'ATTEMPT_IN_PROGRESS');
    // A result that reports uncertain finishes the attempt: the task is failed (result_uncertain), not
    // uncertain, which would point at a reconcile that a finished attempt refuses.
    const r = c('result', '--assertion', writeAssertion('c3-uncertain', claimed, [row('a-ok', 'uncertain')], 'uncertain'));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(qual('c3').tasks.find((t: Doc) => t.step_id === 'assert').state, 'failed');
    const rec = c('reconcile', '--task-id', task);
    assert.equal(rec.code, 7);
    assert.equal(errCode(rec), 'ATTEMPT_FINISHED');
  });

  test('results: task-aware validation, agent assertions retained as nonpassing, confirmed recovery', () => {
    const bad = (criteria: Doc[], code: string, exit = 3, outcome = 'passed') => {
      const r = c('result', '--assertion', writeAssertion('bad', winner, criteria, outcome));
      assert.equal(r.code, exit, r.stdout);
      assert.equal(errCode(r), code);
    };
    bad([row('a-ok'), row('nope')], 'INVALID_REQUEST');
    bad([], 'INVALID_ASSERTION'); // schema: at least one row, refused by the CLI before sending
    const inconsistent = c('result', '--assertion', writeAssertion('inc', winner, [row('a-ok', 'failed')], 'passed'));
    assert.equal(inconsistent.code, 3);
    const dup = c('result', '--assertion', writeAssertion('dup', winner, [row('a-ok'), row('a-ok')]));
    assert.equal(dup.code, 3);

    const f = writeAssertion('good', winner, [row('a-ok')], 'passed', 'result-1');
    const r = ok('result', '--assertion', f);
    assert.equal(r.retained.passing, false);
    assert.equal(r.retained.trust_class, 'agent_assertion');
    assert.equal(r.attempt.state, 'finished');
    assert.equal(r.attempt.outcome, 'failed');
    const q = qual('c1');
    assert.deepEqual(q.failures.find((x: Doc) => x.task_id === winner.attempt.task_id), undefined); // optional task: not a failure
    assert.equal(q.tasks.find((t: Doc) => t.step_id === 'assert').state, 'failed');

    const rec = ok('recovery', '--task-id', winner.attempt.task_id, '--request-id', 'result-1');
    assert.equal(rec.disposition, 'confirmed');
    assert.deepEqual(rec.confirmed_effects, ['assertion_retained']);
    assert.deepEqual(rec.unresolved_effects, []);
    assert.deepEqual(rec.permitted_actions, ['inspect', 'stop']);
    assert.equal(rec.observed_state, 'finished');

    const again = c('claim', 'c1', '--task-id', winner.attempt.task_id, '--lease-ms', '60000');
    assert.equal(again.code, 7);
    assert.equal(errCode(again), 'TASK_FINISHED');
  });

  test('controller-only steps, collector steps and unmet dependencies are refused', () => {
    const t = tasksOf('c1');
    const ctl = c('claim', 'c1', '--task-id', t.ctl!, '--lease-ms', '60000');
    assert.equal(ctl.code, 7);
    assert.equal(errCode(ctl), 'CONTROLLER_ONLY_STEP');
    const dep = c('claim', 'c1', '--task-id', t.after!, '--lease-ms', '60000', '--request-id', 'after-early');
    assert.equal(dep.code, 7);
    assert.equal(errCode(dep), 'DEPENDENCY_NOT_SATISFIED');
    // The refusal names the Hub's code and message and the fixed hint sentence, on stderr and in --json.
    const depErr = (JSON.parse(dep.stdout) as Doc).error;
    assert.match(depErr.message, /^the Hub refused the request: dependency_not_satisfied: dependency obs has not succeeded/);
    assert.equal(depErr.detail.hub_code, 'dependency_not_satisfied');
    assert.equal(depErr.detail.hint, HUB_ERROR_HINTS.dependency_not_satisfied);
    assert.ok(dep.stderr.includes(`hint: ${HUB_ERROR_HINTS.dependency_not_satisfied}`), dep.stderr);
    // The refused claim had no effect and the task is pending: identical retry is permitted.
    const rec = ok('recovery', 'c1', '--task-id', t.after!, '--request-id', 'after-early');
    assert.equal(rec.disposition, 'conclusive_rejection');
    assert.equal(rec.observed_state, 'pending');
    assert.deepEqual(rec.permitted_actions, ['inspect', 'stop', 'retry_identical']);
  });

  let oldClaim: Doc;
  let fresh: Doc;

  test('an expired lease cannot be heartbeaten or reclaimed; reconcile raises the fence; old fence refused', async () => {
    const task = tasksOf('c1').obs!;
    oldClaim = ok('claim', 'c1', '--task-id', task, '--lease-ms', '1000', '--executor-id', 'exec1', '--request-id', 'obs-claim-1');
    assert.equal(oldClaim.attempt.executor.registration_id, registrationId);
    await new Promise((r) => setTimeout(r, 1200));
    const hb = c('heartbeat', '--task-id', task);
    assert.equal(hb.code, 7);
    assert.equal(errCode(hb), 'LEASE_EXPIRED');
    const re = c('claim', 'c1', '--task-id', task, '--lease-ms', '60000');
    assert.equal(re.code, 7);
    assert.equal(errCode(re), 'ATTEMPT_UNRESOLVED');
    const q = qual('c1');
    assert.deepEqual(q.failures.find((x: Doc) => x.task_id === task), { task_id: task, code: 'attempt_expired' });
    assert.deepEqual(q.next, { operation: 'reconcile', task_id: task });

    const expired = ok('recovery', '--task-id', task, '--request-id', 'obs-claim-1');
    assert.equal(expired.disposition, 'uncertain_effect');
    assert.equal(expired.observed_state, 'expired');
    assert.deepEqual(expired.unresolved_effects, ['execution_may_still_run']);
    assert.deepEqual(expired.permitted_actions, ['inspect', 'stop', 'reconcile']);
    assert.equal(expired.currently_applicable, false);

    const rc = ok('reconcile', '--task-id', task, '--reason', 'lease expired', '--request-id', 'obs-reconcile-1');
    assert.deepEqual(rc.supersession, { old_fence: 1, new_fence: 2 });
    assert.equal(rc.attempt.state, 'replaced');
    const replaced = ok('recovery', '--task-id', task, '--request-id', 'obs-claim-1');
    assert.equal(replaced.disposition, 'uncertain_effect');
    assert.equal(replaced.observed_state, 'replaced');
    assert.deepEqual(replaced.permitted_actions, ['inspect', 'stop', 'prepare_fresh_attempt']);

    fresh = ok('claim', 'c1', '--task-id', task, '--lease-ms', '600000', '--executor-id', 'exec1');
    assert.equal(fresh.attempt.fence, 2);
    assert.notEqual(fresh.attempt.execution_operation_id, oldClaim.attempt.execution_operation_id);

    const oldHb = c('heartbeat', '--task-id', task, '--attempt-id', oldClaim.attempt.attempt_id);
    assert.equal(oldHb.code, 7);
    assert.equal(errCode(oldHb), 'STALE_FENCE');
    const presented = c('heartbeat', '--task-id', task, '--fence', '1');
    assert.equal(presented.code, 7);
    assert.equal(errCode(presented), 'STALE_FENCE');
    const lateResult = c('result', '--assertion', writeAssertion('late', oldClaim, [row('obs-ok', 'failed'), row('obs-review', 'not_claimed')], 'failed', 'late-1'));
    assert.equal(lateResult.code, 7);
    assert.equal(errCode(lateResult), 'STALE_FENCE');
    // The late result stays attributed to the old attempt and had no effect on the replacement.
    const late = ok('recovery', '--task-id', task, '--request-id', 'late-1', '--attempt-id', oldClaim.attempt.attempt_id);
    assert.equal(late.disposition, 'conclusive_rejection');
    assert.equal(late.attempt_id, oldClaim.attempt.attempt_id);
    assert.equal(late.observed_state, 'replaced');
    assert.deepEqual(late.permitted_actions, ['inspect', 'stop']);
    const st = ok('status', 'c1', '--task-id', task);
    assert.equal(st.attempt.attempt_id, fresh.attempt.attempt_id);
    assert.equal(st.attempt.state, 'leased');
    assert.equal(st.attempt.currently_applicable, true);
  });

  let presigned: string;

  test('a signed registered observation completes the observation step; it cannot claim a controller-only row', () => {
    // c1: sign now, submit after revocation (below).
    presigned = writeAssertion('presigned', fresh, [row('obs-ok'), row('obs-review', 'not_claimed')], 'passed', 'presigned-1');
    const signedDoc = JSON.parse(fs.readFileSync(presigned, 'utf8')) as Doc;
    signedDoc.trust_class = 'registered_executor_observation';
    signedDoc.executor = { registration_id: registrationId, executor_id: 'exec1', registration_epoch: 1, verification_key_id: fresh.attempt.executor.verification_key_id };
    signedDoc.executor_provenance = null;
    fs.writeFileSync(presigned, JSON.stringify(signedDoc));
    const sig = json<Doc>(agentscm(['agent-task', 'observation', 'sign', '--assertion', presigned, '--key-dir', keyDir, '--json']));
    signedDoc.executor_provenance = { observation_digest: sig.digest, signature: sig.signature };
    fs.writeFileSync(presigned, JSON.stringify(signedDoc));

    // c2: claim and submit with --sign.
    const task = tasksOf('c2').obs!;
    const cl = ok('claim', 'c2', '--task-id', task, '--lease-ms', '600000', '--executor-id', 'exec1');
    const omitted = c('result', '--assertion', writeAssertion('om', cl, [row('obs-ok')]), '--sign', '--key-dir', keyDir);
    assert.equal(omitted.code, 3);
    assert.equal(errCode(omitted), 'INVALID_REQUEST');
    const claimsReview = c('result', '--assertion', writeAssertion('rv', cl, [row('obs-ok'), row('obs-review')]), '--sign', '--key-dir', keyDir);
    assert.equal(claimsReview.code, 3);
    assert.equal(errCode(claimsReview), 'CONTROLLER_ONLY_CRITERION');
    const r = ok('result', '--assertion', writeAssertion('obs2', cl, [row('obs-ok'), row('obs-review', 'not_claimed')]), '--sign', '--key-dir', keyDir);
    assert.equal(r.retained.trust_class, 'registered_executor_observation');
    assert.equal(r.retained.passing, false);
    assert.match(r.retained.observation_digest, /^[0-9a-f]{64}$/);
    assert.equal(r.attempt.outcome, 'passed');
    const q = qual('c2');
    assert.equal(q.tasks.find((t: Doc) => t.step_id === 'obs').state, 'succeeded');
    assert.equal(q.qualified, false); // no receipt: observations never qualify
    // The dependency is complete now.
    ok('claim', 'c2', '--task-id', tasksOf('c2').after!, '--lease-ms', '60000');
  });

  test('after revocation: a result is refused and evidence retained earlier stops counting', () => {
    assert.equal(agentscm(['authority', 'revoke-enrollment', '--yes', '--data-dir', s.dataDir, '--registration-id', registrationId, '--json']).code, 0);
    const r = c('result', '--assertion', presigned);
    assert.equal(r.code, 7, r.stdout);
    assert.equal(errCode(r), 'ENROLLMENT_NOT_CURRENT');
    const q = qual('c2');
    const obs = q.tasks.find((t: Doc) => t.step_id === 'obs');
    assert.equal(obs.state, 'failed');
    assert.deepEqual(q.failures.find((x: Doc) => x.task_id === obs.task_id), { task_id: obs.task_id, code: 'authorization_changed' });
    assert.deepEqual(q.next, { operation: 'none' });
    const hb = c('heartbeat', '--task-id', fresh.attempt.task_id);
    assert.equal(errCode(hb), 'ENROLLMENT_NOT_CURRENT');
  });

  test('an older unresolved subject blocks the new one until reconciled; stale attempts still answer', async () => {
    const oldTask = fresh.attempt.task_id;
    // Restart: nothing is dispatched or replayed, and committed requests keep their retained outcome.
    await hub.stop();
    hub = await startHub(s.dataDir);
    const replay = json<Doc>(agentscm(winnerArgs()));
    assert.equal(replay.replayed, true);
    assert.equal(replay.attempt.attempt_id, winner.attempt.attempt_id);

    fs.writeFileSync(path.join(s.workspace, 'new-file.txt'), 'changed\n');
    assert.equal(agentscm(checkpointArgs(s, 'c1')).code, 0);
    const newTask = tasksOf('c1').obs!;
    assert.notEqual(newTask, oldTask);
    const q = qual('c1');
    assert.deepEqual(q.failures.find((x: Doc) => x.task_id === newTask), { task_id: newTask, code: 'prior_subject_unresolved' });
    assert.deepEqual(q.next, { operation: 'reconcile', task_id: oldTask });
    const refused = c('claim', 'c1', '--task-id', newTask, '--lease-ms', '60000');
    assert.equal(refused.code, 7);
    assert.equal(errCode(refused), 'PRIOR_SUBJECT_UNRESOLVED');

    // The retained attempt of the stale subject still answers, apart from current applicability.
    const rec = ok('recovery', '--task-id', oldTask);
    assert.equal(rec.attempt_id, fresh.attempt.attempt_id);
    assert.equal(rec.observed_state, 'leased');
    assert.equal(rec.currently_applicable, false); // the subject is stale and the executor revoked
    assert.equal(rec.disposition, 'uncertain_effect');
    // Reconciling the stale attempt (executor revoked, subject stale) unblocks the new subject.
    const rc = ok('reconcile', '--task-id', oldTask);
    assert.deepEqual(rc.supersession, { old_fence: 2, new_fence: 3 });
    const cl = ok('claim', 'c1', '--task-id', newTask, '--lease-ms', '60000');
    assert.equal(cl.attempt.fence, 1);
    const cancelled = ok('cancel', '--task-id', newTask, '--reason', 'stop');
    assert.equal(cancelled.attempt.state, 'cancelled');
    const rec2 = ok('recovery', '--task-id', newTask, '--request-id', cancelled.request_id);
    assert.equal(rec2.disposition, 'uncertain_effect');
    assert.deepEqual(rec2.confirmed_effects, ['attempt_cancelled']);
    assert.equal(rec2.observed_state, 'cancelled');
    assert.equal(qual('c1').tasks.find((t: Doc) => t.step_id === 'obs').state, 'uncertain');
  });
});
