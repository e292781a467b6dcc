// One Hub call over a plain TCP socket: a minimal HTTP/1.1 client for the Stop hooks, which make
// exactly one request per process. node:http (agent, ClientRequest, parser) costs a hook more start-up
// time than the request itself; this sends the same request as HubClient (answer.ts builds the path
// and headers) and judges the answer with the same strict decoding.
//
// One request, "Connection: close", a Content-Length body. The response is parsed strictly: a
// status line, bounded header lines, a body framed by Content-Length, chunked encoding or the end of
// the connection, never more than the answer bound. Anything else is a malformed answer.
//
// The bytes travel over libuv's TCP handle directly when the endpoint is an IP address (what
// install-stop is given for a local Hub): node:net's Socket is a full stream, and loading it (with
// node:stream) and running its connect, write and read paths cold costs a hook process about 10 ms,
// several times the request itself. The handle is the one node:net wraps, reached through
// process.binding (on Node 20, tcp_wrap and stream_wrap are on its allow list, and it warns only under
// --pending-deprecation). When that is missing or differs, and for a host name (which needs a DNS
// lookup), the request goes through node:net, loaded only then: same bytes, same checks.

import * as fs from 'node:fs';
import { HTTP_CONTENT_LENGTH, HTTP_TOKEN } from '../ascii-pattern.js';
import { canonicalJson, type JsonValue } from '../canonical/json.js';
import {
  answerTooLarge, decodeAnswer, DEFAULT_ANSWER_MAX_BYTES, errorFromAnswer, fail, isIpv4Literal, operationPath, parseEndpoint, requestHeaders,
  type Endpoint, type HubAnswer, type HubClientOptions,
} from './answer.js';

/** Bound on the status line and headers of an answer. */
export const MAX_HEAD_BYTES = 16 * 1024;

const malformed = (why: string) => fail('HUB_MALFORMED', 'BAD_HTTP', `the Hub answer is not valid HTTP/1.1 (${why})`);
export { HTTP_CONTENT_LENGTH as CONTENT_LENGTH, HTTP_TOKEN as TOKEN } from '../ascii-pattern.js';

/** The status code of a status line as /^HTTP\/1\.[01] ([1-5][0-9]{2})(?: [^\r\n\0]*)?$/ reads it; undefined if it does not match. */
export function statusLineCode(line: string): number | undefined {
  if (line.length < 12 || !line.startsWith('HTTP/1.') || (line[7] !== '0' && line[7] !== '1') || line[8] !== ' ') return undefined;
  const a = line.charCodeAt(9) - 0x30;
  const b = line.charCodeAt(10) - 0x30;
  const c = line.charCodeAt(11) - 0x30;
  if (a < 1 || a > 5 || b < 0 || b > 9 || c < 0 || c > 9) return undefined;
  if (line.length > 12 && (line[12] !== ' ' || hasCrLfNul(line, 13))) return undefined;
  return a * 100 + b * 10 + c;
}

/** Whether s (from `from` on) holds a NUL, CR or LF: /[\0\r\n]/. */
function hasCrLfNul(s: string, from = 0): boolean {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0 || c === 0x0d || c === 0x0a) return true;
  }
  return false;
}

interface Head {
  readonly status: number;
  readonly headers: Map<string, string>;
  /** Offset of the body in the received bytes. */
  readonly bodyStart: number;
}

/**
 * Where "\r\n\r\n" starts in buf, looked for in the first MAX_HEAD_BYTES + 4 bytes only; -1 if not
 * there. A plain loop: Buffer's indexOf runs node:buffer code that a hook process compiles on its first
 * use (about 0.13 ms), for a search over the two hundred bytes of an answer's head.
 */
function headEnd(buf: Buffer): number {
  const n = Math.min(buf.length, MAX_HEAD_BYTES + 4) - 3;
  for (let i = 0; i < n; i++) {
    if (buf[i] === 0x0d && buf[i + 1] === 0x0a && buf[i + 2] === 0x0d && buf[i + 3] === 0x0a) return i;
  }
  return -1;
}

