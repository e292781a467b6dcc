// What a Hub client needs besides its HTTP module: the token file, the CA file, the endpoint, the
// operation path, the request headers and the strict decoding of an answer (client.ts is the client,
// on node:http or node:https; the commands and the Stop hooks use it alike).
//
// Failures are typed, never turned into empty results: 401/403 -> AUTH_REJECTED, an answer that is
// not one bounded strict JSON document (or an error document of the wrong shape) -> HUB_MALFORMED;
// other fixed Hub errors keep their code.

import { parseStrictJson, type JsonValue } from '../canonical/json.js';
import { AgentscmError, badInput, type ErrorKind } from '../errors.js';
import { readBoundedInput, readPrivateFile, requireAbsolute } from '../fs/safe.js';
import { hubErrorHint } from '../contract/hints.js';

export const TOKEN_FILE_MAX_BYTES = 4096;
export const DEFAULT_ANSWER_MAX_BYTES = 1024 * 1024;
/** Workspace tokens. */
export const WORKSPACE_TOKEN_RE = /^agentscm_wt1_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/;

export function isWorkspaceToken(t: string): boolean {
  return WORKSPACE_TOKEN_RE.test(t);
}

/** Reads a workspace token: absolute path, regular non-symlink file, ours, mode without group/other bits. */
export function readTokenFile(file: string): string {
  requireAbsolute(file, '--token-file');
  const text = readPrivateFile(file, 'token file', TOKEN_FILE_MAX_BYTES).toString('utf8').trim();
  if (!isWorkspaceToken(text)) throw new AgentscmError('LOCAL_STATE', 'BAD_TOKEN_FILE', 'token file does not hold a workspace token');
  return text;
}

/** Reads --ca-file: the PEM certificates an https Hub's certificate must chain to (instead of the system's). */
export function readCaFile(file: string): Buffer {
  const pem = readBoundedInput(file, 1024 * 1024, 'CA file');
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw badInput(`CA file ${file} holds no PEM certificate`, 'BAD_CA_FILE');
  return pem;
}

export interface HubClientOptions {
  /** http://HOST:PORT or https://HOST:PORT of the Hub, no path. */
  readonly endpoint: string;
  /** For https: the PEM CA certificates to trust instead of the system's (--ca-file). */
  readonly ca?: Buffer;
  readonly repository: string;
  readonly profile: string;
  readonly token: string;
  /** How long the connection may stay silent (default 30 s). */
  readonly timeoutMs?: number;
  /** A bound on the whole request, connection to last answer byte (default none). */
  readonly deadlineMs?: number;
  readonly maxAnswerBytes?: number;
  /**
   * Keep each connection open after its answer, until the process ends (default: closed at once). For
   * a process that makes one call and exits, such as a Stop hook: closing the socket on the answer's
   * path costs it time (the teardown, and Node makes the process's stderr stream on a socket's
   * destroy), and the exit closes it anyway. An idle kept connection does not keep the process alive.
   */
  readonly keepConnection?: boolean;
}

export interface HubAnswer {
  readonly status: number;
  readonly body: JsonValue;
}

/** The parts of an endpoint a client uses, as URL names them. */
export interface Endpoint {
  /** https: (TLS) or plain http:. */
  readonly tls: boolean;
  readonly hostname: string;
  /** Empty for the scheme's default port (80, 443). */
  readonly port: string;
  readonly host: string;
}

