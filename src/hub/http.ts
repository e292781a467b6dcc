// The Hub's HTTP/1.1 server: the request framing the Hub needs and no more, on node:net. node:http
// serves every request through two stream objects, a header object, the parser's callbacks and a
// chain of ticks; the Hub's answers are small JSON documents, and that machinery cost it about as much
// CPU per request as the rest of a read (about 55 of 110 µs per request here, bench/README.md). What
// it speaks:
//
// - A request line `METHOD SP request-target SP HTTP/1.1` (or HTTP/1.0), header lines `name: value`,
//   every line ended by CRLF, the head at most 16 KiB (431 otherwise); empty lines before a request
//   line are skipped. Anything else is 400 and the connection closes: a bare LF or CR, a field line
//   folded onto the next, white space before a colon, a control character in a value.
// - A body framed by Content-Length or by chunked Transfer-Encoding (chunk extensions and trailers are
//   read and dropped), never both (400); any other transfer coding is 501. Content-Length,
//   Transfer-Encoding, Authorization, Content-Type and Host must not repeat (400).
// - `Expect: 100-continue` gets its interim answer when the handler asks for the body.
// - Keep-alive by default in HTTP/1.1; `Connection: close` or HTTP/1.0 closes after the answer.
//   Requests on one connection are answered in order, one at a time (a pipelined request waits in the
//   buffer).
// - A body the handler does not read, or refuses as too large, is read and dropped (so that the client
//   sees the answer rather than a reset) up to 1 MiB, then the connection is cut. A handler asks for
//   the body before it returns; until then at most 64 KiB of it is kept. Bytes of further requests
//   sent while one waits for its answer are read at most 16 KiB ahead (the socket pauses meanwhile).
// - Time limits, checked every second: the head within 10 s of its first byte and the whole request
//   within 30 s (else 408 and close), and an idle connection closes after 5 s.
//
// Answers are always `application/json` with Content-Length, in one write.

import * as net from 'node:net';
import { HTTP_CONTENT_LENGTH, HTTP_TOKEN } from '../core/ascii-pattern.js';

export const MAX_HEAD_BYTES = 16 * 1024;
const MAX_CHUNK_LINE = 4 * 1024;
const DISCARD_MAX_BYTES = 1024 * 1024;
/** Body bytes kept before a handler has asked for the body (then it sets its own bound). */
const UNASKED_MAX_BYTES = 64 * 1024;

export interface Limits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
}

const DEFAULT_LIMITS: Limits = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000 };

/** One request and its answer. */
export interface Exchange {
  readonly method: string;
  /** The request target as sent (origin form for the Hub's routes). */
  readonly url: string;
  /** Header values by lower-case name (repeated names other than the unique ones joined by ", "). */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /**
   * The whole body once it has arrived; undefined when it is (or is declared) over max bytes, in which
   * case the rest is dropped. At most once per exchange.
   */
  body(max: number): Promise<Buffer | undefined>;
  /**
   * The whole body when it has already arrived (with the head, as a small request's does): then the
   * handler goes on in the same turn of the event loop. null when it has not arrived yet (then ask
   * body()); undefined when it is over max bytes (then it is dropped). Counts as asking for the body.
   */
  bodyReady(max: number): Buffer | undefined | null;
  /** Sends the answer (a JSON document's text); close ends the connection after it. Once. */
  answer(status: number, json: string, close?: boolean): void;
}

const REASONS: Record<number, string> = {
  100: 'Continue', 200: 'OK', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  408: 'Request Timeout', 409: 'Conflict', 411: 'Length Required', 413: 'Content Too Large', 415: 'Unsupported Media Type',
  422: 'Unprocessable Content', 431: 'Request Header Fields Too Large', 500: 'Internal Server Error', 501: 'Not Implemented',
  503: 'Service Unavailable', 505: 'HTTP Version Not Supported',
};

const UNIQUE = new Set(['content-length', 'transfer-encoding', 'authorization', 'content-type', 'host']);

/** A field value: visible characters, spaces, tabs and obs-text; no other control character. */
const isFieldValue = (s: string): boolean => {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return false;
  }
  return true;
};

/** A request target: visible ASCII only. */
const isTarget = (s: string): boolean => {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
};

