// A Hub killed with SIGKILL in the middle of claim/heartbeat/result traffic restarts with a consistent
// journal: SQLite integrity, no duplicate attempts, every committed outcome retained and replayable.
// The traffic comes from 16 clients at once, so the Hub group-commits several mutations per batch: an
// answered mutation must never be lost, whichever batch it was in when the Hub died.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import type { JsonValue } from '../../src/core/canonical/json.js';
import { agentscm, json } from '../support/cli.js';
import { adminSetup, checkpointArgs, PROFILE, REPO, startHub, type RunningHub } from '../support/hub.js';
import { claimBody, manyTasks, mutationBody, opPath, postOp, resultBody } from '../support/hub-http.js';

const REQUIREMENT = {
  version: 1,
  workflow: 'crash-test',
  steps: [{ id: 'say', skill: 'say', action_class: 'agent_assertion', required: true, depends_on: [], summary: 'say', criteria: [{ id: 'ok', text: 'ok', required: true, controller_only: false }], references: [] }],
};

let hub: RunningHub | undefined;
after(async () => {
  await hub?.stop();
});

test('SIGKILL mid-traffic: the restarted Hub has a consistent journal and retained outcomes', async () => {
  const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'agentscm-crash-'));
  const reqFile = path.join(dir, 'requirement.json');
  fs.writeFileSync(reqFile, JSON.stringify(REQUIREMENT));
  const s = adminSetup(reqFile);
  const cp = agentscm(checkpointArgs(s, 'c0'));
  assert.equal(cp.code, 0, cp.stderr);
  const revision = (json(cp) as { subject: { revision: string } }).subject.revision;
  const tasks = manyTasks(s.dataDir, REPO, PROFILE, revision, 200);
  const token = fs.readFileSync(s.tokenFile, 'utf8').trim();
  const p = opPath(REPO, PROFILE);

  hub = await startHub(s.dataDir);
  const url = hub.url;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  const committed: { body: JsonValue; answer: Record<string, unknown> }[] = [];
  let killed = false;
  let next = 0;
  const send = async (body: JsonValue) => {
    const a = await postOp(agent, url, p, token, body);
    if (a.status === 200) committed.push({ body, answer: a.body });
    return a;
  };
  const worker = async (w: number) => {
    while (!killed && next < tasks.length - 1) {
      const i = next++;
      const t = tasks[i]!;
      try {
        const c = await send(claimBody(t, `claim-${i}`));
        // A competing claim of the same task must lose.
        const rival = await postOp(agent, url, p, token, claimBody(t, `rival-${i}`));
        assert.equal(rival.status, 409);
        if (c.status !== 200) continue;
        await send(mutationBody('heartbeat', c.body.attempt, `hb-${i}`));
        await send(resultBody(t, c.body.attempt, `res-${i}-${w}`, 'alice', 'claude'));
      } catch (e) {
        if (!killed) throw e;
      }
    }
  };
  const killer = (async () => {
    while (committed.length < 60) await new Promise((r) => setTimeout(r, 5));
    killed = true;
    hub!.child.kill('SIGKILL');
  })();
  await Promise.all([...Array.from({ length: 16 }, (_, w) => worker(w)), killer]);
  agent.destroy();
  await new Promise<void>((r) => (hub!.child.exitCode !== null || hub!.child.signalCode !== null ? r() : hub!.child.once('exit', () => r())));
  assert.equal(hub.child.signalCode, 'SIGKILL');

  hub = await startHub(s.dataDir);
  const db = new Database(path.join(s.dataDir, 'journal.sqlite'), { readonly: true });
  try {
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    assert.deepEqual(db.prepare('SELECT task_id FROM attempts GROUP BY task_id HAVING COUNT(*) > 1').all(), []);
    assert.deepEqual(db.prepare('SELECT i.request_id FROM idempotency i LEFT JOIN attempts a USING (attempt_id) WHERE a.attempt_id IS NULL').all(), []);
    assert.deepEqual(db.prepare("SELECT a.attempt_id FROM attempts a LEFT JOIN assertions s USING (attempt_id) WHERE (a.state = 'finished') != (s.attempt_id IS NOT NULL)").all(), []);
    assert.deepEqual(db.prepare('SELECT task_id FROM attempts WHERE task_id NOT IN (SELECT task_id FROM tasks)').all(), []);
    const rows = (db.prepare('SELECT COUNT(*) AS n FROM idempotency').get() as { n: number }).n;
    assert.ok(rows >= committed.length, `${rows} retained requests, ${committed.length} answered`);
    // Each answered mutation's effect is in the journal as answered.
    const attemptOf = db.prepare('SELECT attempt_digest, state, fence FROM attempts WHERE attempt_id = ?');
    const retainedOf = db.prepare('SELECT kind, attempt_id FROM idempotency WHERE owner_id = ? AND agent_id = ? AND request_id = ?');
    for (const c of committed) {
      const body = c.body as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
      const a = c.answer.attempt as Record<string, unknown>;
      const requestId = body.operation === 'result' ? body.assertion.request_id : body.request_id;
      assert.deepEqual(retainedOf.get('alice', 'claude', requestId), { kind: body.operation, attempt_id: a.attempt_id }, requestId);
      const row = attemptOf.get(a.attempt_id) as { attempt_digest: string; state: string; fence: number } | undefined;
      assert.ok(row, `attempt of ${requestId} lost`);
      assert.equal(row.attempt_digest, a.attempt_digest);
      if (body.operation === 'result') assert.equal(row.state, 'finished');
    }
  } finally {
    db.close();
  }

  // Every answered request is retained: its identical retry returns the same outcome.
  const agent2 = new http.Agent({ keepAlive: true, maxSockets: 8 });
  try {
    for (const c of committed) {
      const a = await postOp(agent2, hub.url, p, token, c.body);
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.equal(a.body.replayed, true);
      assert.deepEqual({ ...a.body, replayed: c.answer.replayed }, c.answer);
    }
    // The restarted Hub dispatched nothing and still takes new work.
    const last = tasks[tasks.length - 1]!;
    const fresh = await postOp(agent2, hub.url, p, token, claimBody(last, 'after-restart'));
    assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
    assert.equal(fresh.body.attempt.fence, 1);
  } finally {
    agent2.destroy();
  }
});
