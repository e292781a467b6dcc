// The reference Hub's HTTP facade (its server, node:http or node:https, is set up in http.ts). One process, one authority
// connection; better-sqlite3 is synchronous, so each read runs to completion on the event loop with a
// consistent view. Journal writes are group-committed (batch.ts): answered only after the batch's COMMIT.
//
//   GET  /v1/hub/health                                                   storage ping, no auth
//   POST /v1/hub/workspace/repositories/{repository}/profiles/{profile}/agent-tasks
//        body {"operation": ..., ...}; bearer workspace token; answers per docs/HUB.md

import { Authority } from '../core/authority/store.js';
import { outputJson, parseStrictJson, type JsonValue } from '../core/canonical/json.js';
import { formatIssues } from '../core/contract/common.js';
import { OPERATION_MAX_BYTES, READ_OPERATIONS, ReadRequest } from '../core/contract/ops.js';
import { ID_RE, isRepository } from '../core/contract/paths.js';
import { AgentscmError, toAgentscmError } from '../core/errors.js';
import { SnapshotStore } from '../core/native/snapshot.js';
import { HubError, invalidRequest, unauthenticated } from './errors.js';
import { journalPath, openJournalReadOnly, type Journal } from './journal.js';
import { handleRead } from './reads.js';
import type { MutationContext, Scope } from './subjects.js';
import { MUTATION_OPERATIONS, MutationRequest } from '../core/contract/mutations.js';
import { handleMutation, prepareMutation } from './mutations.js';
import { openJournalForWrite } from './journal.js';
import { COLLECTOR_OPERATIONS, CollectorRequest } from '../core/contract/collector.js';
import { TRANSFER_MAX_BYTES } from '../core/collector/transfer.js';
import { decodeTransfer, handleCollector, importTransfer } from './collector.js';
import { lstatOrUndefined } from '../core/fs/safe.js';
import { GroupCommit, type Outcome } from './batch.js';
import { retainedText } from './claims.js';
import { closeServer, createHubServer, exchange, listen, type Exchange, type Limits, type RequestListener, type TlsIdentity } from './http.js';

const ROUTE = /^\/v1\/hub\/workspace\/repositories\/(.+)\/profiles\/([^/]+)\/agent-tasks(\/collector-upload)?$/;

export interface HubOptions {
  readonly dataDir: string;
  readonly host: string;
  readonly port: number;
  /** Serve https with this certificate and key (PEM); plain http without. */
  readonly tls?: TlsIdentity;
  /** The HTTP time limits (http.ts DEFAULT_LIMITS unless given). */
  readonly limits?: Limits;
  /** Where one-line diagnostics go (never to clients). */
  readonly log?: (line: string) => void;
}

export interface RunningHub {
  readonly url: string;
  close(): Promise<void>;
}

/** Shared state of one Hub process: the authority, the snapshot store and the journal once it exists. */
export class HubState {
  readonly authority: Authority;
  readonly snapshots: SnapshotStore;
  private journalHandle: Journal | undefined;
  private journalCheckedAt = -Infinity;
  /** Every journal write of the HTTP facade goes through this group commit (see batch.ts). */
  readonly commits: GroupCommit;

  constructor(
    readonly dataDir: string,
    log: (line: string) => void = () => {},
  ) {
    this.authority = Authority.open(dataDir);
    // Token, profile and Change lookups come from memory while the authority is unchanged; every
    // request and every batch revalidates first (see Authority.revalidate).
    this.authority.enableMemo();
    this.snapshots = new SnapshotStore(dataDir);
    this.commits = new GroupCommit(() => this.writableJournal().db, this.authority.db, log, () => this.authority.revalidate());
  }

