// The Hub in operation, through the real CLI and real Hub processes on 127.0.0.1: one Hub serving the
// configured profiles of several data dirs (hub serve --config), startup refusals naming the entry,
// calls without a data dir over https, /v1/hub/ready's typed reasons, the access log, and SIGTERM
// draining a load of mutations without losing an answered one, /v1/hub/ready answering `draining` meanwhile.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { subjectToJson } from '../../src/core/authority/plan.js';
import { checkpoint } from '../../src/core/native/checkpoint.js';
import { exampleAuthority } from '../../scripts/example-authority.js';
import { agentscm, AGENTSCM_BIN, json, REPO_ROOT } from '../support/cli.js';
import { adminSetup, EXAMPLE_REQUIREMENT, EXAMPLE_WORKSPACE, serveHub, startHub, tempDir, TLS_FIXTURES, TLS_SERVE_ARGS, type RunningHub } from '../support/hub.js';
import { claimBody, manyTasks, opPath, postOp } from '../support/hub-http.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const hubs: RunningHub[] = [];
after(async () => {
  for (const h of hubs) await h.stop();
});

function ok(args: string[]): Doc {
  const r = agentscm([...args, '--json']);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return json(r);
}

/** A data dir with these profiles (the example requirement, target main) and one token per entry. */
function dataDir(root: string, name: string, profiles: { repository: string; profile: string; requirement?: string }[]) {
  const dir = path.join(root, name);
  ok(['authority', 'init', '--data-dir', dir]);
  const digests: string[] = [];
  for (const p of profiles) {
    const r = ok(['authority', 'profile', 'add', '--data-dir', dir, '--repository', p.repository, '--profile', p.profile, '--target', 'main', '--requirement', p.requirement ?? EXAMPLE_REQUIREMENT]);
    digests.push(r.requirement_digest as string);
  }
  return { dir, digests };
}

function token(dir: string, out: string, repository?: string): string {
  ok(['authority', 'token', 'issue', '--data-dir', dir, '--owner', 'alice', '--agent', 'claude', '--out', out, ...(repository ? ['--repository', repository] : [])]);
  return fs.readFileSync(out, 'utf8').trim();
}

function entry(repository: string, profile: string, dir: string, digest: string, extra: Doc = {}): Doc {
  return { repository_id: repository, profile_id: profile, native_repository: repository, data_dir: dir, target: 'main', requirement_digest: digest, ...extra };
}

function getJson(url: string): Promise<{ status: number; body: Doc }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let s = '';
        res.on('data', (c: Buffer) => (s += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(s) as Doc }));
      })
      .on('error', reject);
  });
}

function workspace(root: string): string {
  const ws = path.join(root, `ws-${Math.random().toString(36).slice(2)}`);
  fs.cpSync(EXAMPLE_WORKSPACE, ws, { recursive: true });
  return ws;
}

