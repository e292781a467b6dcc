// One Hub call over a plain TCP socket: a minimal HTTP/1.1 client for the Stop hooks, which make
// exactly one request per process. node:http (agent, ClientRequest, parser) costs a hook more start-up
// time than the request itself; this sends the same request as HubClient (answer.ts builds the path
// and headers) and judges the answer with the same strict decoding.
//
// One request, "Connection: close", a Content-Length body. The response is parsed strictly: a
// status line, bounded header lines, a body framed by Content-Length, chunked encoding or the end of
// the connection, never more than the answer bound. Anything else is a malformed answer.

import * as net from 'node:net';
import { canonicalJson, type JsonValue } from '../canonical/json.js';
import { answerTooLarge, decodeAnswer, DEFAULT_ANSWER_MAX_BYTES, errorFromAnswer, fail, operationPath, parseEndpoint, requestHeaders, type HubAnswer, type HubClientOptions } from './answer.js';

/** Bound on the status line and headers of an answer. */
export const MAX_HEAD_BYTES = 16 * 1024;

const malformed = (why: string) => fail('HUB_MALFORMED', 'BAD_HTTP', `the Hub answer is not valid HTTP/1.1 (${why})`);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

interface Head {
  readonly status: number;
  readonly headers: Map<string, string>;
  /** Offset of the body in the received bytes. */
  readonly bodyStart: number;
}

/** Parses the status line and headers once "\r\n\r\n" has arrived; undefined while incomplete. */
function parseHead(buf: Buffer): Head | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) {
    if (buf.length > MAX_HEAD_BYTES) throw malformed('header section too large');
    return undefined;
  }
  if (end > MAX_HEAD_BYTES) throw malformed('header section too large');
  const lines = buf.toString('latin1', 0, end).split('\r\n');
  const m = /^HTTP\/1\.[01] ([1-5][0-9]{2})(?: [^\r\n\0]*)?$/.exec(lines[0]!);
  if (!m) throw malformed('status line');
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    if (!TOKEN.test(name) || /[\0\r\n]/.test(line)) throw malformed('header line');
    const key = name.toLowerCase();
    const value = line.slice(colon + 1).trim();
    const prev = headers.get(key);
    if (prev !== undefined && (key === 'content-length' || key === 'transfer-encoding' || key === 'content-type') && prev !== value) throw malformed(`conflicting ${key}`);
    headers.set(key, prev !== undefined && key !== 'content-length' && prev !== value ? `${prev}, ${value}` : value);
  }
  return { status: Number(m[1]), headers, bodyStart: end + 4 };
}

/** The body framing: a fixed length, chunked, or until the connection ends. */
function framing(head: Head): { kind: 'length'; length: number } | { kind: 'chunked' } | { kind: 'close' } {
  const te = head.headers.get('transfer-encoding');
  const cl = head.headers.get('content-length');
  if (te !== undefined) {
    if (te.toLowerCase() !== 'chunked' || cl !== undefined) throw malformed('transfer-encoding');
    return { kind: 'chunked' };
  }
  if (cl !== undefined) {
    if (!/^[0-9]{1,15}$/.test(cl)) throw malformed('content-length');
    return { kind: 'length', length: Number(cl) };
  }
  return { kind: 'close' };
}

/**
 * Decodes a complete chunked body (RFC 9112 §7.1): returns the body once the last chunk and the
 * trailer section have arrived, undefined while incomplete.
 */
function dechunk(buf: Buffer, start: number, max: number): Buffer | undefined {
  const parts: Buffer[] = [];
  let total = 0;
  let off = start;
  for (;;) {
    const eol = buf.indexOf('\r\n', off);
    if (eol < 0) {
      if (buf.length - off > 1024) throw malformed('chunk size line');
      return undefined;
    }
    const m = /^([0-9A-Fa-f]{1,8})(?:;[^\r\n]*)?$/.exec(buf.toString('latin1', off, eol));
    if (!m) throw malformed('chunk size');
    const size = parseInt(m[1]!, 16);
    off = eol + 2;
    if (size === 0) {
      // Trailer fields (ignored), then the empty line.
      for (;;) {
        const t = buf.indexOf('\r\n', off);
        if (t < 0) return undefined;
        if (t === off) {
          if (t + 2 !== buf.length) throw malformed('bytes after the body');
          return Buffer.concat(parts, total);
        }
        off = t + 2;
      }
    }
    total += size;
    if (total > max) throw answerTooLarge();
    if (buf.length < off + size + 2) return undefined;
    if (buf[off + size] !== 0x0d || buf[off + size + 1] !== 0x0a) throw malformed('chunk end');
    parts.push(buf.subarray(off, off + size));
    off += size + 2;
  }
}

/**
 * One connection to the Hub for exactly one request. The TCP connection is opened at construction and
 * the request is sent only by request(): a caller can do local work while the handshake completes.
 * Until request() is called the socket and the timer do not keep the process alive; close() ends an
 * unused connection.
 */
export class HubConnection {
  private readonly base: URL;
  private readonly socket: net.Socket;
  private readonly timer: NodeJS.Timeout;
  private readonly outcome: Promise<HubAnswer>;
  private resolveOutcome!: (a: HubAnswer) => void;
  private rejectOutcome!: (e: unknown) => void;
  private received: Buffer = Buffer.alloc(0);
  private head: Head | undefined;
  private frame: ReturnType<typeof framing> | undefined;
  private settled = false;
  private sent = false;