  /** The journal, opened read-only when it first exists; undefined until then (reads never create it). */
  journal(): Journal | undefined {
    if (this.journalHandle) return this.journalHandle;
    // Only a Hub creates the journal (and installs it with setJournal), so a missing one is rechecked
    // at most every 250 ms rather than on every read.
    const now = performance.now();
    if (now - this.journalCheckedAt < 250) return undefined;
    if (!lstatOrUndefined(journalPath(this.dataDir))) {
      this.journalCheckedAt = now;
      return undefined;
    }
    // A journal that exists but cannot be opened (another schema version, damage) is an error every
    // time, never "no journal": reads would otherwise answer as if nothing had been claimed.
    this.journalHandle = openJournalReadOnly(this.dataDir);
    return this.journalHandle;
  }

  /** The journal for mutations: created on first use, then the same handle serves reads. */
  writableJournal(): Journal {
    if (this.journalHandle && !this.journalHandle.db.readonly) return this.journalHandle;
    this.setJournal(openJournalForWrite(this.dataDir));
    return this.journalHandle!;
  }

  /** Installs a writable journal (the same handle then serves reads). */
  setJournal(j: Journal): void {
    this.journalHandle?.close();
    this.journalHandle = j;
  }

  /** What a mutation runs against: this state's stores, now, and the operations this Hub offers. */
  mutationContext(operations: readonly string[]): MutationContext {
    return { authority: this.authority, snapshots: this.snapshots, journal: () => this.journal(), writable: () => this.writableJournal(), now: Date.now(), operations };
  }

  close(): void {
    this.journalHandle?.close();
    this.authority.close();
  }
}

function send(ex: Exchange, status: number, body: JsonValue, close = false): void {
  // A committed mutation's answer was encoded once already, for its idempotency row: the same text.
  ex.answer(status, retainedText(body) ?? outputJson(body), close);
}

function sendError(ex: Exchange, e: HubError, close = false): void {
  send(ex, e.status, { error: { code: e.code, message: e.message } }, close);
}

/** The fixed answer for anything a request threw. */
function failure(e: unknown, log: (line: string) => void): HubError {
  if (e instanceof HubError) return e;
  if (e instanceof Error && typeof (e as { code?: unknown }).code === 'string' && String((e as { code?: unknown }).code).startsWith('SQLITE_BUSY')) {
    // Contention fails closed without replay: the request had no effect and may be retried.
    return new HubError(503, 'journal_busy', 'the journal is busy; retry the identical request');
  }
  // A data dir the Hub cannot write (or a damaged store) is an unavailable store, not a bug.
  const a = toAgentscmError(e);
  if (a.kind === 'LOCAL_STATE' || a.code === 'STORE_UNAVAILABLE') {
    log(`hub: store unavailable (${a.code})`);
    return new HubError(503, 'store_unavailable', 'the Hub storage is unavailable');
  }
  log(`hub: internal error (${e instanceof Error ? e.name : 'unknown'})`);
  return new HubError(500, 'internal', 'internal error');
}

/** Answers a mutation once its batch has committed (or with the batch's failure). */
function answerWhenCommitted(ex: Exchange, log: (line: string) => void): (o: Outcome) => void {
  return (o) => {
    if (o.ok) send(ex, 200, o.value);
    else sendError(ex, failure(o.error, log));
  };
}

/**
 * Answers 413 and closes the connection. The server reads and drops the rest of the body (up to a
 * bound, then the connection is cut) so that the client sees the answer rather than a reset.
 */
function refuseBody(ex: Exchange, e = new HubError(413, 'body_too_large', `request bodies are at most ${OPERATION_MAX_BYTES} bytes`)): void {
  sendError(ex, e, true);
}

function bearer(ex: Exchange): string | undefined {
  const h = ex.headers.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer ([!-~]{1,512})$/.exec(h);
  return m?.[1];
}

export const HUB_OPERATIONS: readonly string[] = [...READ_OPERATIONS, ...MUTATION_OPERATIONS, ...COLLECTOR_OPERATIONS];