describe('one Hub for three profiles in two data dirs (hub serve --config)', () => {
  const root = tempDir('hub-config');
  const a = dataDir(root, 'a', [
    { repository: 'acme/demo', profile: 'default' },
    { repository: 'acme/other', profile: 'p2' },
  ]);
  const b = dataDir(root, 'b', [{ repository: 'acme/third', profile: 'p3' }]);
  const tokenA = path.join(root, 'token-a');
  const tokenA2 = path.join(root, 'token-a2');
  const tokenB = path.join(root, 'token-b');
  const secretA = token(a.dir, tokenA);
  const secretA2 = token(a.dir, tokenA2, 'acme/other');
  const secretB = token(b.dir, tokenB);
  const config = path.join(root, 'hub.json');
  const entries = [entry('acme/demo', 'default', a.dir, a.digests[0]!), entry('acme/other', 'p2', a.dir, a.digests[1]!), entry('acme/third', 'p3', b.dir, b.digests[0]!)];
  fs.writeFileSync(config, JSON.stringify({ version: 1, agent_task_profiles: entries }));
  const served: [string, string, string, string][] = [
    ['acme/demo', 'default', a.dir, tokenA],
    ['acme/other', 'p2', a.dir, tokenA2],
    ['acme/third', 'p3', b.dir, tokenB],
  ];
  for (const [repository, profile, dir] of served) checkpoint(dir, { repository, profile, change_id: 'c1', workspace: workspace(root) });

  test('each profile answers a typed call that names only the Change', async () => {
    const hub = await serveHub(['--config', config]);
    hubs.push(hub);
    for (const [repository, profile, , tok] of served) {
      const r = agentscm(['agent-task', 'next', 'c1', '--endpoint', hub.url, '--repository', repository, '--profile', profile, '--token-file', tok, '--json']);
      assert.equal(r.code, 0, `${repository} ${profile}: ${r.stderr}`);
      const n = json(r) as Doc;
      assert.equal(n.subject_current, true);
      assert.equal(n.task.step_id, 'check');
    }
    const health = await fetch(`${hub.url}/v1/hub/health`);
    const healthBytes = Buffer.byteLength(await health.text());
    const head = await fetch(`${hub.url}/v1/hub/health`, { method: 'HEAD' });
    assert.equal(head.status, 405);
    // A 405 names the methods the route allows (RFC 9110).
    assert.equal(head.headers.get('allow'), 'GET');
    const getOp = await fetch(`${hub.url}${opPath('acme/third', 'p3')}`, { headers: { authorization: `Bearer ${secretA}` } });
    assert.equal(getOp.status, 405);
    assert.equal(getOp.headers.get('allow'), 'POST');
    // A request the framing checks answer (505 here) is logged too.
    const u = new URL(hub.url);
    const h2 = await new Promise<string>((resolve, reject) => {
      let text = '';
      const sock = net.connect(Number(u.port), u.hostname, () => sock.write('GET /v1/hub/health HTTP/2.0\r\nHost: x\r\n\r\n'));
      sock.on('data', (c: Buffer) => (text += c.toString('latin1')));
      sock.on('close', () => resolve(text));
      sock.on('error', reject);
    });
    assert.match(h2, /^HTTP\/1\.1 505 /);
    const ready = await getJson(`${hub.url}/v1/hub/ready`);
    assert.deepEqual(ready, { status: 200, body: { status: 'ready' } });
    // One JSON access-log line per request, without the token (written once the answer is out).
    for (let i = 0; i < 100 && !hub.stderr().includes('"/v1/hub/ready"'); i++) await new Promise((r) => setTimeout(r, 20));
    const lines = hub.stderr().trim().split('\n').map((l) => JSON.parse(l) as Doc);
    assert.ok(lines.some((l) => l.path === '/v1/hub/ready' && l.status === 200 && l.method === 'GET'));
    assert.ok(lines.filter((l) => l.path === opPath('acme/third', 'p3')).length >= 1);
    // `bytes` is the body the answer carried (a HEAD answer carries none).
    const logged = lines.filter((l) => l.path === '/v1/hub/health').map((l) => [l.method, l.status, l.bytes]);
    assert.deepEqual(logged.slice(0, 2), [['GET', 200, healthBytes], ['HEAD', 405, 0]]);
    assert.equal(logged.length, 3);
    assert.deepEqual(logged[2]!.slice(0, 2), ['GET', 505]);
    assert.ok(healthBytes > 0);
    const answered = lines.filter((l) => l.path === opPath('acme/third', 'p3') && l.status === 200);
    assert.ok(answered.length >= 1 && answered.every((l) => typeof l.bytes === 'number' && l.bytes > 100), JSON.stringify(answered));
    for (const s of [secretA, secretA2, secretB]) assert.ok(!hub.stderr().includes(s));
  });

  test('a token of one profile is refused on another: 401 across data dirs, 403 outside its repository', async () => {
    const hub = hubs[0]!;
    const agent = new http.Agent({ keepAlive: false });
    const cap = { operation: 'capabilities' };
    assert.equal((await postOp(agent, hub.url, opPath('acme/third', 'p3'), secretA, cap)).status, 401);
    assert.equal((await postOp(agent, hub.url, opPath('acme/demo', 'default'), secretB, cap)).status, 401);
    const forbidden = await postOp(agent, hub.url, opPath('acme/demo', 'default'), secretA2, cap);
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.error.code, 'forbidden');
    assert.equal((await postOp(agent, hub.url, opPath('acme/other', 'p2'), secretA2, cap)).status, 200);
    // A profile installed in a data dir but not configured is not served.
    ok(['authority', 'profile', 'add', '--data-dir', b.dir, '--repository', 'acme/third', '--profile', 'unlisted', '--target', 'main', '--requirement', EXAMPLE_REQUIREMENT]);
    const unlisted = await postOp(agent, hub.url, opPath('acme/third', 'unlisted'), secretB, cap);
    assert.equal(unlisted.status, 404);
    assert.equal(unlisted.body.error.code, 'profile_not_found');
    assert.equal((await postOp(agent, hub.url, opPath('acme/third', 'unlisted'), 'agentscm_wt_nope', cap)).status, 401);
    // The Change form: instead of a subject, never beside one, and only where a subject goes.
    const path3 = opPath('acme/third', 'p3');
    const next = await postOp(agent, hub.url, path3, secretB, { operation: 'next', change_id: 'c1' });
    assert.equal(next.status, 200);
    assert.equal(next.body.task.step_id, 'check');
    assert.equal((await postOp(agent, hub.url, path3, secretB, { operation: 'next', change_id: 'c2' })).body.error.code, 'change_not_found');
    const both = await postOp(agent, hub.url, path3, secretB, { operation: 'next', change_id: 'c1', subject: null });
    assert.equal(both.status, 400);
    assert.equal(both.body.error.code, 'invalid_request');
    const elsewhere = await postOp(agent, hub.url, path3, secretB, { operation: 'capabilities', change_id: 'c1' });
    assert.equal(elsewhere.status, 400);
    agent.destroy();
  });

  test('a bad config refuses to start and names the entry', () => {
    const bad = (doc: unknown, pattern: RegExp) => {
      const f = path.join(root, `bad-${Math.random().toString(36).slice(2)}.json`);
      fs.writeFileSync(f, typeof doc === 'string' ? doc : JSON.stringify(doc));
      const r = agentscm(['hub', 'serve', '--config', f, '--listen', '127.0.0.1:0'], { timeoutMs: 30_000 });
      assert.equal(r.code, 3, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, pattern);
    };
    bad({ version: 1, agent_task_profiles: [entries[0], { ...entries[1], extra: true }] }, /agent_task_profiles\[1\] \(acme\/other p2\): unknown field "extra"/);
    bad({ version: 1, agent_task_profiles: entries, source_profiles: [] }, /unknown field "source_profiles"/);
    bad({ version: 1, agent_task_profiles: [entries[0], entries[1], { ...entries[2], requirement_digest: '0'.repeat(64) }] }, /agent_task_profiles\[2\] \(acme\/third p3\): requirement_digest 0{64} differs from the installed [0-9a-f]{64}/);
    bad({ version: 1, agent_task_profiles: [{ ...entries[0], data_dir: 'relative/dir' }] }, /agent_task_profiles\[0\] \(acme\/demo default\): data_dir must be an absolute/);
    bad({ version: 1, agent_task_profiles: [entries[0], { ...entries[1], profile_id: 'missing' }] }, /agent_task_profiles\[1\] \(acme\/other missing\): no such agent-task profile/);
    bad({ version: 1, agent_task_profiles: [entries[0], entries[0]] }, /agent_task_profiles\[1\] \(acme\/demo default\): the same repository and profile as agent_task_profiles\[0\]/);
    bad({ version: 2, agent_task_profiles: entries }, /version must be 1/);
    bad('{"version": 1, "agent_task_profiles": [', /hub config/);
    const both = agentscm(['hub', 'serve', '--config', config, '--data-dir', a.dir]);
    assert.equal(both.code, 2);
  });
});