/** s from start, without leading and trailing spaces and tabs (optional white space). */
function trimOws(s: string, start: number): string {
  let a = start;
  let b = s.length;
  while (a < b && (s.charCodeAt(a) === 0x20 || s.charCodeAt(a) === 0x09)) a++;
  while (b > a && (s.charCodeAt(b - 1) === 0x20 || s.charCodeAt(b - 1) === 0x09)) b--;
  return s.slice(a, b);
}

/** Whether b holds a LF not preceded by CR, or a CR followed by anything but LF. */
function bareLineBreak(b: Buffer): boolean {
  for (let i = b.indexOf(0x0a); i !== -1; i = b.indexOf(0x0a, i + 1)) if (i === 0 || b[i - 1] !== 0x0d) return true;
  for (let i = b.indexOf(0x0d); i !== -1 && i + 1 < b.length; i = b.indexOf(0x0d, i + 1)) if (b[i + 1] !== 0x0a) return true;
  return false;
}

class HttpFault extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const faultJson = (f: HttpFault) => JSON.stringify({ error: { code: f.code, message: f.message } });

interface Head {
  readonly method: string;
  readonly url: string;
  readonly keepAlive: boolean;
  readonly headers: Record<string, string | undefined>;
  /** -1: chunked; otherwise the Content-Length (0 without a body). */
  readonly length: number;
  readonly expectContinue: boolean;
}

function parseHead(text: string): Head {
  const lines = text.split('\r\n');
  let first = 0;
  while (first < lines.length && lines[first] === '') first++;
  const requestLine = lines[first] ?? '';
  for (const l of lines) if (l.includes('\r') || l.includes('\n')) throw new HttpFault(400, 'bad_request', 'malformed HTTP request: a line not ended by CRLF');
  const parts = requestLine.split(' ');
  if (parts.length !== 3 || !HTTP_TOKEN.test(parts[0]!) || !isTarget(parts[1]!)) throw new HttpFault(400, 'bad_request', 'malformed HTTP request line');
  const version = parts[2]!;
  if (version !== 'HTTP/1.1' && version !== 'HTTP/1.0') {
    if (/^HTTP\/[0-9]\.[0-9]$/.test(version)) throw new HttpFault(505, 'http_version_not_supported', 'this server speaks HTTP/1.1');
    throw new HttpFault(400, 'bad_request', 'malformed HTTP request line');
  }
  const headers: Record<string, string | undefined> = Object.create(null) as Record<string, string | undefined>;
  for (let i = first + 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new HttpFault(400, 'bad_request', 'malformed HTTP header line');
    const name = line.slice(0, colon);
    if (!HTTP_TOKEN.test(name)) throw new HttpFault(400, 'bad_request', 'malformed HTTP header name');
    const value = trimOws(line, colon + 1);
    if (!isFieldValue(value)) throw new HttpFault(400, 'bad_request', 'malformed HTTP header value');
    const key = name.toLowerCase();
    const prior = headers[key];
    if (prior !== undefined) {
      if (UNIQUE.has(key)) throw new HttpFault(400, 'bad_request', `repeated ${key} header`);
      headers[key] = `${prior}, ${value}`;
    } else headers[key] = value;
  }
  const te = headers['transfer-encoding'];
  const cl = headers['content-length'];
  let length = 0;
  if (te !== undefined) {
    if (cl !== undefined) throw new HttpFault(400, 'bad_request', 'both Content-Length and Transfer-Encoding');
    if (te.toLowerCase() !== 'chunked') throw new HttpFault(501, 'not_implemented', 'only the chunked transfer coding is understood');
    length = -1;
  } else if (cl !== undefined) {
    if (!HTTP_CONTENT_LENGTH.test(cl)) throw new HttpFault(400, 'bad_request', 'malformed Content-Length');
    length = Number(cl);
  }
  const connection = (headers.connection ?? '').toLowerCase().split(',').map((t) => t.trim());
  // HTTP/1.0 connections close after one answer.
  const keepAlive = version === 'HTTP/1.1' && !connection.includes('close');
  const expect = headers.expect;
  return { method: parts[0]!, url: parts[1]!, keepAlive, headers, length, expectContinue: version === 'HTTP/1.1' && expect !== undefined && expect.toLowerCase() === '100-continue' };
}

/** Incremental decoder of a chunked body: feed bytes, get data; done once the last chunk and trailers are read. */
class Dechunker {
  private state: 'size' | 'data' | 'data-end' | 'trailer' | 'done' = 'size';
  private left = 0;
  private line = '';

  get done(): boolean {
    return this.state === 'done';
  }