export function createHandler(state: HubState, log: (line: string) => void, operations: readonly string[] = HUB_OPERATIONS) {
  // An answer computed from the journal may rest on a batch that is committed but not yet synced: it
  // leaves only once that batch is durable (see batch.ts).
  const sendDurable = (ex: Exchange, status: number, body: JsonValue, close = false): void =>
    state.commits.whenDurable((failed) => (failed ? sendError(ex, failed, close) : send(ex, status, body, close)));
  // The body arrives turns after the headers: an answer computed now reads the authority as it is now
  // (mutations revalidate in their batch instead).
  const fresh = <C>(ctx: C): C => {
    state.authority.revalidate();
    return ctx;
  };
  return async (ex: Exchange): Promise<void> => {
    try {
      const url = ex.url;
      const pathOnly = url.split('?')[0]!;
      if (pathOnly === '/v1/hub/health') {
        if (ex.method !== 'GET') throw new HubError(405, 'method_not_allowed', 'use GET');
        let ok = false;
        try {
          ok = state.authority.ping();
        } catch {
          ok = false;
        }
        send(ex, ok ? 200 : 503, { status: ok ? 'ok' : 'unavailable' });
        return;
      }
      const m = ROUTE.exec(pathOnly);
      if (!m) throw new HubError(404, 'not_found', 'no such route');
      if (ex.method !== 'POST') throw new HubError(405, 'method_not_allowed', 'use POST');

      // The actor comes from the bearer token alone, checked against the authority on every request,
      // so a revoked token fails on its next request.
      const token = bearer(ex);
      state.authority.revalidate();
      const actor = token === undefined ? undefined : state.authority.authenticate(token);
      if (!actor) throw unauthenticated();

      let repository: string;
      let profile: string;
      try {
        repository = decodeURIComponent(m[1]!);
        profile = decodeURIComponent(m[2]!);
      } catch {
        throw invalidRequest('malformed repository or profile in the path');
      }
      if (!isRepository(repository) || !ID_RE.test(profile)) throw invalidRequest('malformed repository or profile in the path');
      if (actor.repository !== null && actor.repository !== repository) throw new HubError(403, 'forbidden', 'the token does not grant this repository');
      if (!state.authority.getProfile(repository, profile)) throw new HubError(404, 'profile_not_found', 'no such agent-task profile');

      if (m[3] !== undefined) {
        // The signed transfer route: its own media type and the 16 MiB envelope bound, checked from the
        // declared length before any body byte is read.
        const ct = ex.headers['content-type'];
        if (typeof ct !== 'string' || !/^application\/octet-stream$/i.test(ct)) throw new HubError(415, 'unsupported_media_type', 'send application/octet-stream');
        const len = ex.headers['content-length'];
        if (len === undefined || !/^[0-9]{1,12}$/.test(len)) throw new HubError(411, 'length_required', 'a transfer upload declares its content-length');
        if (Number(len) > TRANSFER_MAX_BYTES) {
          refuseBody(ex, new HubError(413, 'transfer_too_large', `a collector transfer is at most ${TRANSFER_MAX_BYTES} bytes`));
          return;
        }
        const bytes = await ex.body(Number(len));
        if (bytes === undefined || bytes.length !== Number(len)) throw invalidRequest('the body does not match its content-length');
        const transfer = decodeTransfer(bytes);
        state.commits.submit(() => importTransfer(state.writableJournal(), state.authority, actor, { repository, profile }, transfer, Date.now(), state.snapshots), answerWhenCommitted(ex, log));
        return;
      }
      const ctype = ex.headers['content-type'];
      if (typeof ctype !== 'string' || !/^application\/json(\s*;\s*charset=utf-8)?$/i.test(ctype)) throw new HubError(415, 'unsupported_media_type', 'send application/json');
      const declared = ex.headers['content-length'];
      if (declared !== undefined && (!/^[0-9]{1,12}$/.test(declared) || Number(declared) > OPERATION_MAX_BYTES)) {
        // Refused from the header, before any body byte is read.
        refuseBody(ex);
        return;
      }
      const body = await ex.body(OPERATION_MAX_BYTES);
      if (body === undefined) {
        refuseBody(ex);
        return;
      }
      let doc: JsonValue;
      try {
        // Every number of the contract is an integer: 1.0, 1e0 or a float that rounds to one is refused.
        doc = parseStrictJson(body, { maxBytes: OPERATION_MAX_BYTES, what: 'request body', integersOnly: true });
      } catch (e) {
        throw invalidRequest(e instanceof AgentscmError ? e.message : 'request body is not valid JSON');
      }
      if (typeof doc === 'object' && doc !== null && !Array.isArray(doc) && typeof doc.operation === 'string' && !operations.includes(doc.operation)) {
        throw new HubError(400, 'unsupported_operation', 'this Hub does not offer that operation (see capabilities)');
      }
      const scope: Scope = { repository, profile, actor };
      const ctx = state.mutationContext(operations);
      const op = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? doc.operation : undefined;
      if (typeof op === 'string' && (COLLECTOR_OPERATIONS as readonly string[]).includes(op)) {
        const c = CollectorRequest.safeParse(doc);
        if (!c.success) throw invalidRequest(`request body is invalid: ${formatIssues(c.error)}`);
        const req = c.data;
        if (req.operation === 'collector_descriptor') sendDurable(ex, 200, handleCollector(fresh(ctx), scope, req, doc));
        else state.commits.submit(() => handleCollector(ctx, scope, req, doc), answerWhenCommitted(ex, log));
        return;
      }
      if (typeof op === 'string' && (MUTATION_OPERATIONS as readonly string[]).includes(op)) {
        const m = MutationRequest.safeParse(doc);
        if (!m.success) throw invalidRequest(`request body is invalid: ${formatIssues(m.error)}`);
        const req = m.data;
        // recovery is a read: it answers from committed rows at once.
        if (req.operation === 'recovery') sendDurable(ex, 200, handleMutation(fresh(ctx), scope, req, doc));
        else state.commits.submit(prepareMutation(ctx, scope, req, doc), answerWhenCommitted(ex, log));
        return;
      }
      const parsed = ReadRequest.safeParse(doc);
      if (!parsed.success) throw invalidRequest(`request body is invalid: ${formatIssues(parsed.error)}`);
      sendDurable(ex, 200, handleRead(fresh(ctx), scope, parsed.data));
    } catch (e) {
      const f = failure(e, log);
      // An unauthenticated request's answer ends its connection: a client without a valid token gets
      // one answer per connection, however many requests it pipelines behind it.
      sendDurable(ex, f.status, { error: { code: f.code, message: f.message } }, f.status === 401);
    }
  };
}

/**
 * The Hub's routes as one plain node:http request listener, so that other handlers (an MCP endpoint)
 * can be mounted beside it on the same server. createHubServer (http.ts) gives it the Hub's bounds.
 */
export function hubRequestListener(state: HubState, log: (line: string) => void, operations: readonly string[] = HUB_OPERATIONS): RequestListener {
  const handler = createHandler(state, log, operations);
  return (req, res) => {
    void handler(exchange(req, res));
  };
}

export async function startHub(opts: HubOptions): Promise<RunningHub> {
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  const state = new HubState(opts.dataDir, log);
  const server = createHubServer(hubRequestListener(state, log), { ...(opts.tls ? { tls: opts.tls } : {}), ...(opts.limits ? { limits: opts.limits } : {}) });
  let addr;
  try {
    addr = await listen(server, opts.port, opts.host);
  } catch (e) {
    state.close();
    throw e;
  }
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `${opts.tls ? 'https' : 'http'}://${host}:${addr.port}`,
    close: () =>
      closeServer(server).then(() =>
        state.commits.close().then(() => {
          state.close();
        }),
      ),
  };
}