describe('/v1/hub/ready', () => {
  test('reports each failure cause as a typed reason; /v1/hub/health stays a storage ping', async () => {
    const root = tempDir('hub-ready');
    const a = dataDir(root, 'a', [{ repository: 'acme/demo', profile: 'default' }]);
    const b = dataDir(root, 'b', [{ repository: 'acme/third', profile: 'p3' }]);
    const config = path.join(root, 'hub.json');
    fs.writeFileSync(config, JSON.stringify({ version: 1, agent_task_profiles: [entry('acme/demo', 'default', a.dir, a.digests[0]!), entry('acme/third', 'p3', b.dir, b.digests[0]!)] }));
    const hub = await serveHub(['--config', config]);
    hubs.push(hub);
    const ready = () => getJson(`${hub.url}/v1/hub/ready`);
    assert.deepEqual(await ready(), { status: 200, body: { status: 'ready' } });

    // A journal that cannot take a write transaction.
    const journal = path.join(b.dir, 'journal.sqlite');
    fs.writeFileSync(journal, 'this is not a database, just bytes of the wrong kind'.repeat(100), { mode: 0o600 });
    assert.deepEqual(await ready(), { status: 503, body: { status: 'not_ready', reasons: [{ code: 'journal_unwritable', data_dir: b.dir }] } });
    assert.equal((await getJson(`${hub.url}/v1/hub/health`)).status, 200);
    fs.rmSync(journal);
    assert.equal((await ready()).status, 200);

    // The installed requirement no longer the pinned one.
    const other = path.join(root, 'requirement.json');
    const req = JSON.parse(fs.readFileSync(EXAMPLE_REQUIREMENT, 'utf8')) as Doc;
    req.workflow = 'another-workflow';
    fs.writeFileSync(other, JSON.stringify(req));
    ok(['authority', 'profile', 'add', '--data-dir', b.dir, '--repository', 'acme/third', '--profile', 'p3', '--target', 'main', '--requirement', other]);
    assert.deepEqual(await ready(), {
      status: 503,
      body: { status: 'not_ready', reasons: [{ code: 'requirement_digest_mismatch', data_dir: b.dir, repository: 'acme/third', profile: 'p3' }] },
    });

    // The authority moved away from under the Hub.
    fs.renameSync(path.join(a.dir, 'authority.sqlite'), path.join(root, 'moved.sqlite'));
    const r = await ready();
    assert.equal(r.status, 503);
    assert.deepEqual(r.body.reasons, [
      { code: 'authority_unavailable', data_dir: a.dir },
      { code: 'requirement_digest_mismatch', data_dir: b.dir, repository: 'acme/third', profile: 'p3' },
    ]);
    await hub.stop();
  });

  test('a --data-dir Hub checks every installed profile', async () => {
    const root = tempDir('hub-ready-dir');
    const a = dataDir(root, 'a', [{ repository: 'acme/demo', profile: 'default' }]);
    const hub = await startHub(a.dir);
    hubs.push(hub);
    assert.deepEqual(await getJson(`${hub.url}/v1/hub/ready`), { status: 200, body: { status: 'ready' } });
    // Damaged stored requirement bytes: the digest recheck fails.
    const db = new Database(path.join(a.dir, 'authority.sqlite'));
    db.prepare("UPDATE requirements SET canonical = CAST(replace(CAST(canonical AS TEXT), 'example-check', 'example-chexk') AS BLOB)").run();
    db.close();
    const r = await getJson(`${hub.url}/v1/hub/ready`);
    assert.equal(r.status, 503);
    assert.deepEqual(r.body.reasons, [{ code: 'requirement_unreadable', data_dir: a.dir, repository: 'acme/demo', profile: 'default' }]);
    await hub.stop();
  });
});

