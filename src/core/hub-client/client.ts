// The authenticated HTTP client of the Hub's workspace task API. The bearer token comes from an
// absolute, owner-private token file and is sent only to the configured endpoint. No zod here (the Stop
// hooks use this client): callers validate answers with their own strict checker.
//
// Failures are typed, never turned into empty results: 401/403 -> AUTH_REJECTED, connection failure
// or timeout -> HUB_UNREACHABLE, an answer that is not one bounded strict JSON document (or an error
// document of the wrong shape) -> HUB_MALFORMED; other fixed Hub errors keep their code.

import * as http from 'node:http';
import { canonicalJson, parseStrictJson, type JsonValue } from '../canonical/json.js';
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

const fail = (kind: ErrorKind, code: string, message: string) => new AgentscmError(kind, code, message);

export class HubClient {
  private readonly base: URL;
  private readonly agent: http.Agent;

  constructor(private readonly opts: HubClientOptions) {
    this.base = parseEndpoint(opts.endpoint);
    // No connection reuse: a caller such as the collector may wait minutes between calls, and a pooled
    // socket the Hub has since closed would turn a good request into a spurious reset.
    this.agent = new http.Agent({ keepAlive: false, maxSockets: 4 });
  }

  get operationPath(): string {
    return `/v1/hub/workspace/repositories/${encodeURIComponent(this.opts.repository)}/profiles/${encodeURIComponent(this.opts.profile)}/agent-tasks`;
  }

  close(): void {
    this.agent.destroy();
  }

  /** POSTs one operation and returns the decoded 200 answer; every other outcome throws typed. */
  async call(body: JsonValue): Promise<JsonValue> {
    const a = await this.request(this.operationPath, canonicalJson(body));
    if (a.status === 200) return a.body;
    throw errorFromAnswer(a);
  }

  request(pathname: string, body: string | undefined): Promise<HubAnswer> {
    const max = this.opts.maxAnswerBytes ?? DEFAULT_ANSWER_MAX_BYTES;
    const payload = body === undefined ? undefined : Buffer.from(body, 'utf8');
    return new Promise<HubAnswer>((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = { authorization: `Bearer ${this.opts.token}`, accept: 'application/json' };
      if (payload) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = payload.length;
      }
      const req = http.request(
        { host: this.base.hostname.replace(/^\[|\]$/g, ''), port: this.base.port || 80, path: pathname, method: payload ? 'POST' : 'GET', headers, agent: this.agent },
        (res) => {
          const declared = Number(res.headers['content-length'] ?? '0');
          if (declared > max) {
            res.destroy();
            reject(fail('HUB_MALFORMED', 'ANSWER_TOO_LARGE', 'the Hub answer is larger than the client accepts'));
            return;
          }
          const chunks: Buffer[] = [];
          let total = 0;
          res.on('data', (c: Buffer) => {
            total += c.length;
            if (total > max) {
              res.destroy();
              reject(fail('HUB_MALFORMED', 'ANSWER_TOO_LARGE', 'the Hub answer is larger than the client accepts'));
              return;
            }
            chunks.push(c);
          });
          res.on('error', () => reject(fail('HUB_UNREACHABLE', 'HUB_UNREACHABLE', 'the Hub connection failed')));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            const ctype = String(res.headers['content-type'] ?? '');
            if (!/^application\/json\b/i.test(ctype)) {
              if (status === 401 || status === 403) return reject(fail('AUTH_REJECTED', 'AUTH_REJECTED', `the Hub rejected the token (HTTP ${status})`));
              return reject(fail('HUB_MALFORMED', 'NOT_JSON', `the Hub answered HTTP ${status} without a JSON document`));
            }
            try {
              resolve({ status, body: parseStrictJson(Buffer.concat(chunks, total), { maxBytes: max, what: 'Hub answer' }) });
            } catch {
              if (status === 401 || status === 403) return reject(fail('AUTH_REJECTED', 'AUTH_REJECTED', `the Hub rejected the token (HTTP ${status})`));
              reject(fail('HUB_MALFORMED', 'INVALID_JSON', 'the Hub answer is not one strict JSON document'));
            }
          });
        },
      );
      req.setTimeout(this.opts.timeoutMs ?? 30_000, () => {
        req.destroy();
        reject(fail('HUB_UNREACHABLE', 'HUB_TIMEOUT', 'the Hub did not answer in time'));
      });
      req.on('error', (e: NodeJS.ErrnoException) => {
        reject(fail('HUB_UNREACHABLE', 'HUB_UNREACHABLE', `the Hub could not be reached (${e.code ?? 'connection error'})`));
      });
      req.end(payload);
    });
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
