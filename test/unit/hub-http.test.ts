// The Hub's HTTP server (src/hub/http.ts: node:http, node:https with a certificate) on 127.0.0.1,
// driven with raw bytes over real sockets, once over plain TCP and once over TLS (the fixed test
// certificate of test/fixtures/tls): framing by Content-Length and chunked coding, pipelining in order,
// Expect: 100-continue, bodies over the bound, closing rules, malformed requests (node:http's answers,
// as JSON error documents), HEAD, and the time limits (shortened here).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { after, describe, test } from 'node:test';
import { closeServer, createHubServer, exchange, listen, MAX_HEAD_BYTES, MAX_PIPELINED, type Exchange, type Limits } from '../../src/hub/http.js';
import { REPO_ROOT } from '../support/cli.js';

const TLS_DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'tls');
const IDENTITY = { cert: fs.readFileSync(path.join(TLS_DIR, 'server.pem')), key: fs.readFileSync(path.join(TLS_DIR, 'server.key')) };
const CA = fs.readFileSync(path.join(TLS_DIR, 'ca.pem'));

const servers: http.Server[] = [];
after(() => Promise.all(servers.map((s) => closeServer(s))));

for (const secure of [false, true]) {
/** A server whose handler is given; resolves its port. */
async function serve(handler: (ex: Exchange) => void, limits?: Limits): Promise<number> {
  const s = createHubServer((req, res) => handler(exchange(req, res)), { ...(limits ? { limits } : {}), ...(secure ? { tls: IDENTITY } : {}) });
  servers.push(s);
  return (await listen(s, 0, '127.0.0.1')).port;
}

/** A raw connection: TCP, or TLS trusting the test CA. */
const connect = (port: number): net.Socket => (secure ? tls.connect({ port, host: '127.0.0.1', ca: CA }) : net.connect(port, '127.0.0.1'));
const connected = secure ? 'secureConnect' : 'connect';

/** An echo handler: answers with what it saw (method, url, a header, the body's text). */
const echo = (max = 1024) => async (ex: Exchange) => {
  const body = ex.method === 'POST' ? await ex.body(max) : Buffer.alloc(0);
  if (body === undefined) return ex.answer(413, '{"error":"too large"}', true);
  ex.answer(200, JSON.stringify({ method: ex.method, url: ex.url, auth: ex.headers.authorization ?? null, body: body.toString() }));
};

/** Writes the parts (pausing between them), then collects everything until the server closes or ms pass. */
function talk(port: number, parts: (string | Buffer)[], opts: { gapMs?: number; end?: boolean; waitMs?: number } = {}): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port);
    let text = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      sock.destroy();
      resolve({ text, closed });
    };
    sock.on('data', (c: Buffer) => (text += c.toString('latin1')));
    sock.on('close', () => finish(true));
    sock.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' || e.code === 'EPIPE' ? finish(true) : reject(e)));
    sock.on(connected, async () => {
      for (const p of parts) {
        if (sock.destroyed) break;
        sock.write(p);
        if (opts.gapMs) await new Promise((r) => setTimeout(r, opts.gapMs));
      }
      if (opts.end) sock.end();
      setTimeout(() => finish(false), opts.waitMs ?? 300);
    });
  });
}