describe('typed calls from another machine', () => {
  test('without --data-dir, over https: next, instructions, reference, qualification and claim name the Change', async () => {
    const root = tempDir('hub-remote');
    const a = dataDir(root, 'a', [{ repository: 'acme/demo', profile: 'default' }]);
    const tok = path.join(root, 'token');
    token(a.dir, tok);
    checkpoint(a.dir, { repository: 'acme/demo', profile: 'default', change_id: 'c1', workspace: workspace(root) });
    const hub = await startHub(a.dir, TLS_SERVE_ARGS);
    hubs.push(hub);
    assert.match(hub.url, /^https:/);
    const call = (...args: string[]) => agentscm(['agent-task', ...args, '--endpoint', hub.url, '--ca-file', TLS_FIXTURES.ca, '--repository', 'acme/demo', '--profile', 'default', '--token-file', tok, '--json']);
    const withDir = json(call('next', 'c1', '--data-dir', a.dir)) as Doc;
    const next = call('next', 'c1');
    assert.equal(next.code, 0, next.stderr);
    assert.deepEqual(json(next), withDir);
    const instr = call('instructions', 'c1', '--step', 'check');
    assert.equal(instr.code, 0, instr.stderr);
    assert.equal((json(instr) as Doc).entrypoint.task_id, withDir.task.task_id);
    // The reference's digest comes from the Hub's instructions when there is no local task.
    const ref = call('reference', 'c1', '--step', 'check', '--name', 'check-guide');
    assert.equal(ref.code, 0, ref.stderr);
    assert.equal((json(ref) as Doc).status, 'available');
    const q = call('qualification', 'c1');
    assert.equal(q.code, 8, q.stderr);
    assert.equal((json(q) as Doc).subject_current, true);
    const status = call('status', 'c1', '--step', 'notes');
    assert.equal(status.code, 0, status.stderr);
    // The claim path derives the subject too: notes waits for check (refused, exit 7), not for a subject.
    const claim = call('claim', 'c1', '--step', 'notes', '--lease-ms', '60000', '--request-id', 'r1');
    assert.equal(claim.code, 7, claim.stderr);
    assert.doesNotMatch(claim.stderr, /subject|data dir/i);
    const unknown = call('next', 'nope');
    assert.equal(unknown.code, 13, unknown.stderr);
    assert.match(unknown.stderr, /change_not_found|no such Change/);
    await hub.stop();
  });
});

