// Group commit of the Hub's journal mutations (src/hub/batch.ts), on a real authority and a real
// journal in a temp data dir: several mutations in one write transaction, each in its own savepoint,
// answered only after the one COMMIT and the WAL sync.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Task } from '../../src/core/authority/plan.js';
import type { JsonValue } from '../../src/core/canonical/json.js';
import { MutationRequest } from '../../src/core/contract/mutations.js';
import { checkpoint } from '../../src/core/native/checkpoint.js';
import { GroupCommit, runBatch, type Outcome } from '../../src/hub/batch.js';
import { HubError } from '../../src/hub/errors.js';
import { handleMutation } from '../../src/hub/mutations.js';
import type { Scope } from '../../src/hub/subjects.js';
import { HubState } from '../../src/hub/server.js';
import { claimBody, manyTasks, mutationBody, resultBody } from '../support/hub-http.js';
import { exampleAuthority } from '../../scripts/example-authority.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const REQUIREMENT = {
  version: 1,
  workflow: 'group-commit',
  steps: [{ id: 'say', skill: 'say', action_class: 'agent_assertion', required: true, depends_on: [], summary: 'say', criteria: [{ id: 'ok', text: 'ok', required: true, controller_only: false }], references: [] }],
};

describe('group commit of journal mutations', () => {
  let root: string;
  let state: HubState;
  let tasks: Task[];
  let scope: Scope;
  let next = 0;
  const task = () => tasks[next++]!;

  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-group-commit-'));
    const dataDir = path.join(root, 'data');
    const { token } = exampleAuthority(dataDir, { owner: 'alice', agent: 'claude' }, Buffer.from(JSON.stringify(REQUIREMENT)));
    const ws = path.join(root, 'ws');
    fs.cpSync(path.join(ROOT, 'examples', 'workspace'), ws, { recursive: true });
    const cp = checkpoint(dataDir, { repository: 'acme/demo', profile: 'default', change_id: 'c0', workspace: ws });
    tasks = manyTasks(dataDir, 'acme/demo', 'default', cp.subject.revision, 40);
    state = new HubState(dataDir);
    scope = { repository: 'acme/demo', profile: 'default', actor: state.authority.authenticate(token)! };
  });
  after(() => {
    state.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** One mutation as the HTTP facade runs it: the zod-checked request and its raw document. */
  const mutation = (body: JsonValue) => (): JsonValue => {
    return handleMutation(state.mutationContext([]), scope, MutationRequest.parse(body), body);
  };
  const db = () => state.writableJournal().db;
  const value = (o: Outcome): Doc => {
    assert.ok(o.ok, `expected success, got ${o.ok ? '' : String(o.error)}`);
    return o.value as Doc;
  };
  const failure = (o: Outcome): HubError => {
    assert.ok(!o.ok, 'expected a refusal');
    assert.ok(o.error instanceof HubError, String(o.error));
    return o.error;
  };
  const count = (sql: string, ...args: unknown[]): number => (db().prepare(sql).get(...args) as { n: number }).n;
  const retained = (requestId: string): number => count('SELECT COUNT(*) AS n FROM idempotency WHERE request_id = ?', requestId);

  test('two conflicting claims of one task in one batch: exactly one wins', () => {
    const t = task();
    const out = runBatch(db(), [mutation(claimBody(t, 'gc-a')), mutation(claimBody(t, 'gc-b'))]);
    const won = out.filter((o) => o.ok);
    assert.equal(won.length, 1);
    assert.equal(value(out[0]!).attempt.fence, 1);
    const lost = failure(out[1]!);
    assert.equal(lost.status, 409);
    assert.equal(lost.code, 'attempt_in_progress');
    assert.equal(count('SELECT COUNT(*) AS n FROM attempts WHERE task_id = ?', t.task_id), 1);
    assert.equal(retained('gc-a'), 1);
    assert.equal(retained('gc-b'), 0);
  });

  test('a failing mutation rolls back only its own savepoint', () => {
    const [t1, t2, t3] = [task(), task(), task()];
    const first = runBatch(db(), [mutation(claimBody(t1, 'gc-c1'))]);
    const attempt = value(first[0]!).attempt;
    const out = runBatch(db(), [
      mutation(claimBody(t2, 'gc-c2')),
      // A stale fence is refused inside its transaction.
      mutation(mutationBody('heartbeat', { ...attempt, fence: attempt.fence + 1 }, 'gc-hb-stale')),
      // A mutation that has written a row when it fails: its row must go, nobody else's.
      () => {
        db().prepare("INSERT INTO idempotency (owner_id, agent_id, request_id, kind, request_digest, task_id, attempt_id, response, created_at) VALUES ('alice', 'claude', 'gc-partial', 'heartbeat', 'x', ?, NULL, x'7b7d', 0)").run(t3.task_id);
        throw new HubError(409, 'late_refusal', 'refused after a write');
      },
      mutation(mutationBody('heartbeat', attempt, 'gc-hb')),
      mutation(claimBody(t3, 'gc-c3')),
    ]);
    assert.equal(value(out[0]!).attempt.task_id, t2.task_id);
    assert.equal(failure(out[1]!).code, 'stale_fence');
    assert.equal(failure(out[2]!).code, 'late_refusal');
    assert.equal(value(out[3]!).operation, 'heartbeat');
    assert.equal(value(out[4]!).attempt.task_id, t3.task_id);
    for (const id of ['gc-c1', 'gc-c2', 'gc-hb', 'gc-c3']) assert.equal(retained(id), 1, id);
    for (const id of ['gc-hb-stale', 'gc-partial']) assert.equal(retained(id), 0, id);
  });

  test('identical retries in one batch return the same retained outcome; changed bytes conflict', () => {
    const t = task();
    const body = claimBody(t, 'gc-retry');
    const out = runBatch(db(), [mutation(body), mutation(body), mutation(claimBody(t, 'gc-retry', 1000))]);
    const a = value(out[0]!);
    const b = value(out[1]!);
    assert.equal(a.replayed, false);
    assert.equal(b.replayed, true);
    assert.deepEqual({ ...b, replayed: false }, a);
    assert.equal(failure(out[2]!).code, 'request_id_conflict');
    assert.equal(count('SELECT COUNT(*) AS n FROM attempts WHERE task_id = ?', t.task_id), 1);
  });

  test('a failed COMMIT answers every mutation of the batch as an error and keeps none of them', () => {
    const [t1, t2] = [task(), task()];
    const out = runBatch(db(), [
      mutation(claimBody(t1, 'gc-lost-1')),
      // A real COMMIT failure: a foreign key violation whose check is deferred to COMMIT.
      () => {
        db().pragma('defer_foreign_keys = ON');
        db().prepare("INSERT INTO assertions (request_id, owner_id, agent_id, task_id, attempt_id, fence, trust_class, outcome, body, created_at) VALUES ('gc-orphan', 'alice', 'claude', 'no-such-task', 'no-such-attempt', 1, 'agent_assertion', 'failed', x'7b7d', 0)").run();
        return null;
      },
      mutation(claimBody(t2, 'gc-lost-2')),
    ]);
    assert.equal(out.length, 3);
    for (const o of out) {
      const e = failure(o);
      assert.equal(e.status, 503);
      assert.equal(e.code, 'store_unavailable');
    }
    assert.equal(db().inTransaction, false);
    assert.equal(retained('gc-lost-1') + retained('gc-lost-2'), 0);
    assert.equal(count('SELECT COUNT(*) AS n FROM attempts WHERE task_id IN (?, ?)', t1.task_id, t2.task_id), 0);
    assert.equal(count("SELECT COUNT(*) AS n FROM assertions WHERE request_id = 'gc-orphan'"), 0);
    // The journal keeps working: the same claims succeed in the next batch.
    const again = runBatch(db(), [mutation(claimBody(t1, 'gc-lost-1')), mutation(claimBody(t2, 'gc-lost-2'))]);
    for (const o of again) assert.equal(value(o).replayed, false);
  });

  test('the group commit answers a batch only after its WAL sync, and holds back reads until then', async () => {
    const gc = new GroupCommit(db, state.authority.db);
    const t = task();
    const c = await new Promise<Doc>((resolve) => gc.submit(mutation(claimBody(t, 'gc-gc-claim')), (o) => resolve(value(o))));
    assert.equal(gc.batches, 1);
    assert.ok(gc.syncs >= 1, 'answered before any WAL sync completed');

    const order: string[] = [];
    const answers: Outcome[] = [];
    const done = new Promise<void>((resolve) => {
      const t2 = task();
      const bodies = [claimBody(t2, 'gc-gc-1'), claimBody(t2, 'gc-gc-2'), mutationBody('heartbeat', c.attempt, 'gc-gc-hb'), resultBody(t, c.attempt, 'gc-gc-res', 'alice', 'claude')];
      for (const b of bodies) {
        gc.submit(mutation(b), (o) => {
          answers.push(o);
          order.push(`mutation@${gc.syncs}`);
          if (answers.length === bodies.length) resolve();
        });
      }
      // Queued right after the batch ran (setImmediate after its flush): the batch is committed but
      // its sync is still in flight, so this read must wait for it.
      const syncsBefore = gc.syncs;
      setImmediate(() => gc.whenDurable(() => order.push(`read@${gc.syncs > syncsBefore ? 'synced' : 'unsynced'}`)));
    });
    await done;
    await new Promise((r) => setImmediate(r));
    assert.equal(gc.batches, 2, 'the four mutations of one turn ran as one batch');
    assert.equal(answers.filter((o) => o.ok).length, 3, 'one of the two claims of one task wins');
    assert.equal(failure(answers[1]!).code, 'attempt_in_progress');
    assert.equal(value(answers[3]!).attempt.state, 'finished');
    assert.deepEqual(order.slice(-1), ['read@synced']);
    await gc.close();
    // After close (or a failed sync) nothing more is answered as done.
    const refused = await new Promise<Outcome>((resolve) => gc.submit(mutation(claimBody(task(), 'gc-after-close')), resolve));
    assert.equal(failure(refused).code, 'store_unavailable');
    assert.equal(retained('gc-after-close'), 0);
  });
});