/** Parses the status line and headers once "\r\n\r\n" has arrived; undefined while incomplete. */
function parseHead(buf: Buffer): Head | undefined {
  const end = headEnd(buf);
  if (end < 0) {
    if (buf.length > MAX_HEAD_BYTES) throw malformed('header section too large');
    return undefined;
  }
  if (end > MAX_HEAD_BYTES) throw malformed('header section too large');
  // Decoded as UTF-8, the decoding already compiled in a hook process (Latin-1's is not, and costs a cold
  // process about 0.1 ms): a name must be a token and a value must hold no CR, LF or NUL either way,
  // and the values read (type, length, coding) are ASCII; other bytes only become U+FFFD.
  const lines = buf.toString('utf8', 0, end).split('\r\n');
  const status = statusLineCode(lines[0]!);
  if (status === undefined) throw malformed('status line');
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    if (!HTTP_TOKEN.test(name) || hasCrLfNul(line)) throw malformed('header line');
    const key = name.toLowerCase();
    const value = line.slice(colon + 1).trim();
    const prev = headers.get(key);
    if (prev !== undefined && (key === 'content-length' || key === 'transfer-encoding' || key === 'content-type') && prev !== value) throw malformed(`conflicting ${key}`);
    headers.set(key, prev !== undefined && key !== 'content-length' && prev !== value ? `${prev}, ${value}` : value);
  }
  return { status, headers, bodyStart: end + 4 };
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
    if (!HTTP_CONTENT_LENGTH.test(cl)) throw malformed('content-length');
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

/** What HubConnection needs from a byte stream: write, ref/unref, close; data, end and errors back. */
interface Wire {
  write(bytes: Buffer): void;
  ref(): void;
  unref(): void;
  close(): void;
}

interface WireEvents {
  data(chunk: Buffer): void;
  end(): void;
  /** A connect, read or write failure; code is the errno name when known. */
  error(code: string | undefined): void;
}

/** libuv's fixed end-of-stream status (UV_EOF). */
const UV_EOF = -4095;

interface TcpHandle {
  connect(req: object, host: string, port: number): number;
  connect6(req: object, host: string, port: number): number;
  readStart(): number;
  writeBuffer(req: object, bytes: Buffer): number;
  /** The socket's descriptor once connect() was issued (-1 before; absent on some platforms). */
  readonly fd?: number;
  onread: (buffer: ArrayBuffer | undefined) => void;
  ref(): void;
  unref(): void;
  close(): void;
}

interface TcpBindings {
  readonly TCP: new (type: number) => TcpHandle;
  readonly TCPConnectWrap: new () => { oncomplete?: (status: number) => void; address?: string; port?: number };
  readonly WriteWrap: new () => { handle?: TcpHandle; oncomplete?: (status: number) => void; async?: boolean; buffer?: Buffer };
  readonly SOCKET: number;
  readonly state: Int32Array;
  readonly kReadBytesOrError: number;
  readonly kArrayBufferOffset: number;
}

let bindings: TcpBindings | null | undefined;

/** libuv's TCP handle as node:net uses it, or null when this Node does not offer it in that shape. */
function tcpBindings(): TcpBindings | null {
  if (bindings !== undefined) return bindings;
  bindings = null;
  try {
    const binding = (process as unknown as { binding?: (name: string) => Record<string, unknown> }).binding;
    if (typeof binding !== 'function') return bindings;
    const tcp = binding('tcp_wrap');
    const stream = binding('stream_wrap');
    const constants = tcp.constants as { SOCKET?: unknown } | undefined;
    const proto = typeof tcp.TCP === 'function' ? (tcp.TCP as { prototype: Record<string, unknown> }).prototype : undefined;
    const ok =
      proto !== undefined && typeof tcp.TCPConnectWrap === 'function' && typeof stream.WriteWrap === 'function' && typeof constants?.SOCKET === 'number' &&
      stream.streamBaseState instanceof Int32Array && typeof stream.kReadBytesOrError === 'number' && typeof stream.kArrayBufferOffset === 'number' &&
      ['connect', 'connect6', 'readStart', 'writeBuffer', 'ref', 'unref', 'close'].every((m) => typeof proto[m] === 'function');
    if (ok) {
      bindings = {
        TCP: tcp.TCP as TcpBindings['TCP'],
        TCPConnectWrap: tcp.TCPConnectWrap as TcpBindings['TCPConnectWrap'],
        WriteWrap: stream.WriteWrap as TcpBindings['WriteWrap'],
        SOCKET: constants!.SOCKET as number,
        state: stream.streamBaseState as Int32Array,
        kReadBytesOrError: stream.kReadBytesOrError as number,
        kArrayBufferOffset: stream.kArrayBufferOffset as number,
      };
    }
  } catch {
    bindings = null;
  }
  return bindings;
}