describe('SIGTERM', () => {
  test('during a load of mutations: exits 0 and every answered mutation is committed', async () => {
    const root = tempDir('hub-sigterm');
    const dir = path.join(root, 'data');
    const requirement = {
      version: 1,
      workflow: 'sigterm',
      steps: [{ id: 'say', skill: 'say', action_class: 'agent_assertion', required: true, depends_on: [], summary: 'say', criteria: [{ id: 'ok', text: 'ok', required: true, controller_only: false }], references: [] }],
    };
    const { token: secret } = exampleAuthority(dir, { owner: 'alice', agent: 'claude' }, Buffer.from(JSON.stringify(requirement)));
    const cp = checkpoint(dir, { repository: 'acme/demo', profile: 'default', change_id: 'c0', workspace: workspace(root) });
    const count = 400;
    const tasks = manyTasks(dir, 'acme/demo', 'default', cp.subject.revision, count);
    const hub = await startHub(dir);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    const answered: string[] = [];
    let failed = 0;
    let signalled = false;
    const exited = new Promise<number | null>((resolve) => hub.child.once('exit', (code) => resolve(code)));
    await Promise.all(
      tasks.map((t, i) =>
        postOp(agent, hub.url, opPath('acme/demo', 'default'), secret, claimBody(t, `sig-${i}`)).then(
          (r) => {
            if (r.status === 200) answered.push(`sig-${i}`);
            else failed++;
            if (!signalled && answered.length >= 40) {
              signalled = true;
              hub.child.kill('SIGTERM');
            }
          },
          () => failed++,
        ),
      ),
    );
    agent.destroy();
    assert.equal(await exited, 0);
    assert.ok(signalled && answered.length >= 40, `${answered.length} answered`);
    const j = new Database(path.join(dir, 'journal.sqlite'), { readonly: true });
    const has = j.prepare('SELECT COUNT(*) AS n FROM idempotency WHERE request_id = ?');
    const lost = answered.filter((id) => (has.get(id) as { n: number }).n !== 1);
    j.close();
    assert.deepEqual(lost, []);
    // Some requests came after the listener closed: those were never answered 200.
    assert.equal(answered.length + failed, count);
  });
});