  /** Consumes from b at off; returns [data chunks, bytes consumed]. Throws HttpFault when malformed. */
  feed(b: Buffer, off: number, out: Buffer[]): number {
    let i = off;
    while (i < b.length && this.state !== 'done') {
      if (this.state === 'data') {
        const n = Math.min(this.left, b.length - i);
        out.push(b.subarray(i, i + n));
        i += n;
        this.left -= n;
        if (this.left === 0) this.state = 'data-end';
        continue;
      }
      // A line: size, the CRLF after data, or a trailer line.
      const nl = b.indexOf(0x0a, i);
      const end = nl < 0 ? b.length : nl + 1;
      this.line += b.toString('latin1', i, end);
      i = end;
      if (this.line.length > MAX_CHUNK_LINE || (this.state === 'data-end' && !'\r\n'.startsWith(this.line))) throw new HttpFault(400, 'bad_request', 'malformed chunked body');
      if (nl < 0) break;
      if (!this.line.endsWith('\r\n')) throw new HttpFault(400, 'bad_request', 'malformed chunked body');
      const line = this.line.slice(0, -2);
      this.line = '';
      if (this.state === 'data-end') {
        if (line !== '') throw new HttpFault(400, 'bad_request', 'malformed chunked body');
        this.state = 'size';
      } else if (this.state === 'size') {
        const semi = line.indexOf(';');
        const size = semi < 0 ? line : line.slice(0, semi);
        if (!/^[0-9A-Fa-f]{1,8}$/.test(size)) throw new HttpFault(400, 'bad_request', 'malformed chunk size');
        this.left = parseInt(size, 16);
        this.state = this.left === 0 ? 'trailer' : 'data';
      } else if (line === '') this.state = 'done';
    }
    return i - off;
  }
}

/** One connection: its unparsed bytes and the exchange in progress. */
class Connection {
  private buf: Buffer = Buffer.alloc(0);
  private head: Head | undefined;
  /** Body bytes still to come (Content-Length), or the chunked decoder. */
  private remaining = 0;
  private dechunker: Dechunker | undefined;
  private chunks: Buffer[] = [];
  private received = 0;
  /** What becomes of body bytes: kept up to the limit, or dropped (counted). */
  private limit = Infinity;
  private dropping = false;
  private dropped = 0;
  private deliver: ((b: Buffer | undefined) => void) | undefined;
  private answered = false;
  private closeAfter = false;
  private bodyDone = false;
  private bodyAsked = false;
  private pumping = false;
  /** When the request in progress began (its first byte), and when the connection last went idle. */
  requestStart = 0;
  idleSince: number;
  closed = false;

  constructor(
    readonly socket: net.Socket,
    private readonly handler: (ex: Exchange) => void,
    private readonly onClose: (c: Connection) => void,
  ) {
    this.idleSince = Date.now();
    socket.setNoDelay(true);
    socket.on('data', (c: Buffer) => this.onData(c));
    socket.on('error', () => this.destroy());
    socket.on('close', () => {
      this.closed = true;
      this.onClose(this);
      // A handler waiting for the body of a request whose connection is gone gets no body.
      const d = this.deliver;
      this.deliver = undefined;
      d?.(undefined);
    });
    socket.on('end', () => {
      // The client finished sending (the server allows half-open connections): a request it completed
      // is still answered, then the connection closes; one it left unfinished never will be.
      if (this.head !== undefined && this.bodyDone) this.closeAfter = true;
      else if (this.head === undefined && this.buf.length === 0) {
        this.closed = true;
        this.socket.end();
      } else this.destroy();
    });
  }

  get busy(): boolean {
    return this.head !== undefined || this.buf.length > 0;
  }

  /** Whether the request in progress has its head parsed. */
  get headDone(): boolean {
    return this.head !== undefined;
  }

  /** Whether a request is being received (its head or body incomplete): what the time limits cover. */
  get receiving(): boolean {
    return this.head === undefined ? this.buf.length > 0 : !this.bodyDone;
  }

  destroy(): void {
    if (!this.closed) this.socket.destroy();
  }

  /** Answers an HTTP-level fault and closes. */
  fault(f: HttpFault): void {
    if (this.closed) return;
    // After the answer (a body still being dropped), there is nothing more to say: the connection ends.
    if (this.head !== undefined && this.answered) return this.destroy();
    this.write(f.status, faultJson(f), true);
    this.socket.end();
    this.closed = true;
    // A handler waiting for this request's body gets none; its answer goes nowhere.
    const d = this.deliver;
    this.deliver = undefined;
    d?.(undefined);
  }

