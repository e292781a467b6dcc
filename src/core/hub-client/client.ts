// The authenticated HTTP client of the Hub's workspace task API. The bearer token comes from an
// absolute, owner-private token file and is sent only to the configured endpoint. No zod here (the Stop
// hooks use this client): callers validate answers with their own strict checker.
//
// Failures are typed, never turned into empty results: 401/403 -> AUTH_REJECTED, connection failure
// or timeout -> HUB_UNREACHABLE, an answer that is not one bounded strict JSON document (or an error
// document of the wrong shape) -> HUB_MALFORMED; other fixed Hub errors keep their code.

import * as http from 'node:http';
import { canonicalJson, type JsonValue } from '../canonical/json.js';
import { answerTooLarge, decodeAnswer, DEFAULT_ANSWER_MAX_BYTES, errorFromAnswer, fail, operationPath, parseEndpoint, requestHeaders, type Endpoint, type HubAnswer, type HubClientOptions } from './answer.js';

export {
  DEFAULT_ANSWER_MAX_BYTES, errorFromAnswer, parseEndpoint, readTokenFile, TOKEN_FILE_MAX_BYTES, type HubAnswer, type HubClientOptions,
} from './answer.js';

export class HubClient {
  private readonly base: Endpoint;
  private readonly agent: http.Agent;

  constructor(private readonly opts: HubClientOptions) {
    this.base = parseEndpoint(opts.endpoint);
    // No connection reuse: a caller such as the collector may wait minutes between calls, and a pooled
    // socket the Hub has since closed would turn a good request into a spurious reset.
    this.agent = new http.Agent({ keepAlive: false, maxSockets: 4 });
  }

  get operationPath(): string {
    return operationPath(this.opts.repository, this.opts.profile);
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

  /** POSTs signed transfer bytes to the upload route; onSent fires once the body is written. */
  async upload(bytes: Buffer, onSent?: () => void): Promise<JsonValue> {
    const a = await this.request(`${this.operationPath}/collector-upload`, bytes, 'application/octet-stream', onSent);
    if (a.status === 200) return a.body;
    throw errorFromAnswer(a);
  }

  request(pathname: string, body: string | Buffer | undefined, contentType = 'application/json', onSent?: () => void): Promise<HubAnswer> {
    const max = this.opts.maxAnswerBytes ?? DEFAULT_ANSWER_MAX_BYTES;
    const payload = body === undefined ? undefined : typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    return new Promise<HubAnswer>((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = requestHeaders(this.opts.token, payload, contentType);
      const req = http.request(
        { host: this.base.hostname.replace(/^\[|\]$/g, ''), port: this.base.port || 80, path: pathname, method: payload ? 'POST' : 'GET', headers, agent: this.agent },
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
      req.setTimeout(this.opts.timeoutMs ?? 30_000, () => {
        req.destroy();
        reject(fail('HUB_UNREACHABLE', 'HUB_TIMEOUT', 'the Hub did not answer in time'));
      });
      req.on('error', (e: NodeJS.ErrnoException) => {
        reject(fail('HUB_UNREACHABLE', 'HUB_UNREACHABLE', `the Hub could not be reached (${e.code ?? 'connection error'})`));
      });
      if (onSent) req.once('finish', onSent);
      req.end(payload);
    });
  }
}

