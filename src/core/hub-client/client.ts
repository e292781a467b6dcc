// The authenticated HTTP client of the Hub's workspace task API. The bearer token comes from an
// absolute, owner-private token file and is sent only to the configured endpoint. No zod here (the Stop
// hooks use this client): callers validate answers with their own strict checker.
//
// Failures are typed, never turned into empty results: 401/403 -> AUTH_REJECTED, connection failure,
// timeout or a TLS failure (an untrusted certificate: pass --ca-file) -> HUB_UNREACHABLE, an answer that is not one bounded strict JSON document (or an error
// document of the wrong shape) -> HUB_MALFORMED; other fixed Hub errors keep their code.

import * as http from 'node:http';
import type * as https from 'node:https';
import { canonicalJson, type JsonValue } from '../canonical/json.js';
import { answerTooLarge, clientEndpoint, decodeAnswer, DEFAULT_ANSWER_MAX_BYTES, errorFromAnswer, fail, operationPath, requestHeaders, type Endpoint, type HubAnswer, type HubClientOptions } from './answer.js';

export {
  clientEndpoint, DEFAULT_ANSWER_MAX_BYTES, errorFromAnswer, parseEndpoint, readCaFile, readTokenFile, TOKEN_FILE_MAX_BYTES, type HubAnswer, type HubClientOptions,
} from './answer.js';

/** Certificate verification failures: the Hub's certificate does not chain to a trusted CA. */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_UNTRUSTED', 'CERT_SIGNATURE_FAILURE', 'CERT_CHAIN_TOO_LONG', 'INVALID_CA',
]);

/**
 * What a failed connection means, typed HUB_UNREACHABLE (exit 5): the Hub could not be reached
 * securely is still "not reached". A TLS failure names itself and what to do about it.
 */
export function connectionFailure(e: NodeJS.ErrnoException, base: Endpoint): Error {
  const code = e.code ?? 'connection error';
  if (UNTRUSTED.has(code)) {
    return fail('HUB_UNREACHABLE', 'HUB_TLS_UNTRUSTED', `the Hub's TLS certificate is not trusted (${code}): pass --ca-file with the CA that issued it`);
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return fail('HUB_UNREACHABLE', 'HUB_TLS_NAME', `the Hub's TLS certificate is not for ${base.hostname} (${code})`);
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return fail('HUB_UNREACHABLE', 'HUB_TLS_EXPIRED', `the Hub's TLS certificate is not valid now (${code})`);
  if (base.tls && (code === 'EPROTO' || code.startsWith('ERR_SSL_') || code === 'ECONNRESET')) {
    return fail('HUB_UNREACHABLE', 'HUB_TLS_HANDSHAKE', `the TLS handshake with the Hub failed (${code}): does it serve https?`);
  }
  return fail('HUB_UNREACHABLE', 'HUB_UNREACHABLE', `the Hub could not be reached (${code})`);
}

type Transport = { request: typeof http.request; agent: http.Agent };

export class HubClient {
  private readonly base: Endpoint;
  private transport: Transport | undefined;

  constructor(private readonly opts: HubClientOptions) {
    this.base = clientEndpoint(opts.endpoint, opts.ca);
  }

  get operationPath(): string {
    return operationPath(this.opts.repository, this.opts.profile);
  }

  close(): void {
    this.transport?.agent.destroy();
    this.transport = undefined;
  }

  /**
   * POSTs one operation and returns the decoded 200 answer; every other outcome throws typed. onSent
   * fires once the request is written (the connection is made only when the caller yields).
   */
  async call(body: JsonValue, onSent?: () => void): Promise<JsonValue> {
    const a = await this.request(this.operationPath, canonicalJson(body), 'application/json', onSent);
    if (a.status === 200) return a.body;
    throw errorFromAnswer(a);
  }

  /** POSTs signed transfer bytes to the upload route; onSent fires once the body is written. */
  async upload(bytes: Buffer, onSent?: () => void): Promise<JsonValue> {
    const a = await this.request(`${this.operationPath}/collector-upload`, bytes, 'application/octet-stream', onSent);
    if (a.status === 200) return a.body;
    throw errorFromAnswer(a);
  }

  /**
   * node:http, or node:https (loaded only for an https endpoint) with the CA given. No connection
   * reuse unless keepConnection: a caller such as the collector may wait minutes between calls, and a
   * pooled socket the Hub has since closed would turn a good request into a spurious reset.
   */
  private open(): Transport {
    if (this.transport) return this.transport;
    const keepAlive = this.opts.keepConnection === true;
    if (!this.base.tls) return (this.transport = { request: http.request, agent: new http.Agent({ keepAlive, maxSockets: 4 }) });
    // Loaded only here: a plain-http Stop hook does not pay for node:https and node:tls.
    const m = process.getBuiltinModule('node:https') as typeof https;
    const ca = this.opts.ca;
    return (this.transport = { request: m.request as typeof http.request, agent: new m.Agent({ keepAlive, maxSockets: 4, ...(ca ? { ca } : {}) }) });
  }

  request(pathname: string, body: string | Buffer | undefined, contentType = 'application/json', onSent?: () => void): Promise<HubAnswer> {
    return this.send(this.open(), pathname, body, contentType, onSent);
  }

  private send(t: Transport, pathname: string, body: string | Buffer | undefined, contentType: string, onSent: (() => void) | undefined): Promise<HubAnswer> {
    const max = this.opts.maxAnswerBytes ?? DEFAULT_ANSWER_MAX_BYTES;
    const payload = body === undefined ? undefined : typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    return new Promise<HubAnswer>((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = requestHeaders(this.opts.token, payload, contentType);
      const host = this.base.hostname.replace(/^\[|\]$/g, '');
      const req = t.request(
        { host, port: this.base.port || (this.base.tls ? 443 : 80), path: pathname, method: payload ? 'POST' : 'GET', headers, agent: t.agent },
        (res) => {
          const declared = Number(res.headers['content-length'] ?? '0');
          if (declared > max) {
            res.destroy();
            reject(answerTooLarge());
            return;
          }
          const chunks: Buffer[] = [];
          let total = 0;
          res.on('data', (c: Buffer) => {
            total += c.length;
            if (total > max) {
              res.destroy();
              reject(answerTooLarge());
              return;
            }
            chunks.push(c);
          });
          res.on('error', () => reject(fail('HUB_UNREACHABLE', 'HUB_UNREACHABLE', 'the Hub connection failed')));
          res.on('end', () => {
            try {
              resolve(decodeAnswer(res.statusCode ?? 0, String(res.headers['content-type'] ?? ''), Buffer.concat(chunks, total), max));
            } catch (e) {
              reject(e);
            }
          });
        },
      );
      const timedOut = () => {
        req.destroy();
        reject(fail('HUB_UNREACHABLE', 'HUB_TIMEOUT', 'the Hub did not answer in time'));
      };
      req.setTimeout(this.opts.timeoutMs ?? 30_000, timedOut);
      if (this.opts.deadlineMs !== undefined) {
        const deadline = setTimeout(timedOut, this.opts.deadlineMs);
        req.once('close', () => clearTimeout(deadline));
      }
      req.on('error', (e: NodeJS.ErrnoException) => reject(connectionFailure(e, this.base)));
      if (onSent) req.once('finish', onSent);
      req.end(payload);
    });
  }
}

