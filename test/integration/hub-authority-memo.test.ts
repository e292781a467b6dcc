// The Hub keeps token, profile and Change lookups in memory while the authority is unchanged. The
// operator's authority commands are other processes writing the same file while the Hub runs: each of
// their changes must count from the Hub's very next request, with the memo warm. Also the memo's rules
// in one process: another connection's commit, this connection's own write, and no use of the memo
// outside the stretch of code that revalidated it.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { Authority } from '../../src/core/authority/store.js';
import { agentscm, json } from '../support/cli.js';
import { adminSetup, checkpointArgs, PROFILE, REPO, startHub, tempDir } from '../support/hub.js';
import { claimBody, mutationBody, opPath, postOp } from '../support/hub-http.js';
import { subjectToJson, type Task } from '../../src/core/authority/plan.js';
import type { Subject } from '../../src/core/authority/types.js';
import type { JsonValue } from '../../src/core/canonical/json.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const REQUIREMENT = {
  version: 1,
  workflow: 'memo-test',
  steps: [{ id: 'say', skill: 'say', action_class: 'agent_assertion', required: true, depends_on: [], summary: 'say', criteria: [{ id: 'ok', text: 'ok', required: true, controller_only: false }], references: [] }],
};

const roots: string[] = [];
after(() => {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

function setup() {
  const dir = tempDir('memo-req');
  roots.push(dir);
  const req = path.join(dir, 'requirement.json');
  fs.writeFileSync(req, JSON.stringify(REQUIREMENT));
  const s = adminSetup(req);
  roots.push(s.root);
  return s;
}

/** Runs an agentscm command (with --json) as its own process and returns its document. */
const ok = (args: string[]): Doc => {
  const r = agentscm(args.includes('--json') ? args : [...args, '--json']);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stdout} ${r.stderr}`);
  return json<Doc>(r);
};

describe('Hub authority memo: changes by other processes count on the next request', () => {
  test('new Change version, new policy epoch, revoked token and a new token, each seen at once', async () => {
    const s = setup();
    const c1 = ok(checkpointArgs(s, 'c1'));
    const c2 = ok(checkpointArgs(s, 'c2'));
    const token = fs.readFileSync(s.tokenFile, 'utf8').trim();
    const hub = await startHub(s.dataDir);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const p = opPath(REPO, PROFILE);
    const post = (body: JsonValue, t = token) => postOp(agent, hub.url, p, t, body);
    const firstTask = async (subject: Subject): Promise<Task> => {
      const r = await post({ operation: 'requirements', subject: subjectToJson(subject) });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const t = r.body.tasks[0];
      return { task_id: t.task_id, task_digest: t.task_digest, subject } as Task;
    };
    try {
      // Warm: the token, the profile and both Changes' heads have been looked up.
      const t1 = await firstTask(c1.subject);
      const t2 = await firstTask(c2.subject);
      const a1 = await post(claimBody(t1, 'm-c1'));
      assert.equal(a1.status, 200, JSON.stringify(a1.body));
      const a2 = await post(claimBody(t2, 'm-c2'));
      assert.equal(a2.status, 200, JSON.stringify(a2.body));
      assert.equal((await post(mutationBody('heartbeat', a1.body.attempt, 'm-h1'))).status, 200);
      assert.equal((await post(mutationBody('heartbeat', a2.body.attempt, 'm-h2'))).status, 200);

      // A new version of c1 (another process): c1's subject is stale on the next request.
      ok(checkpointArgs(s, 'c1'));
      const stale = await post(mutationBody('heartbeat', a1.body.attempt, 'm-h1b'));
      assert.equal(stale.status, 409);
      assert.equal(stale.body.error.code, 'subject_not_current');
      // c2 is untouched and still current.
      assert.equal((await post(mutationBody('heartbeat', a2.body.attempt, 'm-h2b'))).status, 200);

      // A new policy epoch of the profile: every subject under the old epoch is stale at once.
      const target = path.join(s.root, 'requirement-2.json');
      fs.writeFileSync(target, JSON.stringify({ ...REQUIREMENT, workflow: 'memo-test-2' }));
      const added = ok(['authority', 'profile', 'add', '--data-dir', s.dataDir, '--repository', REPO, '--profile', PROFILE, '--target', 'main', '--requirement', target]);
      assert.equal(added.policy_epoch, 2);
      const epoch = await post(mutationBody('heartbeat', a2.body.attempt, 'm-h2c'));
      assert.equal(epoch.status, 409);
      assert.equal(epoch.body.error.code, 'subject_not_current');

      // A token issued now works on its first request; the revoked one fails on its next.
      const other = path.join(s.root, 'token-2');
      ok(['authority', 'token', 'issue', '--data-dir', s.dataDir, '--owner', 'alice', '--agent', 'claude', '--out', other]);
      const token2 = fs.readFileSync(other, 'utf8').trim();
      assert.equal((await post({ operation: 'capabilities' }, token2)).status, 200);
      assert.equal((await post({ operation: 'capabilities' })).status, 200);
      ok(['authority', 'token', 'revoke', '--data-dir', s.dataDir, '--token-id', s.tokenId]);
      const revoked = await post({ operation: 'capabilities' });
      assert.equal(revoked.status, 401);
      assert.equal(revoked.body.error.code, 'unauthenticated');
      // A mutation with the revoked token is refused too, and leaves nothing behind.
      const late = await post(mutationBody('heartbeat', a1.body.attempt, 'm-h1c'));
      assert.equal(late.status, 401);
      assert.equal((await post({ operation: 'capabilities' }, token2)).status, 200);
    } finally {
      agent.destroy();
      await hub.stop();
    }
  });
});

describe('Authority memo rules (one process, real SQLite)', () => {
  /** A checkpointed Change, and two connections to its authority: the Hub's (memo on, revalidated now) and an operator's. */
  const twoConnections = () => {
    const s = setup();
    ok(checkpointArgs(s, 'c1'));
    const token = fs.readFileSync(s.tokenFile, 'utf8').trim();
    const hub = Authority.open(s.dataDir);
    const operator = Authority.open(s.dataDir);
    hub.enableMemo();
    hub.revalidate();
    return { s, token, hub, operator };
  };

  test('another connection\'s commit and this connection\'s own write both drop the memo', () => {
    const { s, token, hub, operator } = twoConnections();
    try {
      assert.equal(hub.authenticate(token)?.owner_id, 'alice');
      assert.equal(hub.currentChangeVersion(REPO, 'c1')?.change_version, 1);
      // Another connection commits: the next revalidation sees it.
      operator.recordChangeVersion(REPO, 'c1', 'b'.repeat(64));
      hub.revalidate();
      assert.equal(hub.currentChangeVersion(REPO, 'c1')?.change_version, 2);
      // This connection writes (data_version does not move for its own commits).
      const t2 = hub.issueToken('bob', 'b');
      hub.revalidate();
      assert.equal(hub.authenticate(t2.token)?.owner_id, 'bob');
      hub.revokeToken(t2.token_id);
      hub.revalidate();
      assert.equal(hub.authenticate(t2.token), undefined);
      operator.revokeToken(s.tokenId);
      hub.revalidate();
      assert.equal(hub.authenticate(token), undefined);
    } finally {
      hub.close();
      operator.close();
    }
  });

  test('every check asks SQLite (PRAGMA data_version): another connection\'s commit and this connection\'s own write are both seen', () => {
    const { s, token, hub, operator } = twoConnections();
    try {
      assert.ok(hub.authenticate(token));
      hub.revalidate();
      const before = hub.dataVersionChecks;
      for (let i = 0; i < 5; i++) hub.revalidate();
      assert.equal(hub.dataVersionChecks, before + 5);
      // Another process's kind of change: a commit on another connection.
      operator.revokeToken(s.tokenId);
      hub.revalidate();
      assert.equal(hub.authenticate(token), undefined);
      // A commit that changes no row of interest still counts as a change.
      operator.recordChangeVersion(REPO, 'c1', 'c'.repeat(64));
      hub.revalidate();
      assert.equal(hub.currentChangeVersion(REPO, 'c1')?.revision, 'c'.repeat(64));
      // This connection's own write: total_changes() moves (data_version does not for its own commits).
      const t2 = hub.issueToken('carol', 'c');
      hub.revalidate();
      assert.equal(hub.authenticate(t2.token)?.owner_id, 'carol');
    } finally {
      hub.close();
      operator.close();
    }
  });

  test('enrollment, current registration and grant lookups: revocation by another connection or by this one counts at once', () => {
    const { s, hub, operator } = twoConnections();
    try {
      const input = { repository: REPO, profile: PROFILE, step_id: 'say', executor_id: 'x1', public_key: 'ab'.repeat(32), verification_key_id: 'k1' };
      const e1 = operator.enroll(input);
      hub.revalidate();
      // Warm: each lookup answered once, then from the memo.
      for (let i = 0; i < 2; i++) {
        assert.equal(hub.getEnrollment(e1.registration_id)?.revoked_at, null);
        assert.equal(hub.currentRegistration(REPO, PROFILE, 'say', 'x1')?.registration_id, e1.registration_id);
        assert.equal(hub.tokenActive(s.tokenId), true);
        assert.equal(hub.getEnrollment('reg-none'), undefined);
      }
      // Another connection revokes (as `authority revoke-enrollment` and `authority token revoke` do).
      operator.revokeEnrollment(e1.registration_id);
      operator.revokeToken(s.tokenId);
      hub.revalidate();
      assert.notEqual(hub.getEnrollment(e1.registration_id)?.revoked_at, null);
      assert.equal(hub.currentRegistration(REPO, PROFILE, 'say', 'x1'), undefined);
      assert.equal(hub.tokenActive(s.tokenId), false);
      // A new epoch by another connection: the absent answer is not kept past the commit.
      const e2 = operator.enroll(input);
      hub.revalidate();
      assert.equal(hub.currentRegistration(REPO, PROFILE, 'say', 'x1')?.registration_id, e2.registration_id);
      assert.equal(hub.getEnrollment(e2.registration_id)?.registration_epoch, 2);
      // This connection's own write within the same stretch (no revalidate between): seen at once.
      hub.revokeEnrollment(e2.registration_id);
      assert.notEqual(hub.getEnrollment(e2.registration_id)?.revoked_at, null);
      assert.equal(hub.currentRegistration(REPO, PROFILE, 'say', 'x1'), undefined);
    } finally {
      hub.close();
      operator.close();
    }
  });

  test('outside the stretch that revalidated, lookups go to SQLite', async () => {
    const { s, token, hub, operator } = twoConnections();
    try {
      assert.ok(hub.authenticate(token));
      assert.equal(hub.getProfile(REPO, PROFILE)?.policy_epoch, 1);
      await new Promise((r) => setImmediate(r));
      // No revalidate() since the last turn: the memo must not answer.
      operator.revokeToken(s.tokenId);
      assert.equal(hub.authenticate(token), undefined);
      operator.recordChangeVersion(REPO, 'c1', 'c'.repeat(64));
      assert.equal(hub.currentChangeVersion(REPO, 'c1')?.change_version, 2);
    } finally {
      hub.close();
      operator.close();
    }
  });
});
