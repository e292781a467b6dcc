// The Hub's HTTP server: node:http, or node:https when the Hub is given a certificate, with the
// bounds the Hub needs. node:http's parser (llhttp) does the framing and refuses what is malformed
// (400, 431 for a head over the bound); this module adds what the Hub's answers share:
//
// - Bounds: the head at most 16 KiB (431); the head within 10 s of its first byte and the whole request
//   within 30 s (408, then the connection closes); an idle keep-alive connection closes after 5 s.
//   The answers node:http writes for these (and for a malformed request) are JSON error documents here,
//   like every other answer of the Hub.
// - A transfer coding other than plain chunked is 501 and an HTTP version other than 1.x is 505 (llhttp
//   decodes the chunked framing and would pass the rest on).
// - `Expect: 100-continue` gets its interim answer only when the handler asks for the body.
// - A body is read up to the bound the route gives (body(max)); a body the handler refuses or never
//   asks for is read and dropped after the answer (so that the client sees the answer rather than a
//   reset), up to 1 MiB, then the connection is cut. While a handler has not asked, node:http keeps at
//   most its stream buffer and stops reading the socket.
// - A client that pipelines requests without reading its answers is read no further once the answers
//   waiting for it fill the socket's buffer (node:http pauses the socket), and a connection with more
//   than 32 requests waiting for their answers is closed.
//
// Answers are `application/json` with Content-Length. The Hub's routes are one plain
// (request, response) listener (server.ts), so that other handlers can be mounted beside it.

import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

export const MAX_HEAD_BYTES = 16 * 1024;
/** Body bytes read and dropped after an answer that refused (or did not ask for) the body. */
const DISCARD_MAX_BYTES = 1024 * 1024;
/**
 * Requests one connection may have waiting for their answers (pipelined): one more closes the
 * connection. The Hub's clients send one request at a time; a client that pipelines without reading
 * its answers would otherwise have the Hub work for it at full speed while others wait.
 */
export const MAX_PIPELINED = 32;
/** A body nobody asked for up to this size is dropped with the connection kept open. */
const UNASKED_MAX_BYTES = 64 * 1024;

export interface Limits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
}

export const DEFAULT_LIMITS: Limits = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000 };

/** A PEM certificate chain and its private key: the Hub then speaks https. */
export interface TlsIdentity {
  readonly cert: Buffer;
  readonly key: Buffer;
}

export type RequestListener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** One request and its answer, as the Hub's routes see it. */
export interface Exchange {
  readonly method: string;
  /** The request target as sent (origin form for the Hub's routes). */
  readonly url: string;
  /** Header values by lower-case name. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /**
   * The whole body once it has arrived; undefined when it is (or is declared) over max bytes or the
   * connection went away. At most once per exchange.
   */
  body(max: number): Promise<Buffer | undefined>;
  /** Sends the answer (a JSON document's text); close ends the connection after it. Once. */
  answer(status: number, json: string, close?: boolean): void;
  /** Names the methods the route allows, for a 405 answer (RFC 9110: it carries Allow). Before answer. */
  allow(methods: string): void;
}

const errorJson = (code: string, message: string) => JSON.stringify({ error: { code, message } });

/**
 * Requests of each connection that were handed to a listener and are not yet answered in full: a client
 * error then can only cut the connection (an answer of its own would come before theirs).
 */
const inFlight = new WeakMap<Duplex, Set<http.ServerResponse>>();

