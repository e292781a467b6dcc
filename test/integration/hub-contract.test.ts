// The rest of the task contract over a real Hub (`hub serve`, real SQLite, real HTTP): the
// reconcile_collector_finalization operation, every unresolved recovery effect and the unknown observed
// state, the 32-transfer bound checked first, a revocation by another process during finalization,
// the one assertion bound (CLI and Hub), an older Hub's schema_mismatch, and the prior-subject scan at
// exactly 4,096 retained task identities.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { subjectToJson } from '../../src/core/authority/plan.js';
import { assertionWireBytes, validateAssertion, ASSERTION_MAX_BYTES } from '../../src/core/contract/assertion.js';
import { PRIOR_SCAN_LIMIT } from '../../src/core/contract/mutations.js';
import { openJournalForWrite } from '../../src/hub/journal.js';
import { agentscm, AGENTSCM_BIN, json, type RunResult } from '../support/cli.js';
import { opPath, postOp } from '../support/hub-http.js';
import { adminSetup, callArgs, checkpointArgs, PROFILE, REPO, startHub, tempDir } from '../support/hub.js';
import { claimCollector, retainAll, signedTransfer, transferRig, upload, type TransferRig } from '../support/transfers.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The CLI as a child this process does not wait for synchronously (its loopback server must answer). */
function runAsync(args: string[]): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [AGENTSCM_BIN, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

const hubArgs = (rig: TransferRig) => ['--data-dir', rig.dataDir, '--endpoint', rig.hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', rig.tokenFile, '--json'];
const recovery = (rig: TransferRig, taskId: string, requestId: string | null = null) =>
  rig.op({ operation: 'recovery', subject: null, task_id: taskId, attempt_id: null, request_id: requestId });

describe('reconcile_collector_finalization and recovery effects', () => {
  const rigs: TransferRig[] = [];
  after(async () => {
    for (const r of rigs) await r.stop();
  });

  test('capabilities lists it; recovery walks custody, acceptance and confirmation; reconcile creates, then answers the existing receipt', async () => {
    const rig = await transferRig(2);
    rigs.push(rig);
    const caps = json<Doc>(agentscm(['agent-task', 'capabilities', ...hubArgs(rig)]));
    assert.ok(caps.operations.includes('reconcile_collector_finalization'), JSON.stringify(caps.operations));

    const [t0, t1] = rig.tasks;
    // Claimed, no transfer yet: the run may go on and the executor host may hold its container.
    const c0 = await claimCollector(rig, t0!, 1);
    let rec = (await recovery(rig, t0!.task_id, 'claim-s00-1')).body;
    assert.equal(rec.observed_state, 'leased');
    assert.equal(rec.disposition, 'uncertain_effect');
    assert.deepEqual(rec.confirmed_effects, ['claim_recorded']);
    assert.deepEqual(rec.unresolved_effects, ['execution_may_still_run', 'resource_custody_unknown']);
    assert.deepEqual(rec.permitted_actions, ['inspect', 'stop', 'reconcile']);

    // Transfer retained: custody confirmed released (the record shows the container removed), the
    // execution finished, but no receipt accepts the result yet.
    const bytes0 = signedTransfer(rig, c0.descriptor, 1000, 'up-0');
    assert.equal((await upload(rig, bytes0)).status, 200);
    // An exact upload retry answers the retained view (the one read of a transfer's column after its bytes).
    const retry = await upload(rig, bytes0);
    assert.equal(retry.status, 200);
    assert.equal(retry.body.replayed, true);
    assert.equal(retry.body.length, bytes0.length);
    rec = (await recovery(rig, t0!.task_id, 'claim-s00-1')).body;
    assert.equal(rec.observed_state, 'finished');
    assert.deepEqual(rec.confirmed_effects, ['claim_recorded', 'transfer_retained']);
    assert.deepEqual(rec.unresolved_effects, ['result_acceptance_unknown']);
    assert.deepEqual(rec.permitted_actions, ['inspect', 'stop', 'reconcile_collector_finalization']);

    // Not every required task has evidence: refused, nothing created.
    const early = agentscm(['agent-task', 'reconcile-finalization', 'c1', ...hubArgs(rig), '--request-id', 'rf-early']);
    assert.equal(early.code, 7, early.stdout + early.stderr);
    assert.match(early.stderr + early.stdout, /NOT_READY/);

    await retainAll(rig, 1000, [t1!]);
    const created = agentscm(['agent-task', 'reconcile-finalization', 'c1', ...hubArgs(rig), '--request-id', 'rf-1']);
    assert.equal(created.code, 0, created.stdout + created.stderr);
    const a = json<Doc>(created);
    assert.equal(a.operation, 'reconcile_collector_finalization');
    assert.equal(a.finalization, 'created');
    assert.equal(a.transfers.length, 2);

    // The identical request answers its retained outcome; a new one finds the live receipt.
    const replay = json<Doc>(agentscm(['agent-task', 'reconcile-finalization', 'c1', ...hubArgs(rig), '--request-id', 'rf-1']));
    assert.equal(replay.replayed, true);
    assert.equal(replay.receipt_digest, a.receipt_digest);
    const existing = json<Doc>(agentscm(['agent-task', 'reconcile-finalization', 'c1', ...hubArgs(rig), '--request-id', 'rf-2']));
    assert.equal(existing.finalization, 'existing');
    assert.equal(existing.receipt_digest, a.receipt_digest);
    assert.deepEqual(existing.transfers, a.transfers);
    const j = new Database(path.join(rig.dataDir, 'journal.sqlite'), { readonly: true });
    try {
      assert.equal((j.prepare('SELECT COUNT(*) AS n FROM receipts').get() as Doc).n, 1);
    } finally {
      j.close();
    }

    // Accepted now: confirmed, nothing unresolved; the finalization request itself reads as receipt_created.
    rec = (await recovery(rig, t0!.task_id, 'claim-s00-1')).body;
    assert.equal(rec.disposition, 'confirmed');
    assert.deepEqual(rec.unresolved_effects, []);
    rec = (await recovery(rig, t0!.task_id, 'rf-1')).body;
    assert.equal(rec.request_kind, 'reconcile_collector_finalization');
    assert.deepEqual(rec.confirmed_effects, ['receipt_created']);
    assert.equal(rec.disposition, 'confirmed');
    const q = agentscm(['agent-task', 'qualification', 'c1', ...hubArgs(rig)]);
    assert.equal(q.code, 0, q.stdout);
    assert.equal(json<Doc>(q).receipt_digest, a.receipt_digest);
  });

  test('a committed request whose attempt the journal no longer holds is observed unknown', async () => {
    const rig = await transferRig(1);
    rigs.push(rig);
    const t = rig.tasks[0]!;
    const c = await claimCollector(rig, t, 1);
    const j = new Database(path.join(rig.dataDir, 'journal.sqlite'));
    try {
      j.pragma('foreign_keys = OFF');
      j.prepare('DELETE FROM collector_attempts WHERE attempt_id = ?').run(c.attempt.attempt_id);
      j.prepare('DELETE FROM attempts WHERE attempt_id = ?').run(c.attempt.attempt_id);
    } finally {
      j.close();
    }
    const r = await recovery(rig, t.task_id, 'claim-s00-1');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.observed_state, 'unknown');
    assert.equal(r.body.disposition, 'uncertain_effect');
    assert.equal(r.body.attempt_id, c.attempt.attempt_id);
    assert.equal(r.body.attempt, null);
    assert.deepEqual(r.body.unresolved_effects, ['execution_may_still_run']);
    // Unknown grants no retry and no fresh attempt.
    assert.deepEqual(r.body.permitted_actions, ['inspect', 'stop']);
  });

  test('a replaced collector attempt keeps custody unresolved: no fresh attempt is offered', async () => {
    const rig = await transferRig(1);
    rigs.push(rig);
    const t = rig.tasks[0]!;
    const c = await claimCollector(rig, t, 1);
    const att = c.attempt;
    const rr = await rig.op({
      operation: 'reconcile',
      request_id: 'rc-1',
      task_id: t.task_id,
      task_digest: t.task_digest,
      attempt_id: att.attempt_id,
      attempt_digest: att.attempt_digest,
      execution_operation_id: att.execution_operation_id,
      executor_id: 'collector-1',
      fence: att.fence,
      reason: 'host lost',
    });
    assert.equal(rr.status, 200, JSON.stringify(rr.body));
    const rec = (await recovery(rig, t.task_id, 'rc-1')).body;
    assert.equal(rec.observed_state, 'replaced');
    assert.deepEqual(rec.unresolved_effects, ['execution_may_still_run', 'resource_custody_unknown']);
    assert.ok(!rec.permitted_actions.includes('prepare_fresh_attempt'));
  });

  test('33 required collector tasks: finalization refuses on the 32 bound before looking at any evidence', async () => {
    const rig = await transferRig(33);
    rigs.push(rig);
    for (const op of ['collector_finalize', 'reconcile_collector_finalization']) {
      const r = await rig.op({ operation: op, request_id: `big-${op}`, subject: subjectToJson(rig.subject) });
      assert.equal(r.status, 409);
      assert.equal(r.body.error.code, 'not_ready');
      assert.match(r.body.error.message, /too_many_transfers/);
    }
  });

  test('a revocation by another process during finalization is serialized with it: the batch waits, then refuses', async () => {
    const rig = await transferRig(1);
    rigs.push(rig);
    await retainAll(rig, 1000);
    const auth = new Database(path.join(rig.dataDir, 'authority.sqlite'));
    try {
      auth.pragma('busy_timeout = 5000');
      // The operator's revocation is in flight (its write transaction holds the authority's writer lock)...
      auth.exec('BEGIN IMMEDIATE');
      auth.prepare('INSERT INTO enrollment_revocations (registration_id, revoked_at) VALUES (?, ?)').run(rig.registrations.get('s00')!, Date.now());
      const t0 = performance.now();
      let answered: number | undefined;
      const pending = rig.op({ operation: 'collector_finalize', request_id: 'fin-during', subject: subjectToJson(rig.subject) }).then((r) => {
        answered = performance.now();
        return r;
      });
      await new Promise((r) => setTimeout(r, 600));
      // ...when the finalization arrives: it waits for the reservation instead of deciding on the old snapshot.
      assert.equal(answered, undefined, 'finalization answered while a revocation was in flight');
      auth.exec('COMMIT');
      const r = await pending;
      assert.ok(answered! - t0 >= 550);
      assert.equal(r.status, 409, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'authorization_changed');
    } finally {
      if (auth.inTransaction) auth.exec('ROLLBACK');
      auth.close();
    }
    const j = new Database(path.join(rig.dataDir, 'journal.sqlite'), { readonly: true });
    try {
      assert.equal((j.prepare('SELECT COUNT(*) AS n FROM receipts').get() as Doc).n, 0);
    } finally {
      j.close();
    }
  });
});

describe('one assertion bound for the CLI and the Hub', () => {
  const REQUIREMENT = {
    version: 1,
    workflow: 'bound-test',
    steps: [
      {
        id: 'say',
        skill: 'say',
        action_class: 'agent_assertion',
        required: true,
        depends_on: [],
        summary: 'say',
        criteria: ['a1', 'a2', 'a3'].map((id) => ({ id, text: id, required: true, controller_only: false })),
        references: [],
      },
    ],
  };

  test(`an assertion of exactly ${ASSERTION_MAX_BYTES} bytes is accepted by both; one byte over is refused by both with the same code`, async () => {
    const reqFile = path.join(tempDir('bound-req'), 'requirement.json');
    fs.writeFileSync(reqFile, JSON.stringify(REQUIREMENT));
    const s = adminSetup(reqFile);
    for (const ch of ['c1', 'c2']) assert.equal(agentscm(checkpointArgs(s, ch)).code, 0);
    const hub = await startHub(s.dataDir);
    const agent = new http.Agent({ keepAlive: true });
    try {
      const token = fs.readFileSync(s.tokenFile, 'utf8').trim();
      const claim = (ch: string) => {
        const r = agentscm(callArgs(s, hub.url, 'claim', ch, '--step', 'say', '--lease-ms', '600000', '--request-id', `claim-${ch}`));
        assert.equal(r.code, 0, r.stderr);
        return json<Doc>(r).attempt as Doc;
      };
      // The assertion in declared field order, compact: its file bytes are the bytes the bound applies to.
      const sized = (a: Doc, requestId: string, bytes: number): Doc => {
        const doc = (findings: string[]): Doc => ({
          version: 1,
          task_id: a.task_id,
          task_digest: a.task_digest,
          attempt_id: a.attempt_id,
          attempt_digest: a.attempt_digest,
          request_id: requestId,
          execution_operation_id: a.execution_operation_id,
          agent: { owner_id: 'alice', agent_id: 'claude' },
          executor: null,
          fence: a.fence,
          trust_class: 'agent_assertion',
          outcome: 'passed',
          criteria: ['a1', 'a2', 'a3'].map((c, i) => ({ criterion: c, outcome: 'passed', findings: findings.slice(i * 32, i * 32 + 32), evidence_digests: [] })),
          executor_provenance: null,
        });
        const findings: string[] = [];
        while (JSON.stringify(doc(findings)).length + 4099 < bytes) findings.push('x'.repeat(4096));
        findings.push('');
        findings[findings.length - 1] = 'x'.repeat(bytes - JSON.stringify(doc(findings)).length);
        const d = doc(findings);
        assert.equal(JSON.stringify(d).length, bytes);
        assert.equal(assertionWireBytes(validateAssertion(d)).length, bytes);
        return d;
      };
      const write = (name: string, d: Doc) => {
        const f = path.join(s.root, name);
        fs.writeFileSync(f, JSON.stringify(d));
        return f;
      };
      const countAssertions = () => {
        const j = new Database(path.join(s.dataDir, 'journal.sqlite'), { readonly: true });
        try {
          return (j.prepare('SELECT COUNT(*) AS n FROM assertions').get() as Doc).n as number;
        } finally {
          j.close();
        }
      };

      // At the bound: the CLI sends it and the Hub retains it.
      const a1 = claim('c1');
      const atBound = agentscm(callArgs(s, hub.url, 'result', '--assertion', write('at.json', sized(a1, 'r-at', ASSERTION_MAX_BYTES))));
      assert.equal(atBound.code, 0, atBound.stdout + atBound.stderr);
      assert.equal(countAssertions(), 1);

      // One byte over: the CLI refuses before sending (exit 3, ASSERTION_TOO_LARGE)...
      const a2 = claim('c2');
      const over = sized(a2, 'r-over', ASSERTION_MAX_BYTES + 1);
      const cli = agentscm(callArgs(s, hub.url, 'result', '--assertion', write('over.json', over)));
      assert.equal(cli.code, 3, cli.stdout + cli.stderr);
      assert.equal(json<Doc>(cli).error.code, 'ASSERTION_TOO_LARGE');
      assert.equal(countAssertions(), 1);
      // ...and the Hub, sent the same assertion directly, refuses it with the same code (which the CLI
      // maps to exit 3, ASSERTION_TOO_LARGE).
      const hubAnswer = await postOp(agent, hub.url, opPath(REPO, PROFILE), token, { operation: 'result', assertion: over });
      assert.equal(hubAnswer.status, 413, JSON.stringify(hubAnswer.body).slice(0, 300));
      assert.equal(hubAnswer.body.error.code, 'assertion_too_large');
      assert.equal(countAssertions(), 1);
      // The same assertion at the bound is still accepted by the Hub directly (the body bound is not lower).
      const again = await postOp(agent, hub.url, opPath(REPO, PROFILE), token, { operation: 'result', assertion: sized(a2, 'r-direct', ASSERTION_MAX_BYTES) });
      assert.equal(again.status, 200, JSON.stringify(again.body).slice(0, 300));
      // Other operations keep the 64 KiB body bound.
      const big = await postOp(agent, hub.url, opPath(REPO, PROFILE), token, { operation: 'capabilities', pad: 'x'.repeat(70_000) });
      assert.equal(big.status, 413);
    } finally {
      agent.destroy();
      await hub.stop();
    }
  });
});

describe("an older Hub's schema_mismatch", () => {
  test('without server_schema_versions and action it is still a schema mismatch: exit 11, not 6', async () => {
    const s = adminSetup();
    assert.equal(agentscm(checkpointArgs(s)).code, 0);
    const token = fs.readFileSync(s.tokenFile, 'utf8').trim();
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.headers.authorization !== `Bearer ${token}`) {
          res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"code":"unauthenticated","message":"no"}}');
          return;
        }
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        seen.push(body.operation);
        const doc = { status: 'schema_mismatch', capability: 'agentscm.agent-workflow-tasks/v1', required_schema_version: 1, supported_schema_versions: body.supported_schema_versions ?? [body.expected_schema_version] };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (const op of [['instructions', 'c1', '--step', 'check', '--schema-version', '2'], ['reference', 'c1', '--step', 'check', '--name', 'check-guide', '--schema-version', '2']]) {
        const r = await runAsync(callArgs(s, url, op[0]!, ...op.slice(1)));
        assert.equal(r.code, 11, `${op[0]}: ${r.stdout} ${r.stderr}`);
        assert.equal(json<Doc>(r).error.code, 'SCHEMA_MISMATCH');
      }
      assert.deepEqual(seen, ['instructions', 'reference']);
    } finally {
      server.close();
    }
  });
});