/** The HTTP/1.1 answers on a raw socket so far, each head with its content-length body. */
function answers(raw: string): { status: number; head: string; body: string }[] {
  const out: { status: number; head: string; body: string }[] = [];
  let rest = raw;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) return out;
    const head = rest.slice(0, end);
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
    const length = Number(/^content-length: *(\d+)/im.exec(head)?.[1] ?? 0);
    if (rest.length < end + 4 + length) return out;
    out.push({ status, head, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
}

describe('SIGTERM and /v1/hub/ready', () => {
  test('while a received request drains, ready answers 503 draining; the request is answered and the Hub exits 0', async () => {
    const root = tempDir('hub-drain-ready');
    const dir = path.join(root, 'data');
    const { token: secret } = exampleAuthority(dir, { owner: 'alice', agent: 'claude' });
    const cp = checkpoint(dir, { repository: 'acme/demo', profile: 'default', change_id: 'c0', workspace: workspace(root) });
    const hub = await startHub(dir);
    const exited = new Promise<number | null>((resolve) => hub.child.once('exit', (code) => resolve(code)));
    const u = new URL(hub.url);
    const port = Number(u.port);
    try {
      const before = await getJson(`${hub.url}/v1/hub/ready`);
      assert.deepEqual([before.status, before.body], [200, { status: 'ready' }]);
      // A qualification request the Hub has received (its 100 Continue came back) but whose body has
      // not arrived yet: it is in flight when SIGTERM comes.
      const body = Buffer.from(JSON.stringify({ operation: 'qualification', subject: subjectToJson(cp.subject) }));
      const socket = net.connect(port, u.hostname);
      let raw = '';
      const grew: (() => void)[] = [];
      socket.on('data', (c: Buffer) => {
        raw += c.toString('latin1');
        for (const f of grew.splice(0)) f();
      });
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.on('error', () => {});
      const until = async (ok: () => boolean, what: string): Promise<void> => {
        const deadline = Date.now() + 20_000;
        while (!ok()) {
          assert.ok(Date.now() < deadline, `timed out waiting for ${what}; so far: ${JSON.stringify(raw)}`);
          await new Promise<void>((resolve) => {
            grew.push(resolve);
            setTimeout(resolve, 50);
          });
        }
      };
      socket.write(
        `POST ${opPath('acme/demo', 'default')} HTTP/1.1\r\nhost: ${u.host}\r\nauthorization: Bearer ${secret}\r\ncontent-type: application/json\r\n` +
          `content-length: ${body.length}\r\nexpect: 100-continue\r\n\r\n`,
      );
      await until(() => answers(raw).some((a) => a.status === 100), '100 Continue');
      hub.child.kill('SIGTERM');
      // Draining has begun once the listener refuses new connections.
      const deadline = Date.now() + 20_000;
      for (;;) {
        const refused = await new Promise<boolean>((resolve) => {
          const probe = net.connect(port, u.hostname);
          probe.once('connect', () => {
            probe.destroy();
            resolve(false);
          });
          probe.once('error', () => resolve(true));
        });
        if (refused) break;
        assert.ok(Date.now() < deadline, 'the listener still accepts connections after SIGTERM');
        await new Promise((r) => setTimeout(r, 25));
      }
      // The rest of the body, and a readiness check pipelined behind it on the same connection.
      socket.write(Buffer.concat([body, Buffer.from(`GET /v1/hub/ready HTTP/1.1\r\nhost: ${u.host}\r\n\r\n`)]));
      await until(() => answers(raw).length >= 3, 'both answers');
      const [cont, qual, ready] = answers(raw);
      assert.equal(cont!.status, 100);
      assert.equal(qual!.status, 200, qual!.body);
      const q = JSON.parse(qual!.body) as Doc;
      assert.equal(q.qualified, false);
      assert.equal(q.subject_current, true);
      assert.equal(ready!.status, 503, ready!.body);
      assert.deepEqual(JSON.parse(ready!.body), { status: 'not_ready', reasons: [{ code: 'draining' }] });
      await closed;
      assert.equal(await exited, 0);
    } finally {
      await hub.stop();
    }
  });
});

describe('the README walkthrough with client configuration', () => {
  test('"Working on a Change" runs as written, with no repeated flag', async () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Working on a Change (agent)'));
    const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
    for (const flag of ['--endpoint', '--repository', '--profile', '--token-file', '--data-dir']) assert.ok(!block.includes(flag), `the walkthrough repeats ${flag}`);
    const s = adminSetup();
    const home = path.join(s.root, 'home');
    fs.mkdirSync(path.join(home, '.agentscm'), { recursive: true });
    fs.copyFileSync(s.tokenFile, path.join(home, '.agentscm', 'token'));
    fs.chmodSync(path.join(home, '.agentscm', 'token'), 0o600);
    const bin = path.join(s.root, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'agentscm'), `#!/bin/sh\nexec "${process.execPath}" "${AGENTSCM_BIN}" "$@"\n`, { mode: 0o755 });
    const hub = await startHub(s.dataDir);
    hubs.push(hub);
    const ws = path.join(s.root, 'walk-ws');
    // Each agentscm line reports its exit status; comments are dropped so that the report is not one.
    const script = block
      .replaceAll('/tmp/ws', ws)
      .replaceAll('http://127.0.0.1:8421', hub.url)
      .split('\n')
      // A line's own `|| echo "exit $?"` (which keeps a copied script going) is dropped, so that the
      // report carries the command's status.
      .map((l) => l.replace(/\s+#.*$/, '').replace(/ \|\| echo "exit \$\?"$/, ''))
      .map((l) => (l.startsWith('agentscm ') ? `${l}; echo "exit=$? ${l.replace(/"/g, '')}" >&2` : l))
      .join('\n');
    // $E and $D are what the README's "Setting up a Hub" section set: the examples and the data dir.
    const env: NodeJS.ProcessEnv = { PATH: `${bin}:${process.env.PATH}`, HOME: home, D: s.dataDir, E: path.join(REPO_ROOT, 'examples') };
    const r = spawnSync('sh', ['-c', script], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 120_000 });
    const exits = [...r.stderr.matchAll(/^exit=(\d+) (.*)$/gm)].map((m) => [m[2], Number(m[1])]);
    assert.equal(exits.length, 7, r.stderr);
    for (const [cmd, code] of exits) assert.equal(code, String(cmd).includes('qualification') ? 8 : 0, `${cmd}: ${r.stderr}`);
    assert.match(r.stdout, /^endpoint: http:\/\/127\.0\.0\.1:\d+ \(file .*config\.json\)$/m);
    assert.match(r.stdout, /^data_dir: .* \(env AGENTSCM_DATA_DIR\)$/m);
    assert.match(r.stdout, /"subject_current":true/);
    assert.match(r.stdout, /"qualified":false/);
  });

  test('flags over environment over the repository file over the user file; the repository file holds no secret', () => {
    const root = tempDir('client-config');
    const repo = path.join(root, 'repo');
    fs.mkdirSync(path.join(repo, '.git'), { recursive: true });
    fs.mkdirSync(path.join(repo, 'sub'));
    const user = path.join(root, 'user.json');
    fs.writeFileSync(user, JSON.stringify({ version: 1, endpoint: 'http://user:1', repository: 'u/u', profile: 'pu', token_file: '/t/u', data_dir: '/d/u' }));
    fs.writeFileSync(path.join(repo, '.agentscm.json'), JSON.stringify({ version: 1, endpoint: 'http://repo:1', repository: 'r/r' }), { mode: 0o644 });
    const show = (env: NodeJS.ProcessEnv, ...args: string[]) => agentscm(['config', 'show', ...args, '--json'], { cwd: path.join(repo, 'sub'), env: { PATH: process.env.PATH, AGENTSCM_CONFIG: user, ...env } });
    const got = json(show({ AGENTSCM_ENDPOINT: 'http://env:1' }, '--endpoint', 'http://flag:1', '--profile', 'pf')) as Doc;
    assert.deepEqual(got.settings, {
      endpoint: { value: 'http://flag:1', source: 'flag' },
      repository: { value: 'r/r', source: `file ${fs.realpathSync(repo)}/.agentscm.json` },
      profile: { value: 'pf', source: 'flag' },
      token_file: { value: '/t/u', source: `file ${user}` },
      data_dir: { value: '/d/u', source: `file ${user}` },
      ca_file: { value: null, source: null },
    });
    assert.equal((json(show({ AGENTSCM_ENDPOINT: 'http://env:1' })) as Doc).settings.endpoint.source, 'env AGENTSCM_ENDPOINT');
    fs.writeFileSync(path.join(repo, '.agentscm.json'), JSON.stringify({ version: 1, token_file: '/t/r' }));
    const secret = show({});
    assert.equal(secret.code, 3);
    assert.match(secret.stderr, /token_file belongs in the user config file or AGENTSCM_TOKEN_FILE/);
    fs.writeFileSync(path.join(repo, '.agentscm.json'), JSON.stringify({ version: 1, endpoint: 'http://repo:1', extra: 1 }));
    assert.match(show({}).stderr, /unknown field "extra"/);
    fs.writeFileSync(path.join(repo, '.agentscm.json'), JSON.stringify({ version: 1, endpoint: 'http://repo:1' }));
    fs.chmodSync(path.join(repo, '.agentscm.json'), 0o666);
    assert.match(show({}).stderr, /writable by group or others/);
    // The Hub never takes a client's settings.
    const serve = agentscm(['hub', 'serve', '--listen', '127.0.0.1:0'], { env: { PATH: process.env.PATH, AGENTSCM_DATA_DIR: '/nonexistent', AGENTSCM_CONFIG: user } });
    assert.equal(serve.code, 2);
    assert.match(serve.stderr, /exactly one of --data-dir DIR and --config FILE/);
  });
});
