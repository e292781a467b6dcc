// Loopback stand-ins for the GitHub and GitLab commit status APIs (they cannot run here). Each checks
// what it receives: the method and path shape, the token header, the JSON body's fields, and records
// every request in order. `fail` makes it answer with a status code for the next requests (503 to see
// retries, 401 to see a refusal), `down` answers 503 until cleared.

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StatusSeen {
  readonly sha: string;
  readonly state: string;
  readonly context: string;
  readonly description: string;
  /** The HTTP status the stand-in answered with. */
  readonly answered: number;
}

export interface ForgeStandIn {
  readonly kind: 'github' | 'gitlab';
  readonly url: string;
  readonly seen: StatusSeen[];
  /** Requests whose shape or authentication was wrong (each is answered 400 or 401). */
  readonly malformed: string[];
  /** Answer the next n requests with this status. */
  fail(status: number, n?: number): void;
  /** Answer every request with this status until set to undefined. */
  answerAll(status: number | undefined): void;
  /** Resolves once `pred` holds for the delivered (2xx) statuses. */
  waitFor(pred: (delivered: StatusSeen[]) => boolean, ms?: number): Promise<StatusSeen[]>;
  close(): Promise<void>;
}

const SHA = /^[0-9a-f]{40}$/;

export async function forgeStandIn(kind: 'github' | 'gitlab', token: string, project: string): Promise<ForgeStandIn> {
  const seen: StatusSeen[] = [];
  const malformed: string[] = [];
  let failing: { status: number; n: number } | undefined;
  let all: number | undefined;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const bad = (status: number, why: string) => {
        malformed.push(why);
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ message: why }));
      };
      const [owner, repo] = project.split('/');
      const m =
        kind === 'github'
          ? new RegExp(`^/repos/${owner}/${repo}/statuses/([^/]+)$`).exec(req.url ?? '')
          : new RegExp(`^/api/v4/projects/${encodeURIComponent(project)}/statuses/([^/]+)$`).exec(req.url ?? '');
      if (req.method !== 'POST' || !m || !SHA.test(m[1]!)) return bad(404, `unexpected ${req.method} ${req.url}`);
      const auth = kind === 'github' ? req.headers.authorization : req.headers['private-token'];
      const want = kind === 'github' ? `token ${token}` : token;
      if (auth !== want) return bad(401, 'bad credentials');
      if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) return bad(400, 'content-type');
      let doc: Record<string, unknown>;
      try {
        doc = JSON.parse(body) as Record<string, unknown>;
      } catch {
        return bad(400, 'body is not JSON');
      }
      const states = kind === 'github' ? ['pending', 'success', 'failure', 'error'] : ['pending', 'running', 'success', 'failed', 'canceled'];
      const context = kind === 'github' ? doc.context : doc.name;
      if (!states.includes(String(doc.state)) || typeof context !== 'string' || typeof doc.description !== 'string' || doc.description.length > 140) return bad(422, `bad body ${body}`);
      let answered = 201;
      if (all !== undefined) answered = all;
      else if (failing && failing.n > 0) {
        answered = failing.status;
        failing.n--;
      }
      seen.push({ sha: m[1]!, state: String(doc.state), context, description: doc.description, answered });
      res.writeHead(answered, { 'content-type': 'application/json' }).end(JSON.stringify(answered < 300 ? { id: seen.length, state: doc.state } : { message: 'no' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    kind,
    url: kind === 'github' ? `http://127.0.0.1:${port}` : `http://127.0.0.1:${port}/api/v4`,
    seen,
    malformed,
    fail(status, n = 1) {
      failing = { status, n };
    },
    answerAll(status) {
      all = status;
    },
    async waitFor(pred, ms = 60_000) {
      const end = Date.now() + ms;
      for (;;) {
        const delivered = seen.filter((s) => s.answered < 300);
        if (pred(delivered)) return delivered;
        if (Date.now() > end) throw new Error(`forge stand-in: condition not met; seen ${JSON.stringify(seen)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