describe('the prior-subject scan bound', () => {
  test(`an unresolved older task is found at exactly ${PRIOR_SCAN_LIMIT} retained task identities and not one past`, () => {
    const root = tempDir('prior-scan');
    fs.chmodSync(root, 0o700);
    const j = openJournalForWrite(root);
    try {
      const insTask = j.db.prepare(
        `INSERT INTO tasks (task_id, task_digest, repository, profile, change_id, change_version, policy_epoch, step_id, canonical, created_at) VALUES (?, ?, 'acme/demo', 'default', 'c1', ?, 1, 'check', x'00', ?)`,
      );
      const insAttempt = j.db.prepare(
        `INSERT INTO attempts (attempt_id, task_id, attempt_digest, claim_request_id, execution_operation_id, owner_id, agent_id, kind, fence, lease_ms, lease_expires_at, state, canonical, created_at, updated_at)
         VALUES (?, ?, ?, 'r', 'e', 'alice', 'claude', 'agent', 1, 1000, 0, ?, x'00', ?, ?)`,
      );
      const add = (i: number, state: string) => {
        insTask.run(`t${i}`, 'd'.repeat(64), i + 1, i);
        insAttempt.run(`a${i}`, `t${i}`, 'd'.repeat(64), state, i, i);
      };
      // The oldest retained task is unresolved (its lease expired); every newer one finished.
      j.db.transaction(() => {
        add(0, 'leased');
        for (let i = 1; i < PRIOR_SCAN_LIMIT; i++) add(i, 'finished');
      })();
      const subject = { repository: 'acme/demo', profile: 'default', change_id: 'c1' } as Parameters<typeof j.priorUnresolvedTask>[0];
      // 4,096 older identities besides the claimed task: the oldest is inside the scan.
      assert.equal(j.priorUnresolvedTask(subject, 'check', 'now', PRIOR_SCAN_LIMIT), 't0');
      // One more newer identity pushes it out of the bounded scan.
      add(PRIOR_SCAN_LIMIT, 'finished');
      assert.equal(j.priorUnresolvedTask(subject, 'check', 'now', PRIOR_SCAN_LIMIT), undefined);
      // Excluding the claimed task's own identity does not count against the bound.
      assert.equal(j.priorUnresolvedTask(subject, 'check', `t${PRIOR_SCAN_LIMIT}`, PRIOR_SCAN_LIMIT), 't0');
    } finally {
      j.close();
    }
  });
});
