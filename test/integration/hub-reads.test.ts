import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { agentscm, json, REPO_ROOT } from '../support/cli.js';
import { adminSetup, callArgs, checkpointArgs, PROFILE, REPO, startHub, type RunningHub, type Setup } from '../support/hub.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const OP_PATH = `/v1/hub/workspace/repositories/${encodeURIComponent(REPO)}/profiles/${PROFILE}/agent-tasks`;

function raw(url: string, opts: { method?: string; path?: string; token?: string; body?: string | Buffer; headers?: Record<string, string> }): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...(opts.headers ?? {}) };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      headers['content-length'] ??= Buffer.byteLength(opts.body);
    }
    // A fresh connection per request: a pooled one may have idled past the Hub's keep-alive timeout.
    const req = http.request({ host: u.hostname, port: u.port, path: opts.path ?? OP_PATH, method: opts.method ?? 'POST', headers, agent: false }, (res) => {
      let b = '';
      res.on('data', (c: Buffer) => (b += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

describe('reference Hub: read operations end to end', () => {
  let s: Setup;
  let hub: RunningHub;
  let token: string;
  let subject: Doc;

  before(async () => {
    s = adminSetup();
    const c = agentscm(checkpointArgs(s));
    assert.equal(c.code, 0, c.stderr);
    subject = json<Doc>(c).subject;
    hub = await startHub(s.dataDir);
    token = fs.readFileSync(s.tokenFile, 'utf8').trim();
  });
  after(async () => {
    await hub.stop();
  });

  test('the token file is owner-private and the URL is the first stdout line', () => {
    assert.equal(fs.statSync(s.tokenFile).mode & 0o777, 0o600);
    assert.match(hub.url, /^http:\/\/127\.0\.0\.1:[0-9]+$/);
  });

  test('health pings storage without authentication', async () => {
    const r = await raw(hub.url, { method: 'GET', path: '/v1/hub/health' });
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.body), { status: 'ok' });
  });

  test('capabilities: sorted operations, schema versions', () => {
    const r = agentscm(['agent-task', 'capabilities', '--endpoint', hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const d = json<Doc>(r);
    assert.equal(d.capability, 'agentscm.agent-workflow-tasks/v1');
    assert.deepEqual(d.supported_schema_versions, [1]);
    assert.deepEqual(d.operations, [...d.operations].sort());
    assert.ok(d.operations.includes('qualification'));
  });

  test('next and qualification agree, with a leading --data-dir too', () => {
    const n = agentscm(['--data-dir', s.dataDir, 'agent-task', 'next', 'c1', '--endpoint', hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile, '--json']);
    assert.equal(n.code, 0, n.stderr);
    const next = json<Doc>(n);
    const q = agentscm(callArgs(s, hub.url, 'qualification', 'c1'));
    assert.equal(q.code, 8, 'not qualified exits 8');
    const qual = json<Doc>(q);
    assert.equal(next.subject_current, true);
    assert.equal(next.task.step_id, 'check');
    assert.deepEqual(next.next, { operation: 'collector_claim', task_id: next.task.task_id });
    assert.deepEqual(qual.next, next.next);
    assert.equal(qual.qualified, false);
    assert.equal(qual.subject_current, true);
    assert.equal(qual.receipt_digest, null);
    assert.equal(qual.revision, subject.revision);
    assert.deepEqual(qual.tasks.map((t: Doc) => [t.step_id, t.required, t.state]), [['check', true, 'pending'], ['notes', false, 'pending']]);
    assert.deepEqual(qual.failures, [{ task_id: next.task.task_id, code: 'task_pending' }]);
  });

  test('requirements and status list the derived tasks; reads never create the journal', () => {
    const r = agentscm(callArgs(s, hub.url, 'requirements', 'c1'));
    assert.equal(r.code, 0, r.stderr);
    const d = json<Doc>(r);
    assert.equal(d.tasks.length, 2);
    for (const t of d.tasks) assert.ok(t.criteria.length >= 1);
    const st = agentscm(callArgs(s, hub.url, 'status', 'c1', '--step', 'check'));
    assert.equal(st.code, 0, st.stderr);
    assert.equal(json<Doc>(st).state, 'pending');
    assert.equal(json<Doc>(st).attempt, null);
    assert.equal(fs.existsSync(path.join(s.dataDir, 'journal.sqlite')), false);
  });

  test('bytes that are not a transfer are refused at the upload route without creating the journal', async () => {
    const r = await raw(hub.url, { token, path: `${OP_PATH}/collector-upload`, body: 'x', headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(r.status, 400, r.body);
    assert.equal(JSON.parse(r.body).error.code, 'invalid_transfer');
    assert.equal(fs.existsSync(path.join(s.dataDir, 'journal.sqlite')), false);
  });

  test('instructions: entrypoint with every criterion inline, or an explicit schema mismatch (exit 11)', () => {
    const r = agentscm(callArgs(s, hub.url, 'instructions', 'c1', '--step', 'check'));
    assert.equal(r.code, 0, r.stderr);
    const e = json<Doc>(r).entrypoint;
    assert.equal(e.policy_digest, subject.requirement_digest);
    assert.equal(e.workflow_digest, subject.plan_digest);
    assert.deepEqual(e.progression, { operation: 'collector_claim' });
    assert.equal(e.criteria[0].id, 'check-passes');
    const m = agentscm(callArgs(s, hub.url, 'instructions', 'c1', '--step', 'check', '--schema-version', '2'));
    assert.equal(m.code, 11);
    const answer = json<Doc>(m).error.detail.answer;
    assert.deepEqual(answer, {
      status: 'schema_mismatch',
      capability: 'agentscm.agent-workflow-tasks/v1',
      required_schema_version: 1,
      supported_schema_versions: [2],
      server_schema_versions: [1],
      action: answer.action,
    });
    assert.match(answer.action, /^[a-z_]+$/);
  });

  test('reference: available content, denied for an uncommitted digest or unknown name, schema mismatch', () => {
    const ok = agentscm(callArgs(s, hub.url, 'reference', 'c1', '--step', 'check', '--name', 'check-guide').filter((a) => a !== '--json'));
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, fs.readFileSync(path.join(s.workspace, 'docs', 'CHECK.md'), 'utf8'));
    const wrong = agentscm(callArgs(s, hub.url, 'reference', 'c1', '--step', 'check', '--name', 'check-guide', '--sha256', '0'.repeat(64)));
    assert.equal(wrong.code, 13);
    assert.deepEqual([json<Doc>(wrong).status, json<Doc>(wrong).reason], ['denied', 'digest_not_committed']);
    const unknown = agentscm(callArgs(s, hub.url, 'reference', 'c1', '--step', 'check', '--name', 'nope', '--sha256', '1'.repeat(64)));
    assert.equal(json<Doc>(unknown).status, 'denied');
    // A digest that is not 64 lowercase hex fails validation (3), as keys and signatures do.
    const malformed = agentscm(callArgs(s, hub.url, 'reference', 'c1', '--step', 'check', '--name', 'check-guide', '--sha256', 'XYZ'));
    assert.equal(malformed.code, 3, malformed.stdout);
    assert.equal(json<Doc>(malformed).error.code, 'BAD_DIGEST');
    const mm = agentscm(callArgs(s, hub.url, 'reference', 'c1', '--step', 'check', '--name', 'check-guide', '--schema-version', '7'));
    assert.equal(mm.code, 11);
    assert.equal(json<Doc>(mm).error.detail.answer.required_schema_version, 1);
  });

  test('strict decoding: unknown field, duplicate key, oversized body, wrong type, unsupported operation', async () => {
    const unknown = await raw(hub.url, { token, body: JSON.stringify({ operation: 'capabilities', actor: 'root' }) });
    assert.equal(unknown.status, 400);
    assert.equal(JSON.parse(unknown.body).error.code, 'invalid_request');
    const dup = await raw(hub.url, { token, body: '{"operation":"capabilities","operation":"capabilities"}' });
    assert.equal(dup.status, 400);
    assert.match(JSON.parse(dup.body).error.message, /duplicate key/);
    const big = await raw(hub.url, { token, body: JSON.stringify({ operation: 'capabilities', pad: 'x'.repeat(70 * 1024) }) });
    assert.equal(big.status, 413);
    assert.equal(JSON.parse(big.body).error.code, 'body_too_large');
    const ctype = await raw(hub.url, { token, body: '{"operation":"capabilities"}', headers: { 'content-type': 'text/plain' } });
    assert.equal(ctype.status, 415);
    // Numbers are exact integers on the wire: 1.0, 1e0 or 0.99999999999999999999 is not the Change version 1.
    const good = JSON.stringify({ operation: 'next', subject });
    assert.equal((await raw(hub.url, { token, body: good })).status, 200);
    for (const spelled of ['1.0', '1e0', '10e-1', '0.99999999999999999999']) {
      const r = await raw(hub.url, { token, body: good.replace('"change_version":1,', `"change_version":${spelled},`) });
      assert.equal(r.status, 400, `${spelled}: ${r.body}`);
      assert.equal(JSON.parse(r.body).error.code, 'invalid_request');
    }
    const op = await raw(hub.url, { token, body: '{"operation":"launch_missiles"}' });
    assert.equal(op.status, 400);
    assert.equal(JSON.parse(op.body).error.code, 'unsupported_operation');
    const badSubject = await raw(hub.url, { token, body: JSON.stringify({ operation: 'next', subject: { ...subject, revision: 'f'.repeat(64) } }) });
    assert.equal(badSubject.status, 404);
    assert.equal(JSON.parse(badSubject.body).error.code, 'subject_not_found');
    for (const r of [unknown, dup, big, ctype, op, badSubject]) {
      const d = JSON.parse(r.body);
      assert.deepEqual(Object.keys(d), ['error']);
      assert.deepEqual(Object.keys(d.error), ['code', 'message']);
      assert.doesNotMatch(r.body, /\/tmp|at .*\.js|node:/);
    }
  });

  test('a body in pieces, chunked, over the bound without a length, or cut off by a lost connection', async () => {
    // Raw bytes on a socket: the only way to pace a body or to drop the connection inside it.
    const u = new URL(hub.url);
    const exchange = (parts: (string | Buffer)[], opts: { gapMs?: number; hangUp?: boolean } = {}) =>
      new Promise<string>((resolve, reject) => {
        const sock = net.connect(Number(u.port), u.hostname);
        let got = '';
        sock.on('data', (c: Buffer) => (got += c.toString('latin1')));
        sock.on('end', () => resolve(got));
        sock.on('close', () => resolve(got));
        sock.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? resolve(got) : reject(e)));
        sock.on('connect', async () => {
          for (const p of parts) {
            sock.write(p);
            await new Promise((r) => setTimeout(r, opts.gapMs ?? 0));
          }
          if (opts.hangUp) sock.destroy();
        });
      });
    const head = (extra: string) => `POST ${OP_PATH} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nConnection: close\r\n${extra}\r\n`;
    const status = (answer: string) => Number(answer.split(' ')[1]);
    const doc = JSON.stringify({ operation: 'qualification', subject });
    const bytes = Buffer.from(doc);

    const paced = await exchange([head(`Content-Length: ${bytes.length}\r\n`), bytes.subarray(0, 100), bytes.subarray(100)], { gapMs: 30 });
    assert.equal(status(paced), 200, paced);
    assert.equal(typeof JSON.parse(paced.slice(paced.indexOf('\r\n\r\n') + 4)).qualified, 'boolean');

    const chunked = await exchange([head('Transfer-Encoding: chunked\r\n'), `${(100).toString(16)}\r\n`, bytes.subarray(0, 100), '\r\n', `${(bytes.length - 100).toString(16)}\r\n`, bytes.subarray(100), '\r\n0\r\n\r\n'], { gapMs: 10 });
    assert.equal(status(chunked), 200, chunked);

    const pad = 'x'.repeat(16 * 1024);
    const tooBig = await exchange([head('Transfer-Encoding: chunked\r\n'), ...Array.from({ length: 5 }, () => `${pad.length.toString(16)}\r\n${pad}\r\n`), '0\r\n\r\n']);
    assert.equal(status(tooBig), 413, tooBig);

    // The connection goes away inside the body: the Hub answers the next request as ever.
    await exchange([head(`Content-Length: ${bytes.length}\r\n`), bytes.subarray(0, 40)], { gapMs: 30, hangUp: true });
    const after = await raw(hub.url, { token, body: doc });
    assert.equal(after.status, 200);
  });

  test('the actor comes only from the token: none or a forged one is 401, exit 4', async () => {
    const none = await raw(hub.url, { body: '{"operation":"capabilities"}' });
    assert.equal(none.status, 401);
    const forged = await raw(hub.url, { token: token.slice(0, -4) + 'AAAA', body: '{"operation":"capabilities"}' });
    assert.equal(forged.status, 401);
    assert.deepEqual(JSON.parse(forged.body), { error: { code: 'unauthenticated', message: 'missing, unknown or revoked workspace token' } });
  });
});

describe('reference Hub: revocation, supersession, failures of the transport', () => {
  test('a revoked token is refused on its next request (exit 4)', async () => {
    const s = adminSetup();
    assert.equal(agentscm(checkpointArgs(s)).code, 0);
    const hub = await startHub(s.dataDir);
    try {
      assert.equal(agentscm(callArgs(s, hub.url, 'next', 'c1')).code, 0);
      const rv = agentscm(['authority', 'token', 'revoke', '--data-dir', s.dataDir, '--token-id', s.tokenId, '--json']);
      assert.equal(rv.code, 0, rv.stderr);
      assert.equal(json(rv).revoked, true);
      const r = agentscm(callArgs(s, hub.url, 'next', 'c1'));
      assert.equal(r.code, 4);
      assert.equal(json<Doc>(r).error.kind, 'AUTH_REJECTED');
    } finally {
      await hub.stop();
    }
  });

  test('a token limited to another repository is refused with 403 (exit 4)', async () => {
    const s = adminSetup();
    assert.equal(agentscm(checkpointArgs(s)).code, 0);
    const other = path.join(s.root, 'other-token');
    const t = agentscm(['authority', 'token', 'issue', '--data-dir', s.dataDir, '--owner', 'bob', '--agent', 'a', '--repository', 'acme/other', '--out', other, '--json']);
    assert.equal(json<Doc>(t).repository, 'acme/other');
    const hub = await startHub(s.dataDir);
    try {
      const r = agentscm(callArgs({ ...s, tokenFile: other }, hub.url, 'next', 'c1'));
      assert.equal(r.code, 4);
      const raw403 = await raw(hub.url, { token: fs.readFileSync(other, 'utf8').trim(), body: '{"operation":"capabilities"}' });
      assert.equal(raw403.status, 403);
      assert.equal(JSON.parse(raw403.body).error.code, 'forbidden');
    } finally {
      await hub.stop();
    }
  });

  test('a superseded subject: subject_current false, no tasks, next checkpoint; the new one has fresh task ids', async () => {
    const s = adminSetup();
    const first = agentscm(checkpointArgs(s));
    const hub = await startHub(s.dataDir);
    try {
      const oldSubject = json<Doc>(first).subject;
      const token = fs.readFileSync(s.tokenFile, 'utf8').trim();
      fs.appendFileSync(path.join(s.workspace, 'greet.sh'), '# edited\n');
      const second = agentscm(checkpointArgs(s));
      assert.equal(second.code, 0, second.stderr);
      const newDoc = json<Doc>(second);
      assert.notEqual(newDoc.subject.revision, oldSubject.revision);
      assert.equal(newDoc.subject.change_version, 2);
      assert.notEqual(newDoc.tasks[0].task_id, json<Doc>(first).tasks[0].task_id);
      const q = await raw(hub.url, { token, body: JSON.stringify({ operation: 'qualification', subject: oldSubject }) });
      assert.equal(q.status, 200);
      const d = JSON.parse(q.body);
      assert.equal(d.qualified, false);
      assert.equal(d.subject_current, false);
      assert.deepEqual(d.tasks, []);
      assert.deepEqual(d.failures, []);
      assert.equal(d.revision, oldSubject.revision);
      assert.deepEqual(d.next, { operation: 'checkpoint' });
      const n = await raw(hub.url, { token, body: JSON.stringify({ operation: 'next', subject: oldSubject }) });
      assert.deepEqual(JSON.parse(n.body).next, { operation: 'checkpoint' });
      // The CLI reads the current subject, which is version 2.
      const cur = agentscm(callArgs(s, hub.url, 'qualification', 'c1'));
      assert.equal(json<Doc>(cur).subject_current, true);
      assert.equal(json<Doc>(cur).revision, newDoc.subject.revision);
    } finally {
      await hub.stop();
    }
  });

  test('a new policy epoch supersedes the subject too; unknown attempt and task are 404 (exit 13)', async () => {
    const s = adminSetup();
    const before = json<Doc>(agentscm(checkpointArgs(s))).subject;
    const hub = await startHub(s.dataDir);
    try {
      assert.equal(agentscm(callArgs(s, hub.url, 'status', 'c1', '--step', 'check', '--attempt-id', 'att-none')).code, 13);
      assert.equal(agentscm(callArgs(s, hub.url, 'status', 'c1', '--task-id', 'task-none')).code, 13, 'unknown locally');
      const req = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples', 'requirement.json'), 'utf8'));
      req.steps[1].required = true;
      const f = path.join(s.root, 'req2.json');
      fs.writeFileSync(f, JSON.stringify(req));
      assert.equal(agentscm(['authority', 'profile', 'add', '--data-dir', s.dataDir, '--repository', REPO, '--profile', PROFILE, '--target', 'main', '--requirement', f]).code, 0);
      const token = fs.readFileSync(s.tokenFile, 'utf8').trim();
      const old = JSON.parse((await raw(hub.url, { token, body: JSON.stringify({ operation: 'qualification', subject: before }) })).body);
      assert.equal(old.subject_current, false);
      assert.deepEqual(old.next, { operation: 'checkpoint' });
      const cur = json<Doc>(agentscm(callArgs(s, hub.url, 'qualification', 'c1')));
      assert.equal(cur.subject_current, true);
      assert.equal(cur.revision, before.revision, 'same Change version, new policy epoch');
      assert.equal(cur.failures.length, 2, 'both steps are required now');
    } finally {
      await hub.stop();
    }
  });

  test('an unreachable Hub exits 5; a malformed answer exits 6', async () => {
    const s = adminSetup();
    assert.equal(agentscm(checkpointArgs(s)).code, 0);
    // A port that was just free: nothing listens there.
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const un = agentscm(callArgs(s, `http://127.0.0.1:${port}`, 'qualification', 'c1'));
    assert.equal(un.code, 5);
    assert.equal(json<Doc>(un).error.kind, 'HUB_UNREACHABLE');

    // A wrong peer: a real HTTP server that answers 200 with a qualification missing fields. No real
    // Hub produces this, so this is the one place a stand-in server is used. It runs in a child process
    // because the CLI is run synchronously from this one.
    const { spawn } = await import('node:child_process');
    const fake = spawn(process.execPath, [
      '-e',
      `require('http').createServer((q,r)=>{r.writeHead(200,{'content-type':'application/json'});r.end('{"capability":"agentscm.agent-workflow-tasks/v1","schema_version":1,"qualified":true}')}).listen(0,'127.0.0.1',function(){console.log(this.address().port)})`,
    ]);
    const fport = await new Promise<string>((r) => fake.stdout.once('data', (c: Buffer) => r(c.toString().trim())));
    try {
      const bad = agentscm(callArgs(s, `http://127.0.0.1:${fport}`, 'qualification', 'c1'));
      assert.equal(bad.code, 6);
      assert.equal(json<Doc>(bad).error.kind, 'HUB_MALFORMED');
    } finally {
      fake.kill();
    }
  });

  test('token file must be absolute and owner-private', () => {
    const s = adminSetup();
    assert.equal(agentscm(checkpointArgs(s)).code, 0);
    const rel = agentscm(callArgs(s, 'http://127.0.0.1:1', 'next', 'c1').map((a) => (a === s.tokenFile ? 'token' : a)));
    assert.equal(rel.code, 3);
    fs.chmodSync(s.tokenFile, 0o644);
    const loose = agentscm(callArgs(s, 'http://127.0.0.1:1', 'next', 'c1'));
    assert.equal(loose.code, 9);
    assert.equal(json<Doc>(loose).error.code, 'LOOSE_PERMISSIONS');
  });
});

describe('reference Hub: a journal it cannot open', () => {
  test('every read answers 503 store_unavailable, never as if nothing had been claimed', async () => {
    const s = adminSetup();
    const c = agentscm(checkpointArgs(s));
    assert.equal(c.code, 0, c.stderr);
    const subject = json<Doc>(c).subject;
    let hub = await startHub(s.dataDir);
    // A claim (refused here: notes waits for check) creates the journal.
    const claim = agentscm(callArgs(s, hub.url, 'claim', 'c1', '--step', 'notes', '--lease-ms', '60000'));
    assert.equal(claim.code, 7, claim.stdout);
    await hub.stop();
    const journal = path.join(s.dataDir, 'journal.sqlite');
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(journal);
    db.pragma('user_version = 99');
    db.close();
    hub = await startHub(s.dataDir);
    try {
      const token = fs.readFileSync(s.tokenFile, 'utf8').trim();
      const task = (json<Doc>(c).tasks as Doc[]).find((t) => t.step_id === 'notes')!;
      const bodies = [
        { operation: 'qualification', subject },
        { operation: 'status', subject, task_id: task.task_id, task_digest: task.task_digest, attempt_id: null },
        { operation: 'recovery', subject, task_id: task.task_id, attempt_id: null, request_id: 'never-sent' },
        { operation: 'qualification', subject },
      ];
      // Back to back: within the interval in which the Hub rechecks a missing journal.
      for (const b of bodies) {
        const r = await raw(hub.url, { token, body: JSON.stringify(b) });
        assert.equal(r.status, 503, `${b.operation}: ${r.body}`);
        assert.equal(JSON.parse(r.body).error.code, 'store_unavailable');
      }
    } finally {
      await hub.stop();
    }
  });
});