/** The Exchange of one request of a node:http server. */
export function exchange(req: http.IncomingMessage, res: http.ServerResponse): Exchange {
  let asked = false;
  let answered = false;
  const expectContinue = req.httpVersionMinor === 1 && /^100-continue$/i.test(req.headers.expect ?? '');
  let continued = false;
  const socket = req.socket;
  const pending = inFlight.get(socket) ?? new Set<http.ServerResponse>();
  pending.add(res);
  inFlight.set(socket, pending);
  const settle = () => {
    pending.delete(res);
    if (pending.size === 0) inFlight.delete(socket);
  };
  res.once('finish', settle);
  res.once('close', settle);

  /** After the answer: the rest of the body is read and dropped up to the bound, then the connection ends. */
  const finishAfterBody = (): void => {
    // The client waits for 100 Continue before it sends the body, and will not get it.
    if (req.complete || req.destroyed || (expectContinue && !continued)) {
      res.end();
      return;
    }
    let dropped = 0;
    req.removeAllListeners('data');
    req.on('data', (c: Buffer) => {
      dropped += c.length;
      if (dropped > DISCARD_MAX_BYTES) req.socket.destroy();
    });
    req.once('end', () => res.end());
    req.once('close', () => res.end());
    req.resume();
  };

  return {
    method: req.method ?? '',
    url: req.url ?? '',
    headers: req.headers as Record<string, string | undefined>,
    body(max: number): Promise<Buffer | undefined> {
      if (asked) return Promise.reject(new Error('the body was asked for twice'));
      asked = true;
      const declared = req.headers['content-length'];
      if (declared !== undefined && Number(declared) > max) return Promise.resolve(undefined);
      if (expectContinue && !req.complete) {
        continued = true;
        res.writeContinue();
      }
      return new Promise((resolve) => {
        const chunks: Buffer[] = [];
        let received = 0;
        let done = false;
        const finish = (b: Buffer | undefined) => {
          if (done) return;
          done = true;
          req.off('data', onData);
          resolve(b);
        };
        const onData = (c: Buffer) => {
          received += c.length;
          if (received > max) finish(undefined);
          else chunks.push(c);
        };
        req.on('data', onData);
        req.once('end', () => finish(Buffer.concat(chunks, received)));
        req.once('close', () => finish(req.complete ? Buffer.concat(chunks, received) : undefined));
        req.once('error', () => finish(undefined));
      });
    },
    allow(methods: string): void {
      if (!res.headersSent) res.setHeader('allow', methods);
    },
    answer(status: number, json: string, close = false): void {
      if (answered || res.destroyed || res.headersSent) return;
      answered = true;
      // A body still arriving: a small one nobody asked for is read and dropped by node:http (the
      // connection stays open); a refused, large or chunked one ends the connection after the answer.
      const length = req.headers['content-length'];
      const pending = !req.complete && (req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0'));
      const linger = pending && (close || asked || length === undefined || Number(length) > UNASKED_MAX_BYTES);
      const headers: http.OutgoingHttpHeaders = {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(json, 'utf8'),
        'cache-control': 'no-store',
      };
      if (close || linger) headers.connection = 'close';
      res.writeHead(status, headers);
      noteBodyBytes(res, headers['content-length'] as number);
      if (!linger) {
        res.end(json, 'utf8');
        return;
      }
      res.write(json, 'utf8');
      finishAfterBody();
    },
  };
}

/**
 * Wraps a listener with the checks node:http leaves to the application: an HTTP version other than
 * 1.x (505) and a transfer coding other than chunked (501); and the bound on pipelined requests.
 */
function framingChecked(listener: RequestListener): RequestListener {
  return (req, res) => {
    if ((inFlight.get(req.socket)?.size ?? 0) >= MAX_PIPELINED) {
      req.socket.destroy();
      return;
    }
    const te = req.headers['transfer-encoding'];
    let fault: [number, string, string] | undefined;
    if (req.httpVersionMajor !== 1) fault = [505, 'http_version_not_supported', 'this server speaks HTTP/1.1'];
    else if (te !== undefined && te.toLowerCase() !== 'chunked') fault = [501, 'not_implemented', 'only the chunked transfer coding is understood'];
    if (fault) {
      // Answered at once and closed: a body in a framing not understood is not read.
      const json = errorJson(fault[1], fault[2]);
      const length = Buffer.byteLength(json);
      res.writeHead(fault[0], { 'content-type': 'application/json', 'content-length': length, 'cache-control': 'no-store', connection: 'close' });
      noteBodyBytes(res, length);
      res.end(json);
      return;
    }
    listener(req, res);
  };
}

/**
 * The answer to a request node:http refused: malformed (400), a head over the bound (431), or not
 * complete in time (408). Written to the socket, or through the request's own answer when a listener
 * has it and has not begun answering; a connection with other answers pending is only cut (an answer
 * here would come before theirs).
 */
function clientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const pending = inFlight.get(socket);
  const only = pending?.size === 1 ? [...pending][0]! : undefined;
  if (err.code === 'ECONNRESET' || !socket.writable || (pending !== undefined && (only === undefined || only.headersSent))) {
    socket.destroy();
    return;
  }
  let status = 400;
  let json = errorJson('bad_request', 'malformed HTTP request');
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    json = errorJson('header_too_large', `the request head is over ${MAX_HEAD_BYTES} bytes`);
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    json = errorJson('request_timeout', 'the request did not arrive in time');
  }
  if (only) {
    const length = Buffer.byteLength(json);
    only.writeHead(status, { 'content-type': 'application/json', 'content-length': length, 'cache-control': 'no-store', connection: 'close' });
    noteBodyBytes(only, length);
    only.end(json, () => socket.destroy());
    return;
  }
  const reason = http.STATUS_CODES[status] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n${json}`,
  );
}

export interface ServerOptions {
  readonly limits?: Limits;
  /** Serve https with this certificate; plain http without. */
  readonly tls?: TlsIdentity;
  /** Where one JSON access-log line per request goes (withAccessLog), the 501 and 505 answers included. */
  readonly accessLog?: (line: string) => void;
}

/** The access log's count of each answer's body bytes (see noteBodyBytes); only while the log is on. */
const bodyCounts = new WeakMap<http.ServerResponse, { bytes: number }>();

/**
 * Counts n body bytes written to res for its access-log line. Every place that writes an answer's body
 * (exchange's answer, the framing and client-error answers here, the MCP endpoint) reports what it
 * writes: counting inside res.write and res.end would mean replacing them on every response.
 */
export function noteBodyBytes(res: http.ServerResponse, n: number): void {
  const c = bodyCounts.get(res);
  if (c) c.bytes += n;
}

/**
 * Wraps a listener so that each request, once its connection is done with it, writes one JSON line:
 * time, method, path (no query), status, duration and answer bytes (the body bytes the answer handed to
 * node:http, streamed ones included; 0 for HEAD, whose body node:http drops). Never a header or a body.
 */
function withAccessLog(inner: RequestListener, write: (line: string) => void): RequestListener {
  return (req, res) => {
    const t0 = performance.now();
    const count = { bytes: 0 };
    bodyCounts.set(res, count);
    res.once('close', () => {
      const ms = Math.round((performance.now() - t0) * 10) / 10;
      const pathOnly = (req.url ?? '').split('?')[0]!.slice(0, 1024);
      const sent = res.headersSent && req.method !== 'HEAD' ? count.bytes : 0;
      write(JSON.stringify({ at: new Date(Date.now() - ms).toISOString(), method: req.method, path: pathOnly, status: res.headersSent ? res.statusCode : 0, ms, bytes: sent, finished: res.writableFinished }));
    });
    inner(req, res);
  };
}

/** A node:http (or node:https) server with the Hub's bounds that hands every request to listener. */
export function createHubServer(listener: RequestListener, opts: ServerOptions = {}): http.Server {
  const limits = opts.limits ?? DEFAULT_LIMITS;
  const options: http.ServerOptions = {
    maxHeaderSize: MAX_HEAD_BYTES,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // The time limits are checked this often (node:http's default is 30 s).
    connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
    // The Hub's clients always send Host; a request without one is still answered.
    requireHostHeader: false,
    noDelay: true,
  };
  const checked = framingChecked(listener);
  const counted = opts.accessLog ? withAccessLog(checked, opts.accessLog) : checked;
  // Requests received and not yet answered (drainServer waits for them).
  const open = { count: 0, drained: [] as (() => void)[] };
  const wrapped: RequestListener = (req, res) => {
    open.count++;
    res.once('close', () => {
      if (--open.count === 0) for (const f of open.drained.splice(0)) f();
    });
    counted(req, res);
  };
  // A TLS handshake gets the head's time limit too (node:https's own default is 120 s).
  const server = opts.tls
    ? https.createServer({ ...options, cert: opts.tls.cert, key: opts.tls.key, handshakeTimeout: limits.headersTimeoutMs }, wrapped)
    : http.createServer(options, wrapped);
  // Expect: 100-continue goes to the same listener; its interim answer waits for body() (see exchange).
  server.on('checkContinue', wrapped);
  server.on('clientError', clientError);
  // A failed TLS handshake is the client's problem; the connection just ends.
  server.on('tlsClientError', (_e: Error, socket: Duplex) => socket.destroy());
  openRequests.set(server, open);
  return server;
}

/** Starts listening; resolves the bound address. */
export function listen(server: http.Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

const openRequests = new WeakMap<http.Server, { count: number; drained: (() => void)[] }>();

/**
 * Stops accepting and closes idle connections; requests already received are answered (a keep-alive
 * connection closes after its answer) until none is left or waitMs passed, then every connection is
 * cut. Resolves once the listener is closed.
 */
export async function drainServer(server: http.Server, waitMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const open = openRequests.get(server);
  if (open && open.count > 0) {
    // A connection that answered its last request while draining is idle: close it at once.
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, waitMs);
      open.drained.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
    clearInterval(sweep);
  }
  server.closeAllConnections();
  await closed;
}

/** Stops accepting, closes every connection, and resolves once the listener is closed. */
export function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
