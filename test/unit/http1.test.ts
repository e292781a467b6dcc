// The Stop hooks' one-request HTTP/1.1 client (src/core/hub-client/http1.ts): the same request as
// HubClient (path, bearer token, JSON body) against a real node:http server on 127.0.0.1:0, and strict
// answer parsing. Malformed HTTP can only be produced by a raw TCP server: those servers are fakes for
// exactly that fault and say so.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { AgentscmError } from '../../src/core/errors.js';
import { isIpv4Literal, isJsonContentType, parseEndpoint } from '../../src/core/hub-client/answer.js';
import { callOnce, HubConnection, MAX_HEAD_BYTES, type WireKind } from '../../src/core/hub-client/http1.js';

const TOKEN = 'agentscm_wt1_0123456789abcdef01234567_' + 'A'.repeat(43);
const servers: (http.Server | net.Server)[] = [];
after(() => servers.forEach((s) => s.close()));

function listen(s: http.Server | net.Server): Promise<string> {
  servers.push(s);
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(s.address() as AddressInfo).port}`)));
}

const opts = (endpoint: string, extra: { timeoutMs?: number; maxAnswerBytes?: number } = {}) => ({ endpoint, repository: 'acme/demo', profile: 'default', token: TOKEN, ...extra });
const typed = (kind: string, code?: string) => (e: unknown) => e instanceof AgentscmError && e.kind === kind && (code === undefined || e.code === code);

interface Seen {
  method?: string;
  url?: string;
  headers?: http.IncomingHttpHeaders;
  body?: string;
}

/** A real HTTP server that checks the bearer token and answers with the given handler. */
async function hub(answer: (res: http.ServerResponse, seen: Seen) => void): Promise<{ url: string; seen: Seen }> {
  const seen: Seen = {};
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      Object.assign(seen, { method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() });
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.writeHead(401, { 'content-type': 'text/plain' });
        res.end('no');
        return;
      }
      answer(res, seen);
    });
  });
  return { url: await listen(server), seen };
}

/** A fake Hub that writes raw bytes (the only way to send malformed HTTP). */
async function raw(bytes: (string | Buffer)[], opts: { close?: boolean } = {}): Promise<string> {
  const server = net.createServer((sock) => {
    sock.once('data', () => {
      for (const b of bytes) sock.write(b);
      if (opts.close !== false) sock.end();
    });
    sock.on('error', () => {});
  });
  return listen(server);
}

// Both byte streams: libuv's TCP handle (an IP endpoint, as hooks are given) and node:net (host names,
// or a Node without that handle).
for (const wire of ['auto', 'net'] as const satisfies readonly WireKind[]) {
  describe(`over ${wire === 'auto' ? "libuv's TCP handle" : 'node:net'}`, () => {
    const call = (o: Parameters<typeof callOnce>[0], body: Parameters<typeof callOnce>[1]) => callOnce(o, body, wire);
    const connect = (o: ConstructorParameters<typeof HubConnection>[0]) => new HubConnection(o, wire);

    test('sends the HubClient request (path, bearer token, JSON body) and returns the 200 document', async () => {
      const h = await hub((res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true,"n":18446744073709551615}');
      });
      const doc = await call(opts(h.url), { operation: 'qualification', x: 1 });
      assert.deepEqual(doc, { ok: true, n: 18446744073709551615n });
      assert.equal(h.seen.method, 'POST');
      assert.equal(h.seen.url, '/v1/hub/workspace/repositories/acme%2Fdemo/profiles/default/agent-tasks');
      assert.equal(h.seen.headers?.['content-type'], 'application/json');
      assert.equal(h.seen.headers?.['content-length'], String(Buffer.byteLength(h.seen.body!)));
      assert.equal(h.seen.body, '{"operation":"qualification","x":1}');
    });

    test('chunked and close-delimited bodies, and an interim 100 answer, are read', async () => {
      const h = await hub((res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"a":');
        res.write('"b"}');
        res.end();
      });
      assert.deepEqual(await call(opts(h.url), {}), { a: 'b' });
      const closing = await raw(['HTTP/1.1 100 Continue\r\n\r\n', 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"c"', ':1}']);
      assert.deepEqual(await call(opts(closing), {}), { c: 1 });
    });

    test('answers keep the client\'s typed failures: 401, error documents, non-JSON, too large', async () => {
      const wrong = await hub(() => assert.fail('not reached'));
      await assert.rejects(call({ ...opts(wrong.url), token: TOKEN.replace('A', 'B') }, {}), typed('AUTH_REJECTED'));
      const notFound = await hub((res) => {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"code":"subject_not_found","message":"no"}}');
      });
      await assert.rejects(call(opts(notFound.url), {}), typed('NOT_FOUND', 'SUBJECT_NOT_FOUND'));
      const text = await hub((res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>');
      });
      await assert.rejects(call(opts(text.url), {}), typed('HUB_MALFORMED', 'NOT_JSON'));
      const dup = await hub((res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"a":1,"a":2}');
      });
      await assert.rejects(call(opts(dup.url), {}), typed('HUB_MALFORMED', 'INVALID_JSON'));
      const big = await hub((res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ pad: 'x'.repeat(5000) }));
      });
      await assert.rejects(call(opts(big.url, { maxAnswerBytes: 1000 }), {}), typed('HUB_MALFORMED', 'ANSWER_TOO_LARGE'));
      const bigChunked = await hub((res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        for (let i = 0; i < 10; i++) res.write(' '.repeat(500));
        res.end('{}');
      });
      await assert.rejects(call(opts(bigChunked.url, { maxAnswerBytes: 1000 }), {}), typed('HUB_MALFORMED', 'ANSWER_TOO_LARGE'));
    });

    test('no Hub, a silent Hub and a Hub that hangs up are unreachable', async () => {
      const closed = net.createServer();
      const url = await listen(closed);
      await new Promise((r) => closed.close(r));
      await assert.rejects(call(opts(url), {}), typed('HUB_UNREACHABLE', 'HUB_UNREACHABLE'));
      const silent = await raw([], { close: false });
      await assert.rejects(call(opts(silent, { timeoutMs: 200 }), {}), typed('HUB_UNREACHABLE', 'HUB_TIMEOUT'));
      const hangup = await raw([]);
      await assert.rejects(call(opts(hangup), {}), typed('HUB_UNREACHABLE', 'HUB_UNREACHABLE'));
      const cut = await raw(['HTTP/1.1 200 OK\r\nContent-Ty']);
      await assert.rejects(call(opts(cut), {}), typed('HUB_MALFORMED', 'BAD_HTTP'), 'an answer cut inside its header is malformed');
    });

    test('malformed HTTP is a malformed answer', async () => {
      const cases: (string | Buffer)[][] = [
        ['HTTP/2 200 OK\r\n\r\n{}'],
        ['garbage\r\n\r\n'],
        ['HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{}'],
        ['HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}'],
        ['HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}extra'],
        ['HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}'],
        ['HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n'],
        ['HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n'],
        ['HTTP/1.1 200 OK\r\nBad Header\r\n\r\n{}'],
        ['HTTP/1.1 200 OK\r\nX: ' + 'y'.repeat(MAX_HEAD_BYTES) + '\r\n\r\n{}'],
      ];
      for (const c of cases) {
        const url = await raw(c);
        await assert.rejects(call(opts(url), {}), typed('HUB_MALFORMED'), JSON.stringify(c).slice(0, 120));
      }
    });

    test('a HubConnection connects at once and sends its request only when asked; an unused one closes', async () => {
      const events: string[] = [];
      let accepted!: () => void;
      const acceptedOnce = new Promise<void>((r) => (accepted = r));
      const server = net.createServer((sock) => {
        events.push('accepted');
        accepted();
        sock.on('data', (d: Buffer) => {
          events.push(`request ${d.toString('latin1').split('\r\n')[0]}`);
          sock.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}');
        });
        sock.on('error', () => {});
      });
      const url = await listen(server);
      const conn = connect(opts(url));
      // Waits for the connection itself (a busy machine may take a while), then a little longer: a
      // request sent without being asked would have arrived by then.
      await acceptedOnce;
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(events, ['accepted'], 'connected, nothing sent yet');
      assert.deepEqual(await conn.call({ a: 1 }), {});
      assert.deepEqual(events, ['accepted', 'request POST /v1/hub/workspace/repositories/acme%2Fdemo/profiles/default/agent-tasks HTTP/1.1']);

      const unused = connect(opts(url));
      unused.close();
      await assert.rejects(unused.call({}), typed('HUB_UNREACHABLE'));

      const closed = net.createServer();
      const gone = await listen(closed);
      await new Promise((r) => closed.close(r));
      const early = connect(opts(gone));
      await new Promise((r) => setTimeout(r, 50)); // the refusal arrives before the request is sent
      await assert.rejects(early.call({}), typed('HUB_UNREACHABLE', 'HUB_UNREACHABLE'));
    });

    test('a request made before the event loop saw the connection complete (the hook works synchronously meanwhile) is answered; a refusal is named', async () => {
      // The caller blocks without turning the event loop, as a hook does while it reads the workspace:
      // the kernel completes the handshake (or the refusal) meanwhile, but the connection's completion
      // has not been delivered yet when the request is made.
      const block = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
      const h = await hub((res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":1}');
      });
      const conn = connect(opts(h.url));
      block(30);
      assert.deepEqual(await conn.call({ operation: 'qualification' }), { ok: 1 });
      assert.equal(h.seen.body, '{"operation":"qualification"}');

      const closed = net.createServer();
      const gone = await listen(closed);
      await new Promise((r) => closed.close(r));
      const refused = connect(opts(gone));
      block(30);
      await assert.rejects(refused.call({}), (e: unknown) => typed('HUB_UNREACHABLE', 'HUB_UNREACHABLE')(e) && /ECONNREFUSED/.test((e as Error).message));
    });
  });
}

describe('parseEndpoint', () => {
  // The literal IPv4 form is parsed without URL: it must give what URL gives, and leave every other
  // spelling to URL (with URL's checks).
  const viaUrl = (e: string) => {
    const u = new URL(e);
    return { hostname: u.hostname, port: u.port, host: u.host };
  };
  test('agrees with URL on literal and other endpoints', () => {
    for (const e of [
      'http://127.0.0.1:8080', 'http://127.0.0.1:8080/', 'http://10.0.0.255:80', 'http://0.0.0.0:0', 'http://1.2.3.4:65535/',
      'http://127.0.0.1:080', 'http://127.0.0.01:8080', 'http://127.1:8080', 'http://0x7f.0.0.1:9', 'http://127.0.0.1', 'http://127.0.0.1/',
      'http://127.0.0.1:', 'HTTP://127.0.0.1:8080', 'http://localhost:8080', 'http://[::1]:8080', 'http://1.2.3.4.:8080', ' http://1.2.3.4:8080',
    ]) {
      assert.deepEqual({ ...parseEndpoint(e) }, viaUrl(e), e);
    }
  });
  test('refuses what URL refuses or what is not a bare http endpoint', () => {
    for (const e of ['http://256.0.0.1:8080', 'http://1.2.3.4:65536', 'http://1.2.3.4:8080/x', 'http://a@1.2.3.4:8080', 'https://1.2.3.4:8080', 'http://1.2.3.4:8080?q', '1.2.3.4:8080']) {
      assert.throws(() => parseEndpoint(e), (x: unknown) => x instanceof AgentscmError && x.code === 'BAD_ENDPOINT', e);
    }
  });
  test('isIpv4Literal is the canonical dotted quad', () => {
    for (const h of ['0.0.0.0', '127.0.0.1', '255.255.255.255', '1.22.133.249']) assert.equal(isIpv4Literal(h), true, h);
    for (const h of ['256.0.0.1', '01.2.3.4', '1.2.3', '1.2.3.4.5', '1..2.3', '', 'a.b.c.d', '1.2.3.4 ', '-1.2.3.4', '1.2.3.1000']) assert.equal(isIpv4Literal(h), false, h);
  });
});

test('isJsonContentType accepts what /^application\\/json\\b/i accepts', () => {
  for (const t of [
    'application/json', 'Application/JSON', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'application/json ', 'application/json-seq',
    'application/jsonx', 'application/json_1', 'application/json9', 'application/jso', '', 'text/json', ' application/json', 'application/json\u00e9',
    'appl\u0130cation/json', 'app\u017Fication/json', 'application/js\u212Aon', 'APPLICATION/JSON+x',
  ]) {
    assert.equal(isJsonContentType(t), /^application\/json\b/i.test(t), t);
  }
});