  constructor(private readonly opts: HubClientOptions) {
    this.base = parseEndpoint(opts.endpoint);
    this.outcome = new Promise<HubAnswer>((resolve, reject) => {
      this.resolveOutcome = resolve;
      this.rejectOutcome = reject;
    });
    // A failure before request() is reported by request(); until then nobody awaits it.
    this.outcome.catch(() => {});
    this.timer = setTimeout(() => this.fail(fail('HUB_UNREACHABLE', 'HUB_TIMEOUT', 'the Hub did not answer in time')), opts.timeoutMs ?? 30_000);
    this.timer.unref();
    this.socket = net.connect({ host: this.base.hostname.replace(/^\[|\]$/g, ''), port: Number(this.base.port || 80) });
    this.socket.unref();
    this.socket.on('data', (c: Buffer) => {
      this.received = this.received.length === 0 ? c : Buffer.concat([this.received, c]);
      this.progress(false);
    });
    this.socket.on('end', () => this.progress(true));
    this.socket.on('error', (e: NodeJS.ErrnoException) => {
      this.fail(fail('HUB_UNREACHABLE', 'HUB_UNREACHABLE', `the Hub could not be reached (${e.code ?? 'connection error'})`));
    });
    this.socket.on('close', () => this.fail(fail('HUB_UNREACHABLE', 'HUB_UNREACHABLE', 'the Hub closed the connection')));
  }

  /** Sends the one request and resolves with the decoded answer (any status); rejects typed. */
  request(pathname: string, body: string): Promise<HubAnswer> {
    if (this.sent) throw new Error('HubConnection carries one request');
    this.sent = true;
    const payload = Buffer.from(body, 'utf8');
    const headers = requestHeaders(this.opts.token, payload, 'application/json');
    let head = `POST ${pathname} HTTP/1.1\r\nHost: ${this.base.host}\r\n`;
    for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
    head += 'Connection: close\r\n\r\n';
    if (!this.settled) {
      this.timer.ref();
      this.socket.ref();
      this.socket.write(Buffer.concat([Buffer.from(head, 'latin1'), payload]));
    }
    return this.outcome;
  }

  /** POSTs one operation (as HubClient.call does) and returns the decoded 200 answer; every other outcome throws typed. */
  async call(body: JsonValue): Promise<JsonValue> {
    const a = await this.request(operationPath(this.opts.repository, this.opts.profile), canonicalJson(body));
    if (a.status === 200) return a.body;
    throw errorFromAnswer(a);
  }

  /** Ends the connection (a no-op once the answer is in). */
  close(): void {
    this.fail(fail('HUB_UNREACHABLE', 'HUB_UNREACHABLE', 'the connection was closed'));
  }

  private fail(e: unknown): void {
    this.finish(() => this.rejectOutcome(e));
  }

  private finish(f: () => void): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.socket.destroy();
    f();
  }

  private complete(body: Buffer): void {
    const h = this.head!;
    const max = this.opts.maxAnswerBytes ?? DEFAULT_ANSWER_MAX_BYTES;
    this.finish(() => {
      try {
        this.resolveOutcome(decodeAnswer(h.status, h.headers.get('content-type') ?? '', body, max));
      } catch (e) {
        this.rejectOutcome(e);
      }
    });
  }

  private progress(ended: boolean): void {
    const max = this.opts.maxAnswerBytes ?? DEFAULT_ANSWER_MAX_BYTES;
    try {
      if (!this.sent) throw malformed('bytes before the request');
      while (!this.head) {
        const h = parseHead(this.received);
        if (!h) {
          // Hung up without a byte of answer: like a refused connection, the request failed.
          if (ended && this.received.length === 0) throw fail('HUB_UNREACHABLE', 'HUB_UNREACHABLE', 'the Hub closed the connection without answering');
          if (ended) throw malformed('connection closed inside the header');
          return;
        }
        if (h.status >= 100 && h.status < 200) {
          // An interim answer (100 Continue): the real one follows.
          this.received = this.received.subarray(h.bodyStart);
          continue;
        }
        this.head = h;
        this.frame = framing(h);
        if (this.frame.kind === 'length' && this.frame.length > max) throw answerTooLarge();
      }
      const start = this.head.bodyStart;
      const frame = this.frame!;
      if (this.received.length - start > max + (frame.kind === 'chunked' ? 64 * 1024 : 0)) throw answerTooLarge();
      if (frame.kind === 'length') {
        const have = this.received.length - start;
        if (have > frame.length) throw malformed('bytes after the body');
        if (have === frame.length) return this.complete(this.received.subarray(start));
        if (ended) throw malformed('connection closed inside the body');
      } else if (frame.kind === 'chunked') {
        const b = dechunk(this.received, start, max);
        if (b) return this.complete(b);
        if (ended) throw malformed('connection closed inside the body');
      } else if (ended) {
        return this.complete(this.received.subarray(start));
      }
    } catch (e) {
      this.fail(e);
    }
  }
}

/** POSTs one operation over a fresh connection (see HubConnection.call). */
export function callOnce(opts: HubClientOptions, body: JsonValue): Promise<JsonValue> {
  return new HubConnection(opts).call(body);
}