const post = (body: string, extra = '') => `POST /p?q=1 HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer t\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
/** The answers in text, in order: status and body (each framed by its Content-Length). */
function answers(text: string): { status: number; body: string }[] {
  const out: { status: number; body: string }[] = [];
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const head = text.slice(at, end);
    const status = Number(/^HTTP\/1\.1 ([0-9]{3}) /.exec(head)?.[1]);
    const length = Number(/\r\ncontent-length: ([0-9]+)/i.exec(head)?.[1] ?? 0);
    out.push({ status, body: text.slice(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
  return out;
}
const statuses = (text: string) => answers(text).map((a) => a.status);
const bodies = (text: string) => answers(text).map((a) => a.body);

describe(`the Hub HTTP server over ${secure ? 'https' : 'http'}`, () => {
  test('answers a request with one JSON document: status line, length, no-store, keep-alive', async () => {
    const port = await serve(echo());
    const { text, closed } = await talk(port, [post('{"a":1}')]);
    assert.equal(closed, false, 'keep-alive by default');
    const [head, body] = text.split('\r\n\r\n');
    const lines = head!.split('\r\n').map((l) => l.toLowerCase());
    assert.equal(lines[0], 'http/1.1 200 ok');
    for (const l of ['content-type: application/json', `content-length: ${Buffer.byteLength(body!)}`, 'cache-control: no-store', 'connection: keep-alive', 'keep-alive: timeout=5']) {
      assert.ok(lines.includes(l), `${l} in ${head}`);
    }
    assert.deepEqual(JSON.parse(body!), { method: 'POST', url: '/p?q=1', auth: 'Bearer t', body: '{"a":1}' });
  });

  test('a body in pieces, chunked with extensions and trailers, and pipelined requests answered in order', async () => {
    const port = await serve(echo());
    const paced = await talk(port, ['POST /x HTTP/1.1\r\nContent-Length: 10\r\n', '\r\n01234', '56789'], { gapMs: 20 });
    assert.equal(JSON.parse(bodies(paced.text)[0]!).body, '0123456789');
    const chunked = await talk(port, ['POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n', '3;ext=1\r\nabc\r\n', 'A\r\n0123456789\r\n', '0\r\nX-Trailer: y\r\n\r\n'], { gapMs: 10 });
    assert.equal(JSON.parse(bodies(chunked.text)[0]!).body, 'abc0123456789');

    // The first answer comes late, the second at once: still answered in order.
    let n = 0;
    const slowFirst = await serve(async (ex) => {
      const i = n++;
      const b = await ex.body(100);
      if (i === 0) await new Promise((r) => setTimeout(r, 50));
      ex.answer(200, JSON.stringify({ i, body: b!.toString() }));
    });
    const piped = await talk(slowFirst, [post('first') + post('second') + 'GET /third HTTP/1.1\r\n\r\n']);
    assert.deepEqual(bodies(piped.text).map((b) => JSON.parse(b)), [{ i: 0, body: 'first' }, { i: 1, body: 'second' }, { i: 2, body: '' }]);
  });

  test('Connection: close, HTTP/1.0 and a client that half-closes all get their answer, then the close', async () => {
    const port = await serve(echo());
    for (const parts of [[post('x', 'Connection: close\r\n')], ['POST /p HTTP/1.0\r\nContent-Length: 1\r\n\r\nx']]) {
      const r = await talk(port, parts, { waitMs: 2000 });
      assert.deepEqual(statuses(r.text), [200]);
      assert.ok(r.closed, JSON.stringify(parts));
      assert.match(r.text, /\r\nconnection: close\r\n/i);
    }
    const half = await talk(port, [post('y')], { end: true, waitMs: 2000 });
    assert.deepEqual(statuses(half.text), [200]);
    assert.ok(half.closed);
  });

  test('Expect: 100-continue gets its interim answer only when the body is asked for', async () => {
    const port = await serve(async (ex) => {
      if (ex.url === '/refuse') return ex.answer(401, '{}', true);
      const b = await ex.body(100);
      ex.answer(200, JSON.stringify({ body: b!.toString() }));
    });
    const sock = connect(port);
    let got = '';
    sock.on('data', (c: Buffer) => (got += c.toString('latin1')));
    await new Promise((r) => sock.on(connected, r));
    sock.write('POST /p HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n');
    for (let i = 0; i < 100 && !got.includes('\r\n\r\n'); i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(got, 'HTTP/1.1 100 Continue\r\n\r\n');
    sock.write('ok');
    for (let i = 0; i < 100 && !got.includes('"body"'); i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(statuses(got), [100, 200]);
    sock.destroy();
    const refused = await talk(port, ['POST /refuse HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n'], { waitMs: 2000 });
    assert.deepEqual(statuses(refused.text), [401]);
    assert.ok(refused.closed);
  });

  test('a body over the bound: declared or chunked, it is refused and dropped; past 1 MiB the connection is cut', async () => {
    const port = await serve(echo(10));
    const declared = await talk(port, [post('x'.repeat(11))], { waitMs: 2000 });
    assert.deepEqual(statuses(declared.text), [413]);
    assert.ok(declared.closed);
    const chunk = `${(8).toString(16)}\r\n${'y'.repeat(8)}\r\n`;
    const chunked = await talk(port, ['POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n', chunk, chunk, '0\r\n\r\n'], { gapMs: 10, waitMs: 2000 });
    assert.deepEqual(statuses(chunked.text), [413]);
    assert.ok(chunked.closed);
    // A large declared body is answered at once and read and dropped until the bound, then cut.
    const big = await talk(port, [`POST /p HTTP/1.1\r\nContent-Length: ${4 * 1024 * 1024}\r\n\r\n`, ...Array.from({ length: 40 }, () => Buffer.alloc(64 * 1024, 0x61))], { waitMs: 3000 });
    assert.deepEqual(statuses(big.text), [413]);
    assert.ok(big.closed);
  });

  test('a body nobody asked for is not kept; pipelined requests behind a slow one are answered in order; junk is 400', async () => {
    // The handler answers later without asking for the body (as an error answer that waits for a sync
    // does): past 64 KiB the body is dropped, and past 1 MiB of dropping the connection is cut.
    const port = await serve((ex) => {
      if (ex.url === '/late') setTimeout(() => ex.answer(401, '{}'), 300);
      else void ex.body(16).then((b) => ex.answer(200, JSON.stringify({ body: b?.toString() ?? null })));
    });
    const flood = await talk(port, [`POST /late HTTP/1.1\r\nContent-Length: ${8 * 1024 * 1024}\r\n\r\n`, ...Array.from({ length: 64 }, () => Buffer.alloc(64 * 1024, 0x61))], { waitMs: 3000 });
    assert.ok(flood.closed, 'cut once 1 MiB was dropped');
    // Pipelined requests behind one whose answer waits: answered in order once it is out.
    const slow = await serve(async (ex) => {
      const b = await ex.body(1 << 20);
      if (ex.url === '/first') await new Promise((r) => setTimeout(r, 200));
      ex.answer(200, JSON.stringify({ url: ex.url, n: b?.length ?? -1 }));
    });
    const piped = await talk(slow, ['POST /first HTTP/1.1\r\nContent-Length: 1\r\n\r\na', 'POST /second HTTP/1.1\r\nContent-Length: 2\r\n\r\nbc'], { waitMs: 2000 });
    const got = bodies(piped.text).map((b) => JSON.parse(b));
    assert.deepEqual(got, [{ url: '/first', n: 1 }, { url: '/second', n: 2 }]);
    // A megabyte of junk is not a request.
    const junk = await talk(slow, ['x'.repeat(1024 * 1024)], { waitMs: 2000 });
    assert.deepEqual(statuses(junk.text), [400]);
    assert.ok(junk.closed);
    // The server still answers.
    const after = await talk(port, [post('ok')]);
    assert.deepEqual(statuses(after.text), [200]);
  });

  test('malformed requests are 400 (or 431, 501, 505) and close the connection; a handler never sees them', async () => {
    let seen = 0;
    const port = await serve(async (ex) => {
      seen++;
      await ex.body(100);
      ex.answer(200, '{}');
    });
    const cases: [string, number][] = [
      ['POST /p HTTP/1.1\nContent-Length: 0\r\n\r\n', 400],
      // Heads that can never end in CRLF CRLF: refused at once, not at the head time limit.
      ['GET /v1/hub/health HTTP/1.1\nHost: x\n\n', 400],
      ['GET /v1/hub/health HTTP/1.1\rHost: x\r\r', 400],
      ['POST /p HTTP/1.1\r\nX: a\r\n  folded\r\n\r\n', 400],
      ['POST /p HTTP/1.1\r\nX : a\r\n\r\n', 400],
      ['POST /p HTTP/2.0\r\n\r\n', 505],
      ['POST /p FTP/1.1\r\n\r\n', 400],
      ['POST /p HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n', 400],
      ['POST /p HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n', 400],
      ['POST /p HTTP/1.1\r\nContent-Length: -1\r\n\r\n', 400],
      ['POST /p HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n', 501],
      ['POST /p HTTP/1.1\r\nX: a\u0001b\r\n\r\n', 400],
      ['POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400],
      ['POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY', 400],
      // A bare CR in a chunk extension, and a trailer line that is no field line.
      ['POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=a\rb\r\nabc\r\n0\r\n\r\n', 400],
      ['POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\ngarbage\r\n\r\n', 400],
      [`POST /p HTTP/1.1\r\nX: ${'a'.repeat(MAX_HEAD_BYTES)}\r\n\r\n`, 431],
      [`POST /p HTTP/1.1\r\nX: ${'a'.repeat(MAX_HEAD_BYTES)}`, 431],
    ];
    for (const [bytes, status] of cases) {
      const r = await talk(port, [bytes], { waitMs: 2000 });
      assert.deepEqual(statuses(r.text), [status], JSON.stringify(bytes.slice(0, 80)));
      assert.ok(r.closed, JSON.stringify(bytes.slice(0, 80)));
      assert.equal(JSON.parse(bodies(r.text)[0]!).error.code.length > 0, true);
    }
    // Only the chunked cases reached the handler (their heads are well formed).
    assert.equal(seen, 4);
    // Empty lines before a request line are skipped.
    const lead = await talk(port, ['\r\nGET /x HTTP/1.1\r\n\r\n']);
    assert.deepEqual(statuses(lead.text), [200]);
  });

  test('a connection with more than MAX_PIPELINED requests waiting for their answers is closed', async () => {
    let seen = 0;
    const port = await serve((ex) => {
      seen++;
      setTimeout(() => ex.answer(200, '{}'), 500);
    });
    const within = await talk(port, ['GET /a HTTP/1.1\r\n\r\n'.repeat(MAX_PIPELINED)], { waitMs: 1500 });
    assert.equal(statuses(within.text).length, MAX_PIPELINED);
    assert.equal(within.closed, false);
    seen = 0;
    const over = await talk(port, ['GET /a HTTP/1.1\r\n\r\n'.repeat(MAX_PIPELINED + 10)], { waitMs: 1500 });
    assert.ok(over.closed);
    assert.equal(seen, MAX_PIPELINED, 'the requests past the bound reached no handler');
  });

  test('HEAD answers carry no body; the connection goes on with the next request', async () => {
    const port = await serve((ex) => ex.answer(405, JSON.stringify({ error: { code: 'method_not_allowed', message: 'use GET' } })));
    const r = await talk(port, ['HEAD /v1/hub/health HTTP/1.1\r\nHost: h\r\n\r\nHEAD /v1/hub/health HTTP/1.1\r\nHost: h\r\n\r\n']);
    const heads = r.text.split('\r\n\r\n');
    assert.equal(heads.length, 3, 'two heads and nothing after them');
    assert.equal(heads[2], '');
    for (const h of heads.slice(0, 2)) assert.match(h, /^HTTP\/1\.1 405 /);
    assert.equal(r.closed, false);
  });

  test('time limits: a head that does not arrive is 408, an idle connection is closed', async () => {
    const port = await serve(echo(), { headersTimeoutMs: 150, requestTimeoutMs: 400, keepAliveTimeoutMs: 150 });
    const slowHead = await talk(port, ['POST /p HTTP/1.1\r\n'], { waitMs: 3000 });
    assert.deepEqual(statuses(slowHead.text), [408]);
    assert.ok(slowHead.closed);
    const slowBody = await talk(port, ['POST /p HTTP/1.1\r\nContent-Length: 5\r\n\r\nab'], { waitMs: 3000 });
    assert.deepEqual(statuses(slowBody.text), [408]);
    const idle = await talk(port, [post('z')], { waitMs: 3000 });
    assert.deepEqual(statuses(idle.text), [200]);
    assert.ok(idle.closed, 'closed once idle past the keep-alive limit');
  });
});
}

test('https: a connection that never starts its TLS handshake is closed at the head time limit, not at node:https\'s 120 s', async () => {
  const s = createHubServer((req, res) => exchange(req, res).answer(200, '{}'), { limits: { headersTimeoutMs: 300, requestTimeoutMs: 600, keepAliveTimeoutMs: 300 }, tls: IDENTITY });
  servers.push(s);
  const { port } = await listen(s, 0, '127.0.0.1');
  const t0 = Date.now();
  const closedAfter = await new Promise<number>((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const limit = setTimeout(() => {
      sock.destroy();
      reject(new Error('still open after 5 s'));
    }, 5000);
    sock.on('error', () => {});
    sock.on('close', () => {
      clearTimeout(limit);
      resolve(Date.now() - t0);
    });
  });
  assert.ok(closedAfter >= 250, `closed after ${closedAfter} ms`);
});
