// The workspace MCP endpoint of a real Hub (`hub serve` on 127.0.0.1:0) driven by the official MCP
// client over real HTTP: the tool lists (full and read scope), every tool's answer equal to the HTTP
// facade's for the same request, refusals with the facade's codes, both protocol eras, and the
// endpoint's HTTP rules (POST only, Origin, bounded bodies, token, repository and profile).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { subjectToJson, type Task } from '../../src/core/authority/plan.js';
import { Authority } from '../../src/core/authority/store.js';
import type { JsonValue } from '../../src/core/canonical/json.js';
import { READ_SCOPE_OPERATIONS, TOOLS } from '../../src/core/contract/tools.js';
import { agentscm, json } from '../support/cli.js';
import { adminSetup, callArgs, checkpointArgs, PROFILE, REPO, startHub, type RunningHub, type Setup } from '../support/hub.js';
import { claimBody, mutationBody, opPath, postOp, resultBody, type OpAnswer } from '../support/hub-http.js';
import { mcpClient, mcpUrl, MODERN, type Revision } from '../support/mcp.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const REQUIREMENT = {
  version: 1,
  workflow: 'mcp-test',
  steps: [
    {
      id: 'check',
      skill: 'run-check',
      action_class: 'command_collector',
      required: true,
      depends_on: [],
      summary: 'run the check',
      criteria: [{ id: 'check-passes', text: 'sh check.sh exits 0', required: true, controller_only: false }],
      references: [{ name: 'check-guide', path: 'docs/CHECK.md', sha256: 'f3b55fd07b520cff661e0f46840328a57996a62eae8b6e186411593c7f9213b2' }],
    },
    { id: 'say', skill: 'say', action_class: 'agent_assertion', required: false, depends_on: [], summary: 'say it', criteria: [{ id: 'said', text: 'said', required: true, controller_only: false }], references: [] },
  ],
};