  private onData(c: Buffer): void {
    if (this.closed) return;
    if (c.length > 0) this.buf = this.buf.length === 0 ? c : Buffer.concat([this.buf, c]);
    // A client that sends its next requests while one waits for its answer is read no further than a
    // head's worth ahead: the socket pauses until the answer is out.
    if (this.head !== undefined && this.bodyDone && this.buf.length > MAX_HEAD_BYTES && !this.socket.isPaused()) this.socket.pause();
    this.pumping = true;
    try {
      this.pump();
    } catch (e) {
      if (e instanceof HttpFault) this.fault(e);
      else this.destroy();
    } finally {
      this.pumping = false;
    }
  }

  /** Parses as far as the buffered bytes and the exchange in progress allow. */
  private pump(): void {
    for (;;) {
      if (this.closed) return;
      if (this.head === undefined) {
        if (this.buf.length === 0) return;
        if (this.requestStart === 0) this.requestStart = Date.now();
        const end = this.buf.indexOf('\r\n\r\n');
        if (end < 0) {
          if (this.buf.length > MAX_HEAD_BYTES) throw new HttpFault(431, 'header_too_large', `the request head is over ${MAX_HEAD_BYTES} bytes`);
          // A head with a bare LF or CR can never end in CRLF CRLF: refused now, not at the time limit.
          if (bareLineBreak(this.buf)) throw new HttpFault(400, 'bad_request', 'malformed HTTP request: a line not ended by CRLF');
          return;
        }
        if (end + 4 > MAX_HEAD_BYTES) throw new HttpFault(431, 'header_too_large', `the request head is over ${MAX_HEAD_BYTES} bytes`);
        const head = parseHead(this.buf.toString('latin1', 0, end));
        this.buf = this.buf.subarray(end + 4);
        this.start(head);
        // The handler ran: it asked for the body (or answered) synchronously, as the Hub's does.
        continue;
      }
      if (!this.bodyDone) {
        if (this.buf.length === 0) return;
        this.takeBody();
        if (!this.bodyDone) return;
        this.finishBody();
        continue;
      }
      // Body complete: wait for the answer before the next request.
      if (!this.answered) return;
      this.next();
    }
  }

  private start(head: Head): void {
    this.head = head;
    this.answered = false;
    this.bodyAsked = false;
    this.dropping = false;
    this.dropped = 0;
    this.chunks = [];
    this.received = 0;
    this.limit = Infinity;
    this.closeAfter = this.closeAfter || !head.keepAlive;
    this.dechunker = head.length < 0 ? new Dechunker() : undefined;
    this.remaining = head.length < 0 ? 0 : head.length;
    this.bodyDone = head.length === 0;
    // A small body that came with its head is taken now, so that the handler finds it ready.
    if (head.length > 0 && head.length <= UNASKED_MAX_BYTES && this.buf.length >= head.length) this.takeBody();
    const self = this;
    const ex: Exchange = {
      method: head.method,
      url: head.url,
      headers: head.headers,
      body(max: number): Promise<Buffer | undefined> {
        if (self.bodyAsked) return Promise.reject(new Error('the body was asked for twice'));
        self.bodyAsked = true;
        if (head.length > max) {
          self.drop();
          return Promise.resolve(undefined);
        }
        self.limit = max;
        if (self.bodyDone) return Promise.resolve(self.dropping ? undefined : Buffer.concat(self.chunks, self.received));
        if (head.expectContinue && self.received === 0 && self.buf.length === 0) self.socket.write('HTTP/1.1 100 Continue\r\n\r\n');
        return new Promise((resolve) => (self.deliver = resolve));
      },
      bodyReady(max: number): Buffer | undefined | null {
        if (self.bodyAsked || !self.bodyDone) return null;
        self.bodyAsked = true;
        if (head.length > max || self.received > max) {
          self.drop();
          return undefined;
        }
        return self.chunks.length === 1 ? self.chunks[0]! : Buffer.concat(self.chunks, self.received);
      },
      answer(status: number, json: string, close = false): void {
        if (self.answered || self.closed) return;
        self.answered = true;
        if (close) self.closeAfter = true;
        // A body not asked for is dropped; an unfinished one may still arrive (up to the bound).
        if (!self.bodyAsked) self.drop();
        self.write(status, json, self.closeAfter);
        if (self.bodyDone) self.next();
        else if (self.closeAfter && head.expectContinue && self.received === 0 && self.dropped === 0 && self.buf.length === 0) {
          // The client waits for 100 Continue before it sends the body, and will not get it.
          self.closed = true;
          self.socket.end();
        }
      },
    };
    this.handler(ex);
  }