function errnoName(status: number): string | undefined {
  try {
    return process.getBuiltinModule('node:util').getSystemErrorName(status);
  } catch {
    return undefined;
  }
}

/**
 * A TCP connection on libuv's handle: connect() is issued at once (the handshake runs while the caller
 * works); bytes written before it completes are sent when it does.
 */
function rawWire(b: TcpBindings, host: string, port: number, ipv6: boolean, events: WireEvents): Wire {
  const handle = new b.TCP(b.SOCKET);
  let closed = false;
  let connected = false;
  let pending: Buffer | undefined;
  const failed = (status: number) => {
    if (!closed) events.error(errnoName(status));
  };
  const send = (bytes: Buffer) => {
    const req = new b.WriteWrap();
    req.handle = handle;
    req.buffer = bytes; // kept alive until libuv has written it
    req.async = false;
    req.oncomplete = (status) => {
      if (status < 0) failed(status);
    };
    const err = handle.writeBuffer(req, bytes);
    if (err < 0) process.nextTick(failed, err);
  };
  handle.onread = (buffer) => {
    if (closed) return;
    const n = b.state[b.kReadBytesOrError]!;
    if (n > 0 && buffer) events.data(Buffer.from(buffer, b.state[b.kArrayBufferOffset]!, n));
    else if (n === UV_EOF) events.end();
    else if (n < 0) failed(n);
  };
  const req = new b.TCPConnectWrap();
  req.address = host;
  req.port = port;
  req.oncomplete = (status) => {
    if (closed) return;
    if (status < 0) return failed(status);
    connected = true;
    const err = handle.readStart();
    if (err < 0) return failed(err);
    if (pending) send(pending);
    pending = undefined;
  };
  const err = ipv6 ? handle.connect6(req, host, port) : handle.connect(req, host, port);
  if (err < 0) process.nextTick(failed, err);
  /**
   * Writes what the kernel takes now, straight to the descriptor, and returns the rest. libuv learns
   * that a connection is established only in a later turn of the event loop (and holds writes until
   * then), but with a Hub on loopback or nearby the handshake has long completed in the kernel by the
   * time the request is ready: written now, the request reaches the Hub a turn of the event loop
   * earlier, and the Hub's work overlaps this process's. A socket still connecting refuses with
   * EAGAIN, and then everything waits for the connection as before; a connection that failed reports
   * its error here, which libuv's completion would no longer see (reading it clears it).
   */
  const writeNow = (bytes: Buffer): Buffer => {
    const fd = handle.fd;
    if (typeof fd !== 'number' || fd < 0) return bytes;
    try {
      return bytes.subarray(fs.writeSync(fd, bytes, 0, bytes.length));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'EAGAIN' && code !== 'EWOULDBLOCK' && code !== 'ENOTCONN') {
        process.nextTick(() => {
          if (!closed) events.error(code);
        });
        return Buffer.alloc(0);
      }
      return bytes;
    }
  };
  return {
    write(bytes) {
      if (connected) send(bytes);
      else if (pending) pending = Buffer.concat([pending, bytes]);
      else {
        const rest = writeNow(bytes);
        if (rest.length > 0) pending = rest;
      }
    },
    ref: () => handle.ref(),
    unref: () => handle.unref(),
    close() {
      if (closed) return;
      closed = true;
      handle.close();
    },
  };
}

/** The same over node:net (host names, or a Node without the handle above). */
function netWire(host: string, port: number, events: WireEvents): Wire {
  const net = process.getBuiltinModule('node:net');
  const socket = net.connect({ host, port });
  socket.on('data', (c: Buffer) => events.data(c));
  socket.on('end', () => events.end());
  socket.on('error', (e: NodeJS.ErrnoException) => events.error(e.code ?? 'connection error'));
  socket.on('close', () => events.error(undefined));
  return {
    write: (bytes) => void socket.write(bytes),
    ref: () => void socket.ref(),
    unref: () => void socket.unref(),
    close: () => void socket.destroy(),
  };
}