/** The decimal number in s[i, j) when written without a leading zero and at most max; else -1. */
function canonicalDecimal(s: string, i: number, j: number, max: number): number {
  if (j <= i || j - i > 5 || (s.charCodeAt(i) === 48 && j - i > 1)) return -1;
  let v = 0;
  for (let k = i; k < j; k++) {
    const d = s.charCodeAt(k) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v <= max ? v : -1;
}

/** A dotted-quad IPv4 address in its one canonical spelling (decimal octets without leading zeros). */
export function isIpv4Literal(host: string, from = 0, to = host.length): boolean {
  let start = from;
  for (let part = 0; part < 4; part++) {
    let end = host.indexOf('.', start);
    if (end < 0 || end > to || part === 3) end = to;
    if (canonicalDecimal(host, start, end, 255) < 0) return false;
    start = end + 1;
  }
  return start === to + 1;
}

/**
 * `http://A.B.C.D:PORT` (or https), with or without a final `/`, written as URL would leave it
 * (canonical octets and port): what a Stop hook is normally given. Parsed without the URL class, whose
 * first use costs a short-lived process more than this; anything else is left to URL (undefined).
 */
function ipv4Endpoint(e: string): Endpoint | undefined {
  const tls = e.startsWith('https://');
  if (!tls && !e.startsWith('http://')) return undefined;
  const from = tls ? 8 : 7;
  const end = e.endsWith('/') ? e.length - 1 : e.length;
  const colon = e.lastIndexOf(':', end);
  if (colon <= from || !isIpv4Literal(e, from, colon)) return undefined;
  const port = canonicalDecimal(e, colon + 1, end, 65535);
  if (port < 0) return undefined;
  const hostname = e.slice(from, colon);
  return port === (tls ? 443 : 80) ? { tls, hostname, port: '', host: hostname } : { tls, hostname, port: String(port), host: `${hostname}:${port}` };
}

export function parseEndpoint(endpoint: string): Endpoint {
  const fast = ipv4Endpoint(endpoint);
  if (fast) return fast;
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch {
    throw badInput('--endpoint must be a URL like http://127.0.0.1:8080 or https://hub.example:8421', 'BAD_ENDPOINT');
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password || (u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) {
    throw badInput('--endpoint must be http://HOST:PORT or https://HOST:PORT with no path, query or credentials', 'BAD_ENDPOINT');
  }
  return { tls: u.protocol === 'https:', hostname: u.hostname, port: u.port, host: u.host };
}

/** parseEndpoint, and a CA given only for an https endpoint (it would otherwise go unused). */
export function clientEndpoint(endpoint: string, ca: Buffer | undefined): Endpoint {
  const e = parseEndpoint(endpoint);
  if (ca !== undefined && !e.tls) throw badInput('--ca-file is for an https:// endpoint', 'BAD_ENDPOINT');
  return e;
}

export const fail = (kind: ErrorKind, code: string, message: string) => new AgentscmError(kind, code, message);

/** The path of the workspace task API of one repository and profile. */
export function operationPath(repository: string, profile: string): string {
  return `/v1/hub/workspace/repositories/${encodeURIComponent(repository)}/profiles/${encodeURIComponent(profile)}/agent-tasks`;
}

/** The headers of a request: the bearer token (sent only to the configured endpoint) and the body's type and length. */
export function requestHeaders(token: string, payload: Buffer | undefined, contentType: string): Record<string, string | number> {
  const headers: Record<string, string | number> = { authorization: `Bearer ${token}`, accept: 'application/json' };
  if (payload) {
    headers['content-type'] = contentType;
    headers['content-length'] = payload.length;
  }
  return headers;
}

export const answerTooLarge = (): AgentscmError => fail('HUB_MALFORMED', 'ANSWER_TOO_LARGE', 'the Hub answer is larger than the client accepts');

const JSON_TYPE = 'application/json';

/**
 * What /^application\/json\b/i accepts: the type in any ASCII case, then no word character. Written out
 * because a case-insensitive pattern's first use costs a short-lived process more than the check.
 */
export function isJsonContentType(contentType: string): boolean {
  if (contentType.length < JSON_TYPE.length) return false;
  for (let i = 0; i < JSON_TYPE.length; i++) {
    let c = contentType.charCodeAt(i);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== JSON_TYPE.charCodeAt(i)) return false;
  }
  const n = contentType.charCodeAt(JSON_TYPE.length);
  // No following character (NaN), or one that is not in \w ([A-Za-z0-9_]).
  return !((n >= 48 && n <= 57) || (n >= 65 && n <= 90) || (n >= 97 && n <= 122) || n === 95);
}

/**
 * The failure of an answer that is no JSON document, by its status: a rejected token, a Hub (or a proxy
 * before it) that is unavailable (502, 503, 504: as unreachable as no answer), else a malformed answer.
 */
function notADocument(status: number, malformed: AgentscmError): AgentscmError {
  if (status === 401 || status === 403) return fail('AUTH_REJECTED', 'AUTH_REJECTED', `the Hub rejected the token (HTTP ${status})`);
  if (status === 502 || status === 503 || status === 504) return fail('HUB_UNREACHABLE', 'HUB_UNAVAILABLE', `the Hub is unavailable (HTTP ${status}, no JSON document: a proxy's answer?)`);
  return malformed;
}

/** Decodes a complete answer: a JSON content type and one strict JSON document, else typed failures. */
export function decodeAnswer(status: number, contentType: string, body: Buffer, max: number): HubAnswer {
  if (!isJsonContentType(contentType)) throw notADocument(status, fail('HUB_MALFORMED', 'NOT_JSON', `the Hub answered HTTP ${status} without a JSON document`));
  try {
    return { status, body: parseStrictJson(body, { maxBytes: max, what: 'Hub answer' }) };
  } catch {
    throw notADocument(status, fail('HUB_MALFORMED', 'INVALID_JSON', 'the Hub answer is not one strict JSON document'));
  }
}

const ERROR_KEYS = ['code', 'message'];

/**
 * Maps a non-200 answer with the fixed error shape to a typed error; anything else is malformed. A refusal's
 * message is "<code>: <the Hub's message>" and its detail carries the code and the fixed hint sentence for
 * it (src/core/contract/hints.ts); the CLI escapes control characters in what it prints.
 */
export function errorFromAnswer(a: HubAnswer): AgentscmError {
  const b = a.body;
  const e = typeof b === 'object' && b !== null && !Array.isArray(b) && Object.keys(b).length === 1 ? b.error : undefined;
  const wellFormed =
    typeof e === 'object' && e !== null && !Array.isArray(e) &&
    Object.keys(e).length === 2 && ERROR_KEYS.every((k) => Object.hasOwn(e, k)) &&
    typeof e.code === 'string' && /^[a-z_]{1,64}$/.test(e.code) && typeof e.message === 'string' && e.message.length <= 512;
  if (a.status === 401 || a.status === 403) {
    if (!wellFormed) return fail('AUTH_REJECTED', 'AUTH_REJECTED', `the Hub rejected the token (HTTP ${a.status})`);
    const c = (e as { code: string }).code;
    return refusalError('AUTH_REJECTED', 'AUTH_REJECTED', `the Hub rejected the token (HTTP ${a.status}): ${c}: ${(e as { message: string }).message}`, c);
  }
  if (!wellFormed) return fail('HUB_MALFORMED', 'BAD_ERROR_SHAPE', `the Hub answered HTTP ${a.status} with a malformed error document`);
  const { code: hubCode, message } = e as { code: string; message: string };
  const code = hubCode.toUpperCase();
  const msg = `the Hub refused the request: ${hubCode}: ${message}`;
  if (a.status === 404) return refusalError('NOT_FOUND', code, msg, hubCode);
  if (a.status === 409) return refusalError('CONFLICT', code, msg, hubCode);
  if (a.status === 400 || a.status === 413 || a.status === 415) return refusalError('BAD_INPUT', code, msg, hubCode);
  if (a.status === 503) return refusalError('HUB_UNREACHABLE', code, msg, hubCode);
  return refusalError('HUB_MALFORMED', code, `the Hub answered HTTP ${a.status}: ${hubCode}: ${message}`, hubCode);
}

function refusalError(kind: ErrorKind, code: string, message: string, hubCode: string): AgentscmError {
  const hint = hubErrorHint(hubCode);
  return new AgentscmError(kind, code, message, hint === undefined ? { hub_code: hubCode } : { hub_code: hubCode, hint });
}