  private drop(): void {
    this.dropping = true;
    this.chunks = [];
    this.received = 0;
  }

  private keep(b: Buffer): void {
    if (this.dropping) {
      this.dropped += b.length;
      if (this.dropped > DISCARD_MAX_BYTES) this.destroy();
      return;
    }
    this.received += b.length;
    // Until the handler asks for the body (the Hub's does before it returns), at most what any request
    // of the Hub may carry in its head's company is kept; the rest goes as a refused body would.
    if (this.received > (this.bodyAsked ? this.limit : UNASKED_MAX_BYTES)) {
      this.drop();
      const d = this.deliver;
      this.deliver = undefined;
      d?.(undefined);
      return;
    }
    this.chunks.push(b);
  }

  private takeBody(): void {
    if (this.dechunker) {
      const out: Buffer[] = [];
      const n = this.dechunker.feed(this.buf, 0, out);
      this.buf = this.buf.subarray(n);
      for (const o of out) this.keep(o);
      if (this.dechunker.done) this.bodyDone = true;
      return;
    }
    const n = Math.min(this.remaining, this.buf.length);
    this.keep(this.buf.subarray(0, n));
    this.buf = this.buf.subarray(n);
    this.remaining -= n;
    if (this.remaining === 0) this.bodyDone = true;
  }

  private finishBody(): void {
    const d = this.deliver;
    this.deliver = undefined;
    if (d) d(this.dropping ? undefined : Buffer.concat(this.chunks, this.received));
    if (this.answered) this.next();
  }

  /** The exchange is over (answered, body read): close, or go on with the next request. */
  private next(): void {
    if (this.head === undefined || this.closed) return;
    this.head = undefined;
    this.requestStart = 0;
    this.idleSince = Date.now();
    this.chunks = [];
    if (this.closeAfter) {
      this.socket.end();
      this.closed = true;
      return;
    }
    if (this.socket.isPaused()) this.socket.resume();
    // A request that waited in the buffer: parsed now (inside pump, its loop goes on by itself).
    if (!this.pumping && this.buf.length > 0) queueMicrotask(() => this.onData(Buffer.alloc(0)));
  }

  private write(status: number, json: string, close: boolean): void {
    const connection = close ? 'connection: close\r\n' : 'connection: keep-alive\r\nkeep-alive: timeout=5\r\n';
    this.socket.write(
      `HTTP/1.1 ${status} ${REASONS[status] ?? 'Unknown'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json, 'utf8')}\r\ncache-control: no-store\r\n${connection}\r\n${json}`,
      'utf8',
    );
  }
}

export interface HubHttpServer {
  listen(port: number, host: string): Promise<net.AddressInfo>;
  /** Stops accepting, closes every connection, and resolves once the listener is closed. */
  close(): Promise<void>;
}

/** An HTTP/1.1 server that hands every request to handler as an Exchange. */
export function createHttpServer(handler: (ex: Exchange) => void, limits: Limits = DEFAULT_LIMITS): HubHttpServer {
  const connections = new Set<Connection>();
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    connections.add(new Connection(socket, handler, (c) => connections.delete(c)));
  });
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const c of connections) {
      if (c.closed) continue;
      if (c.receiving && c.requestStart !== 0) {
        if (!c.headDone && now - c.requestStart > limits.headersTimeoutMs) c.fault(new HttpFault(408, 'request_timeout', 'the request head did not arrive in time'));
        else if (now - c.requestStart > limits.requestTimeoutMs) c.fault(new HttpFault(408, 'request_timeout', 'the request did not arrive in time'));
      } else if (!c.busy && now - c.idleSince > limits.keepAliveTimeoutMs) {
        c.destroy();
      }
    }
  }, Math.min(1000, limits.keepAliveTimeoutMs));
  sweep.unref();
  return {
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve(server.address() as net.AddressInfo));
      }),
    close: () =>
      new Promise((resolve) => {
        clearInterval(sweep);
        server.close(() => resolve());
        for (const c of connections) c.destroy();
      }),
  };
}