/**
 * Calls onExpiry after ms unless the process ended first: the time limit of a call, which does not
 * keep the process alive (the connection does, while the answer is awaited) and need not be cleared
 * (a late expiry finds the call settled and does nothing). Atomics.waitAsync's time-out is V8's own
 * delayed task: in a cold process it costs about 0.04 ms where Node's first setTimeout costs about
 * 0.6 ms (its timer lists' code compiles on that first use), time a hook otherwise spends while its
 * request is in flight. Node's timer serves where waitAsync is missing.
 */
function armTimeLimit(ms: number, onExpiry: () => void): void {
  const waitAsync = (Atomics as { waitAsync?: (a: Int32Array, i: number, v: number, t: number) => { async: boolean; value: unknown } }).waitAsync;
  if (typeof waitAsync === 'function' && typeof SharedArrayBuffer === 'function') {
    const r = waitAsync(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    // Nothing ever notifies the cell: the wait can only time out.
    if (r.async) {
      void (r.value as Promise<unknown>).then(onExpiry);
      return;
    }
  }
  setTimeout(onExpiry, ms).unref();
}

/** Which byte stream a HubConnection uses: 'auto' (libuv's handle for an IP address) or always 'net'. */
export type WireKind = 'auto' | 'net';

function openWire(kind: WireKind, hostname: string, port: number, events: WireEvents): Wire {
  const ipv6 = hostname.startsWith('[');
  const host = ipv6 ? hostname.slice(1, -1) : hostname;
  const b = kind === 'auto' && (ipv6 || isIpv4Literal(host)) ? tcpBindings() : null;
  return b ? rawWire(b, host, port, ipv6, events) : netWire(host, port, events);
}

/**
 * One connection to the Hub for exactly one request. The TCP connection is opened at construction and
 * the request is sent only by request(): a caller can do local work while the handshake completes.
 * Until request() is called the socket does not keep the process alive; close() ends an
 * unused connection.
 */
export class HubConnection {
  private readonly base: Endpoint;
  private readonly wire: Wire;
  private readonly outcome: Promise<HubAnswer>;
  private resolveOutcome!: (a: HubAnswer) => void;
  private rejectOutcome!: (e: unknown) => void;
  private received: Buffer = Buffer.alloc(0);
  private head: Head | undefined;
  private frame: ReturnType<typeof framing> | undefined;
  private settled = false;
  private sent = false;

  constructor(
    private readonly opts: HubClientOptions,
    wire: WireKind = 'auto',
  ) {
    this.base = parseEndpoint(opts.endpoint);
    this.outcome = new Promise<HubAnswer>((resolve, reject) => {
      this.resolveOutcome = resolve;
      this.rejectOutcome = reject;
    });
    // A failure before request() is reported by request(); until then nobody awaits it.
    this.outcome.catch(() => {});
    this.wire = openWire(wire, this.base.hostname, Number(this.base.port || 80), {
      data: (c) => {
        this.received = this.received.length === 0 ? c : Buffer.concat([this.received, c]);
        this.progress(false);
      },
      end: () => this.progress(true),
      error: (code) => {
        if (code === undefined) this.fail(fail('HUB_UNREACHABLE', 'HUB_UNREACHABLE', 'the Hub closed the connection'));
        else this.fail(fail('HUB_UNREACHABLE', 'HUB_UNREACHABLE', `the Hub could not be reached (${code})`));
      },
    });
    this.wire.unref();
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
      this.wire.ref();
      // The head is ASCII (a percent-encoded path, an IP or punycode host, a token of ASCII), so its
      // UTF-8 bytes are its Latin-1 bytes: one string, encoded once by the path already in use for the
      // body, rather than a Latin-1 encoding and a concatenation that a cold process runs the first time.
      const bytes = Buffer.from(head + body, 'utf8');
      this.wire.write(bytes);
      armTimeLimit(this.opts.timeoutMs ?? 30_000, () => {
        if (!this.settled) this.fail(fail('HUB_UNREACHABLE', 'HUB_TIMEOUT', 'the Hub did not answer in time'));
      });
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
    this.wire.close();
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
export function callOnce(opts: HubClientOptions, body: JsonValue, wire: WireKind = 'auto'): Promise<JsonValue> {
  return new HubConnection(opts, wire).call(body);
}
