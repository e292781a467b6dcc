// What every Hub client shares, with no HTTP module: the token file, the endpoint, the operation path,
// the request headers and the strict decoding of an answer. The full client (client.ts, node:http)
// and the Stop hooks' one-request client (http1.ts, node:net) both build on it, so that both send the
// same request and judge an answer the same way.
//
// Failures are typed, never turned into empty results: 401/403 -> AUTH_REJECTED, an answer that is
// not one bounded strict JSON document (or an error document of the wrong shape) -> HUB_MALFORMED;
// other fixed Hub errors keep their code.

import { parseStrictJson, type JsonValue } from '../canonical/json.js';
import { AgentscmError, badInput, type ErrorKind } from '../errors.js';
import { readPrivateFile, requireAbsolute } from '../fs/safe.js';

export const TOKEN_FILE_MAX_BYTES = 4096;
export const DEFAULT_ANSWER_MAX_BYTES = 1024 * 1024;
const TOKEN_RE = /^agentscm_wt1_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/;

/** Reads a workspace token: absolute path, regular non-symlink file, ours, mode without group/other bits. */
export function readTokenFile(file: string): string {
  requireAbsolute(file, '--token-file');
  const text = readPrivateFile(file, 'token file', TOKEN_FILE_MAX_BYTES).toString('utf8').trim();
  if (!TOKEN_RE.test(text)) throw new AgentscmError('LOCAL_STATE', 'BAD_TOKEN_FILE', 'token file does not hold a workspace token');
  return text;
}

export interface HubClientOptions {
  /** http://HOST:PORT of the Hub, no path. */
  readonly endpoint: string;
  readonly repository: string;
  readonly profile: string;
  readonly token: string;
  readonly timeoutMs?: number;
  readonly maxAnswerBytes?: number;
}

export interface HubAnswer {
  readonly status: number;
  readonly body: JsonValue;
}

/** Parses and checks an endpoint: plain http (the reference Hub is local), host and port, no path. */
export function parseEndpoint(endpoint: string): URL {
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch {
    throw badInput('--endpoint must be a URL like http://127.0.0.1:8080', 'BAD_ENDPOINT');
  }
  if (u.protocol !== 'http:' || u.username || u.password || (u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) {
    throw badInput('--endpoint must be http://HOST:PORT with no path, query or credentials', 'BAD_ENDPOINT');
  }
  return u;
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

/** Decodes a complete answer: a JSON content type and one strict JSON document, else typed failures. */
export function decodeAnswer(status: number, contentType: string, body: Buffer, max: number): HubAnswer {
  if (!/^application\/json\b/i.test(contentType)) {
    if (status === 401 || status === 403) throw fail('AUTH_REJECTED', 'AUTH_REJECTED', `the Hub rejected the token (HTTP ${status})`);
    throw fail('HUB_MALFORMED', 'NOT_JSON', `the Hub answered HTTP ${status} without a JSON document`);
  }
  try {
    return { status, body: parseStrictJson(body, { maxBytes: max, what: 'Hub answer' }) };
  } catch {
    if (status === 401 || status === 403) throw fail('AUTH_REJECTED', 'AUTH_REJECTED', `the Hub rejected the token (HTTP ${status})`);
    throw fail('HUB_MALFORMED', 'INVALID_JSON', 'the Hub answer is not one strict JSON document');
  }
}

const ERROR_KEYS = ['code', 'message'];

/** Maps a non-200 answer with the fixed error shape to a typed error; anything else is malformed. */
export function errorFromAnswer(a: HubAnswer): AgentscmError {
  if (a.status === 401 || a.status === 403) return fail('AUTH_REJECTED', 'AUTH_REJECTED', `the Hub rejected the token (HTTP ${a.status})`);
  const b = a.body;
  const e = typeof b === 'object' && b !== null && !Array.isArray(b) && Object.keys(b).length === 1 ? b.error : undefined;
  if (
    typeof e !== 'object' || e === null || Array.isArray(e) ||
    Object.keys(e).length !== 2 || !ERROR_KEYS.every((k) => Object.hasOwn(e, k)) ||
    typeof e.code !== 'string' || !/^[a-z_]{1,64}$/.test(e.code) || typeof e.message !== 'string' || e.message.length > 512
  ) {
    return fail('HUB_MALFORMED', 'BAD_ERROR_SHAPE', `the Hub answered HTTP ${a.status} with a malformed error document`);
  }
  const code = e.code.toUpperCase();
  const msg = `the Hub refused the request: ${e.code}`;
  if (a.status === 404) return fail('NOT_FOUND', code, msg);
  if (a.status === 409) return fail('CONFLICT', code, msg);
  if (a.status === 400 || a.status === 413 || a.status === 415) return fail('BAD_INPUT', code, msg);
  if (a.status === 503) return fail('HUB_UNREACHABLE', code, msg);
  return fail('HUB_MALFORMED', code, `the Hub answered HTTP ${a.status}: ${e.code}`);
}