const ok = (args: string[]): Doc => {
  const r = agentscm([...args, '--json']);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stdout} ${r.stderr}`);
  return json<Doc>(r);
};

describe('workspace MCP endpoint (official MCP client, real HTTP)', () => {
  let s: Setup;
  let hub: RunningHub;
  let token: string;
  let readToken: string;
  let tasks: Task[];
  let subject: JsonValue;
  const agent = new http.Agent({ keepAlive: true });
  const clients: Client[] = [];
  const connect = async (t = token, revision: Revision = MODERN, repository = REPO, profile = PROFILE): Promise<Client> => {
    const c = await mcpClient(mcpUrl(hub.url, repository, profile), t, revision);
    clients.push(c);
    return c;
  };
  const viaHttp = (body: JsonValue, t = token): Promise<OpAnswer> => postOp(agent, hub.url, opPath(REPO, PROFILE), t, body);
  const call = async (c: Client, name: string, args: Record<string, unknown>): Promise<{ isError: boolean; doc: Doc }> => {
    const r = (await c.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: Doc; content: { type: string; text: string }[] };
    assert.ok(r.structuredContent, `${name}: structuredContent`);
    assert.deepEqual(JSON.parse(r.content[0]!.text), r.structuredContent, 'the text content is the same document');
    return { isError: r.isError === true, doc: r.structuredContent };
  };
  /** Calls the tool and the HTTP operation with the same request; both answers must be equal. */
  const same = async (c: Client, name: string, args: Record<string, JsonValue>, status = 200): Promise<Doc> => {
    const m = await call(c, name, args);
    const h = await viaHttp({ operation: name, ...args });
    assert.equal(h.status, status, `${name} over HTTP: ${JSON.stringify(h.body)}`);
    assert.equal(m.isError, status !== 200, `${name}: isError`);
    assert.deepEqual(m.doc, h.body, `${name}: MCP and HTTP answers`);
    return m.doc;
  };

  before(async () => {
    const reqFile = path.join(fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'agentscm-req-')), 'requirement.json');
    fs.writeFileSync(reqFile, JSON.stringify(REQUIREMENT));
    s = adminSetup(reqFile);
    token = fs.readFileSync(s.tokenFile, 'utf8').trim();
    const readFile = path.join(s.root, 'read-token');
    const r = ok(['authority', 'token', 'issue', '--data-dir', s.dataDir, '--owner', 'alice', '--agent', 'reader', '--scope', 'read', '--out', readFile]);
    assert.equal(r.scope, 'read');
    readToken = fs.readFileSync(readFile, 'utf8').trim();
    ok(checkpointArgs(s, 'c1').slice(0, -1));
    const a = Authority.open(s.dataDir, { readonly: true });
    try {
      tasks = a.tasksFor(a.currentSubject(REPO, PROFILE, 'c1'));
    } finally {
      a.close();
    }
    subject = subjectToJson(tasks[0]!.subject) as unknown as JsonValue;
    hub = await startHub(s.dataDir);
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    agent.destroy();
    await hub?.stop();
  });

  test('the tool list: all sixteen for a full token, the read-only nine for a read token, each with its request schema', async () => {
    const full = await connect();
    const listed = (await full.listTools()).tools;
    assert.deepEqual(listed.map((t) => t.name).sort(), TOOLS.map((t) => t.name));
    assert.equal(listed.length, 16);
    const claim = listed.find((t) => t.name === 'claim')!;
    assert.deepEqual(Object.keys(claim.inputSchema.properties ?? {}).sort(), ['change_id', 'execution_operation_id', 'executor_id', 'request_id', 'requested_lease_ms', 'subject', 'task_digest', 'task_id']);
    assert.equal((claim.inputSchema as Doc).additionalProperties, false);
    assert.ok(claim.description && claim.description.length > 40);
    const read = await connect(readToken);
    const readListed = (await read.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(readListed, [...READ_SCOPE_OPERATIONS].sort());
    assert.deepEqual(readListed, ['capabilities', 'collector_descriptor', 'instructions', 'next', 'qualification', 'recovery', 'reference', 'requirements', 'status']);
  });

  test('both protocol eras: 2026-07-28 (discover, no initialize) and the initialize path of 2025-11-25 and 2025-06-18', async () => {
    const answers: Doc[] = [];
    for (const rev of [MODERN, '2025-11-25', '2025-06-18'] as const) {
      const c = await connect(token, rev);
      assert.equal(c.getNegotiatedProtocolVersion(), rev);
      assert.equal((await c.listTools()).tools.length, 16);
      answers.push((await call(c, 'qualification', { subject })).doc);
    }
    assert.deepEqual(answers[1], answers[0]);
    assert.deepEqual(answers[2], answers[0]);
    // A raw 2026-07-28 request: no session id comes back, the answer is one JSON body.
    const res = await fetch(mcpUrl(hub.url, REPO, PROFILE), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.equal(res.headers.get('mcp-session-id'), null);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    assert.ok((JSON.parse(text) as Doc).result, text);
  });

  test("the access log counts an MCP answer's body bytes, a JSON body and an event stream alike", async () => {
    const url = mcpUrl(hub.url, REPO, PROFILE);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const received: Record<string, number> = {};
    const logLines = (): Doc[] =>
      hub
        .stderr()
        .split('\n')
        .filter((l) => l.startsWith('{"at":'))
        .map((l) => JSON.parse(l) as Doc);
    const untilLogged = async <T>(f: (lines: Doc[]) => T | undefined): Promise<T> => {
      for (let i = 0; i < 100; i++) {
        const found = f(logLines());
        if (found !== undefined) return found;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error('the access-log lines did not come');
    };
    // A marker (a path of its own, 404): once its line is logged, every earlier request's line is before it.
    const marker = `/v1/hub/marker-${process.pid}`;
    await (await fetch(new URL(marker, hub.url))).text();
    const before = await untilLogged((lines) => {
      const i = lines.findIndex((l) => l.path === marker);
      return i >= 0 ? i : undefined;
    });
    // One JSON body (2026-07-28), then the one-message event stream a legacy initialize gets.
    const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
    const discover = await fetch(url, { method: 'POST', headers: { ...headers, 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } }) });
    assert.match(discover.headers.get('content-type') ?? '', /application\/json/);
    received.json = Buffer.byteLength(await discover.text());
    const init = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) });
    assert.match(init.headers.get('content-type') ?? '', /text\/event-stream/);
    received.stream = Buffer.byteLength(await init.text());
    const logged = () =>
      untilLogged((lines) => {
        const mine = lines.slice(before + 1).filter((l) => l.path === '/v1/hub/workspace/mcp');
        return mine.length >= 2 ? mine : undefined;
      });
    const [json, stream] = await logged();
    assert.ok(received.json! > 50 && received.stream! > 50, JSON.stringify(received));
    assert.deepEqual([json!.status, json!.bytes, json!.finished, stream!.status, stream!.bytes, stream!.finished], [200, received.json, true, 200, received.stream, true]);
  });

  test('every read tool answers exactly what the HTTP facade answers', async () => {
    const c = await connect();
    await same(c, 'capabilities', {});
    await same(c, 'requirements', { subject });
    await same(c, 'next', { subject });
    await same(c, 'qualification', { subject });
    const t = tasks[0]!;
    await same(c, 'instructions', { subject, task_id: t.task_id, task_digest: t.task_digest, supported_schema_versions: [1] });
    const ref = await same(c, 'reference', { subject, task_id: t.task_id, task_digest: t.task_digest, name: 'check-guide', expected_sha256: 'f3b55fd07b520cff661e0f46840328a57996a62eae8b6e186411593c7f9213b2', expected_schema_version: 1 });
    assert.equal(ref.status, 'available');
    await same(c, 'status', { subject, task_id: t.task_id, task_digest: t.task_digest, attempt_id: null });
    await same(c, 'recovery', { subject, task_id: t.task_id, attempt_id: null, request_id: null });
    // A read token gets the same answers.
    const r = await connect(readToken);
    const q = await call(r, 'qualification', { subject });
    assert.deepEqual(q.doc, (await viaHttp({ operation: 'qualification', subject })).body);
  });

  test('mutations through MCP: claim, heartbeat, result, reconcile, cancel; each equal to the HTTP replay of the same request; the claim is visible to agent-task status', async () => {
    const c = await connect();
    const t = tasks.find((x) => x.step.id === 'say')!;
    const claimArgs = claimBody(t, 'mcp-claim-1') as Doc;
    delete claimArgs.operation;
    const claimed = await call(c, 'claim', claimArgs);
    assert.equal(claimed.isError, false, JSON.stringify(claimed.doc));
    assert.equal(claimed.doc.operation, 'claim');
    assert.equal(claimed.doc.replayed, false);
    assert.deepEqual(claimed.doc.attempt.agent, { owner_id: 'alice', agent_id: 'claude' }, 'the actor comes from the token');
    const replay = await viaHttp(claimBody(t, 'mcp-claim-1'));
    assert.equal(replay.status, 200);
    assert.deepEqual({ ...replay.body, replayed: false }, claimed.doc, 'the HTTP replay of the identical request is the same answer');

    const status = ok(callArgs(s, hub.url, 'status', 'c1', '--task-id', t.task_id).slice(0, -1));
    assert.equal(status.attempt?.attempt_id, claimed.doc.attempt.attempt_id, JSON.stringify(status));
    assert.equal(status.attempt?.state, 'leased');

    const attempt = claimed.doc.attempt as Doc;
    const strip = (b: JsonValue): Doc => {
      const d = { ...(b as Doc) };
      delete d.operation;
      return d;
    };
    for (const [op, id] of [['heartbeat', 'mcp-hb-1']] as const) {
      const m = await call(c, op, strip(mutationBody(op, attempt, id)));
      assert.equal(m.isError, false, JSON.stringify(m.doc));
      const h = await viaHttp(mutationBody(op, attempt, id));
      assert.deepEqual({ ...h.body, replayed: false }, m.doc);
    }
    const res = await call(c, 'result', strip(resultBody(t, attempt, 'mcp-res-1', 'alice', 'claude')));
    assert.equal(res.isError, false, JSON.stringify(res.doc));
    assert.equal(res.doc.retained.passing, false);
    assert.deepEqual({ ...(await viaHttp(resultBody(t, attempt, 'mcp-res-1', 'alice', 'claude'))).body, replayed: false }, res.doc);

    // A second claim of another Change's task, then reconcile and cancel through MCP.
    await same(c, 'recovery', { subject: null, task_id: t.task_id, attempt_id: null, request_id: 'mcp-claim-1' });
    const cancel = await call(c, 'cancel', strip(mutationBody('cancel', attempt, 'mcp-cancel-1')));
    const hc = await viaHttp(mutationBody('cancel', attempt, 'mcp-cancel-1'));
    assert.deepEqual(cancel.isError ? hc.body : { ...hc.body, replayed: false }, cancel.doc, 'cancel: MCP and HTTP');
    const rec = await call(c, 'reconcile', strip(mutationBody('reconcile', attempt, 'mcp-rec-1')));
    const hr = await viaHttp(mutationBody('reconcile', attempt, 'mcp-rec-1'));
    assert.deepEqual(rec.isError ? hr.body : { ...hr.body, replayed: false }, rec.doc, 'reconcile: MCP and HTTP');
  });

  test('collector tools: claim, descriptor and finalize refusals carry the facade codes', async () => {
    const c = await connect();
    const t = tasks.find((x) => x.step.id === 'check')!;
    const cc = await same(c, 'collector_claim', { request_id: 'mcp-cc-1', subject, task_id: t.task_id, task_digest: t.task_digest, execution_operation_id: 'mcp-cc-exec', requested_lease_ms: 600_000, executor_id: 'nobody' }, 409);
    assert.equal(cc.error.code, 'enrollment_not_current');
    assert.match(cc.error.code, /^[a-z_]+$/);
    const d = await call(c, 'collector_descriptor', { task_id: t.task_id, attempt_id: 'a'.repeat(24) });
    const hd = await viaHttp({ operation: 'collector_descriptor', task_id: t.task_id, attempt_id: 'a'.repeat(24) });
    assert.notEqual(hd.status, 200);
    assert.equal(d.isError, true);
    assert.deepEqual(d.doc, hd.body);
    const f = await call(c, 'collector_finalize', { request_id: 'mcp-fin-1', subject });
    const hf = await viaHttp({ operation: 'collector_finalize', request_id: 'mcp-fin-1', subject });
    assert.equal(f.isError, hf.status !== 200);
    assert.deepEqual(f.doc, hf.body);
  });

  test('refusals: bad input, scope, a revoked token, another repository or profile', async () => {
    const c = await connect();
    // Bad input: the facade's strict decoding and its code, never SDK internals.
    const bad = await same(c, 'qualification', { subject: { ...(subject as Doc), change_version: 1.5 } }, 400);
    assert.equal(bad.error.code, 'invalid_request');
    const extra = await same(c, 'capabilities', { actor: 'mallory' }, 400);
    assert.equal(extra.error.code, 'invalid_request');
    const scoped = await call(c, 'next', { subject: { ...(subject as Doc), repository: 'other/repo' } });
    assert.equal(scoped.isError, true);
    assert.equal(scoped.doc.error.code, 'subject_scope_mismatch');

    // A read token: mutations are 403 on both doors.
    const t = tasks.find((x) => x.step.id === 'say')!;
    const h = await viaHttp(claimBody(t, 'read-claim'), readToken);
    assert.equal(h.status, 403);
    assert.equal(h.body.error.code, 'insufficient_scope');
    const body = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'claim', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } };
    const raw = await fetch(mcpUrl(hub.url, REPO, PROFILE), { method: 'POST', headers: { authorization: `Bearer ${readToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN }, body: JSON.stringify(body) });
    assert.equal(raw.status, 403);
    assert.equal(((await raw.json()) as Doc).error.code, 'insufficient_scope');
    const read = await connect(readToken);
    await assert.rejects(read.callTool({ name: 'claim', arguments: {} }));

    // Another repository (a repository-bound token) and an unknown profile: refused before MCP.
    const otherFile = path.join(s.root, 'other-token');
    ok(['authority', 'token', 'issue', '--data-dir', s.dataDir, '--owner', 'alice', '--agent', 'x', '--repository', 'other/repo', '--out', otherFile]);
    const other = fs.readFileSync(otherFile, 'utf8').trim();
    await assert.rejects(connect(other));
    const post = (t2: string, url: URL, extraHeaders: Record<string, string> = {}, payload = '{"jsonrpc":"2.0","id":1,"method":"ping"}') =>
      fetch(url, { method: 'POST', headers: { authorization: `Bearer ${t2}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extraHeaders }, body: payload });
    const forbidden = await post(other, mcpUrl(hub.url, REPO, PROFILE));
    assert.equal(forbidden.status, 403);
    assert.equal(((await forbidden.json()) as Doc).error.code, 'forbidden');
    const noProfile = await post(token, mcpUrl(hub.url, REPO, 'nosuch'));
    assert.equal(noProfile.status, 404);
    assert.equal(((await noProfile.json()) as Doc).error.code, 'profile_not_found');
    await assert.rejects(connect(token, MODERN, REPO, 'nosuch'));

    // A revoked token fails on its next request, on a client that was connected before.
    const revFile = path.join(s.root, 'rev-token');
    const issued = ok(['authority', 'token', 'issue', '--data-dir', s.dataDir, '--owner', 'alice', '--agent', 'y', '--out', revFile]);
    const rev = await connect(fs.readFileSync(revFile, 'utf8').trim());
    assert.equal((await call(rev, 'capabilities', {})).isError, false);
    ok(['authority', 'token', 'revoke', '--data-dir', s.dataDir, '--token-id', issued.token_id]);
    await assert.rejects(rev.callTool({ name: 'capabilities', arguments: {} }));
    const unauth = await post(fs.readFileSync(revFile, 'utf8').trim(), mcpUrl(hub.url, REPO, PROFILE));
    assert.equal(unauth.status, 401);
    assert.equal(((await unauth.json()) as Doc).error.code, 'unauthenticated');
  });

  test('arguments reach the facade as sent: an integer beyond 2^53, a "__proto__" member, a result over 64 KiB, the Change form', async () => {
    const url = mcpUrl(hub.url, REPO, PROFILE);
    const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
    /** A tools/call whose arguments are the given JSON text, as a client would write it; the tool's result. */
    const rawCall = async (name: string, argsText: string): Promise<{ isError: boolean; doc: Doc }> => {
      const body = `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":${argsText},"_meta":${JSON.stringify(meta)}}}`;
      const r = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name }, body });
      assert.equal(r.status, 200, name);
      const doc = (await r.json()) as Doc;
      assert.ok(doc.result?.structuredContent, `${name}: ${JSON.stringify(doc)}`);
      assert.deepEqual(JSON.parse(doc.result.content[0].text), doc.result.structuredContent);
      return { isError: doc.result.isError === true, doc: doc.result.structuredContent };
    };
    const httpText = async (text: string): Promise<OpAnswer> => {
      const r = await fetch(new URL(opPath(REPO, PROFILE), hub.url), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: text });
      return { status: r.status, body: (await r.json()) as Doc } as OpAnswer;
    };
    for (const args of ['{"x":12345678901234567890}', '{"__proto__":1}', '{"__proto__":{"operation":"land"}}']) {
      const m = await rawCall('capabilities', args);
      const h = await httpText(`{"operation":"capabilities",${args.slice(1)}`);
      assert.equal(h.status, 400, args);
      assert.equal(m.isError, true, args);
      assert.deepEqual(m.doc, h.body, `${args}: MCP and HTTP answers`);
      assert.equal(m.doc.error.code, 'invalid_request');
    }
    // Arguments that are not a JSON object: the facade's refusal as a tool error, not the SDK's -32602.
    for (const args of ['"x"', '[1]', 'null', '5', 'true']) {
      const m = await rawCall('capabilities', args);
      assert.equal(m.isError, true, args);
      assert.deepEqual(m.doc, { error: { code: 'invalid_request', message: 'tool arguments must be a JSON object' } }, args);
    }
    const op = await rawCall('capabilities', '{"operation":"claim"}');
    assert.equal(op.isError, true);
    assert.equal(op.doc.error.code, 'invalid_request');

    // A result whose request is over the operations' 64 KiB but within the result bound, on both doors.
    const c = await connect();
    // A Change of its own: the tasks of c1 are finished by the tests before.
    ok(checkpointArgs(s, 'c-big').slice(0, -1));
    const a = Authority.open(s.dataDir, { readonly: true });
    let t: Task;
    try {
      t = a.tasksFor(a.currentSubject(REPO, PROFILE, 'c-big')).find((x) => x.step.id === 'say')!;
    } finally {
      a.close();
    }
    const claimArgs = claimBody(t, 'mcp-big-claim') as Doc;
    delete claimArgs.operation;
    const claimed = await call(c, 'claim', claimArgs);
    assert.equal(claimed.isError, false, JSON.stringify(claimed.doc));
    const big = resultBody(t, claimed.doc.attempt as Doc, 'mcp-big-res', 'alice', 'claude') as Doc;
    big.assertion.criteria[0].findings = Array.from({ length: 25 }, () => 'y'.repeat(4000));
    const bigArgs = { ...big };
    delete bigArgs.operation;
    assert.ok(JSON.stringify(big).length > 100_000);
    const res = await call(c, 'result', bigArgs);
    assert.equal(res.isError, false, JSON.stringify(res.doc));
    const again = await viaHttp(big);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.deepEqual({ ...again.body, replayed: false }, res.doc, 'a large result: MCP and HTTP');

    // The Change form: the tool's schema offers change_id beside subject, and the facade takes it.
    const listed = (await c.listTools()).tools;
    const next = listed.find((x) => x.name === 'next')!.inputSchema as Doc;
    assert.ok(next.properties.change_id && next.properties.subject);
    assert.ok(!(next.required ?? []).includes('subject'), 'subject is not required: change_id may stand for it');
    assert.equal(listed.find((x) => x.name === 'heartbeat')!.inputSchema.properties?.change_id, undefined, 'no Change form without a subject');
    await same(c, 'next', { change_id: 'c1' });
  });

  test('subscriptions/listen: a stream stays open, and one token holds at most 16 at once', async () => {
    const url = mcpUrl(hub.url, REPO, PROFILE);
    const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 21, method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: meta } });
    /** Opens a listen request; resolves with its status once the head is in, the response left open. */
    /** A listen request: its status once the head is in (a stream left open), and a refusal's document. */
    const listen = (t = token): Promise<{ status: number; type: string; refusal: Promise<Doc>; req: http.ClientRequest }> =>
      new Promise((resolve, reject) => {
        const req = http.request(url, { method: 'POST', headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': 'subscriptions/listen', 'content-length': Buffer.byteLength(body) } }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c));
          const refusal = new Promise<Doc>((done) => res.on('end', () => done(JSON.parse(text) as Doc)));
          resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), refusal, req });
        });
        req.on('error', reject);
        req.end(body);
      });
    const open: Awaited<ReturnType<typeof listen>>[] = [];
    try {
      for (let i = 0; i < 16; i++) open.push(await listen());
      for (const o of open) {
        assert.equal(o.status, 200);
        assert.match(o.type, /^text\/event-stream/);
      }
      const over = await listen();
      assert.equal(over.status, 429);
      assert.equal((await over.refusal).error.code, 'too_many_streams');
      // Another token is not held back by this one's streams.
      const other = await listen(readToken);
      assert.equal(other.status, 200);
      open.push(other);
      // A stream the client closes frees its place.
      const first = open.shift()!;
      first.req.destroy();
      await new Promise((r) => setTimeout(r, 200));
      const again = await listen();
      assert.equal(again.status, 200);
      open.push(again);
    } finally {
      for (const o of open) o.req.destroy();
    }
  });

  test('the endpoint: POST only, no browser Origin, JSON only, bounded bodies', async () => {
    const url = mcpUrl(hub.url, REPO, PROFILE);
    for (const method of ['GET', 'DELETE', 'PUT']) {
      const r = await fetch(url, { method, headers: { authorization: `Bearer ${token}` } });
      assert.equal(r.status, 405, method);
      assert.equal(r.headers.get('allow'), 'POST');
      assert.equal(((await r.json()) as Doc).error.code, 'method_not_allowed');
    }
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const origin = await fetch(url, { method: 'POST', headers: { ...headers, origin: 'http://evil.example' }, body: ping });
    assert.equal(origin.status, 403);
    assert.equal(((await origin.json()) as Doc).error.code, 'origin_not_allowed');
    const text = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: ping });
    assert.equal(text.status, 415);
    const big = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(300_000) } }) });
    assert.equal(big.status, 413);
    assert.equal(((await big.json()) as Doc).error.code, 'body_too_large');
    const none = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ping });
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer');
    // Decoded strictly, as the facade decodes: a duplicate key (a lax parser takes the last) is JSON-RPC's parse error.
    const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
    const dupBody = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"capabilities","arguments":{"operation":"x","operation":"capabilities"},"_meta":${JSON.stringify(meta)}}}`;
    const dup = await fetch(url, { method: 'POST', headers: { ...headers, 'mcp-protocol-version': MODERN }, body: dupBody });
    assert.equal(dup.status, 400);
    const dupDoc = (await dup.json()) as Doc;
    assert.equal(dupDoc.error.code, -32700);
    assert.match(dupDoc.error.message, /duplicate/);
    const badUtf8 = await fetch(url, { method: 'POST', headers, body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]) });
    assert.equal(badUtf8.status, 400);
    // A malformed Host header is the client's, not a server error.
    const hosted = await new Promise<number>((resolve, reject) => {
      const r = http.request(url, { method: 'POST', headers: { ...headers, host: 'a b', 'content-length': Buffer.byteLength(ping) } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      r.on('error', reject);
      r.end(ping);
    });
    assert.ok(hosted < 500, `status ${hosted}`);
  });
});
