// The reference Hub's HTTP facade (its server, node:http or node:https, is set up in http.ts). One process, one authority
// connection; better-sqlite3 is synchronous, so each read runs to completion on the event loop with a
// consistent view. Journal writes are group-committed (batch.ts): answered only after the batch's COMMIT.
//
//   GET  /v1/hub/health                                                   storage ping, no auth
//   GET  /v1/hub/ready                                                    readiness with typed reasons (ready.ts), no auth
//   POST /v1/hub/workspace/repositories/{repository}/profiles/{profile}/agent-tasks
//        body {"operation": ..., ...}; bearer workspace token; answers per docs/HUB.md
//   POST /v1/hub/workspace/mcp?repository=..&profile=..                  the same operations as MCP tools (mcp.ts)

import * as fs from 'node:fs';
import { Authority, authorityPath } from '../core/authority/store.js';
import type { TokenActor } from '../core/authority/types.js';
import { outputJson, parseStrictJson, type JsonValue } from '../core/canonical/json.js';
import { formatIssues } from '../core/contract/common.js';
import { OPERATION_MAX_BYTES, READ_OPERATIONS, ReadRequest, RESULT_REQUEST_MAX_BYTES } from '../core/contract/ops.js';
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
import { EXPORT_OPERATIONS, ReceiptBundleRequest } from '../core/contract/export.js';
import { handleReceiptBundle } from './receipt-bundle.js';
import { signQualification, type ReceiptKey } from './signing.js';
import { ForgeStatus, type ForgeOptions } from './forge.js';
import { INTEGRATION_OPERATIONS, IntegrationRequest } from '../core/contract/integration.js';
import { handleIntegration } from './integration.js';
import { drainServer, createHubServer, exchange, listen, type Exchange, type Limits, type RequestListener, type TlsIdentity } from './http.js';
import { entryMismatch, type HubConfig, type ProfileEntry } from './config.js';
import { readiness } from './ready.js';
import { withCurrentSubject } from './change-subject.js';
import { READ_SCOPE_OPERATIONS } from '../core/contract/tools.js';
import { MCP_PATH, mcpListener } from './mcp.js';

const ROUTE = /^\/v1\/hub\/workspace\/repositories\/(.+)\/profiles\/([^/]+)\/agent-tasks(\/collector-upload)?$/;

export interface HubOptions {
  /** The one-profile shortcut: every profile of this data dir (unless config is given). */
  readonly dataDir?: string;
  /** The operator configuration (config.ts): exactly its profiles, from one or more data dirs. */
  readonly config?: HubConfig;
  readonly host: string;
  readonly port: number;
  /** Serve https with this certificate and key (PEM); plain http without. */
  readonly tls?: TlsIdentity;
  /** The HTTP time limits (http.ts DEFAULT_LIMITS unless given). */
  readonly limits?: Limits;
  /** Where one-line diagnostics go (never to clients). */
  readonly log?: (line: string) => void;
  /** The receipt key (hub serve --receipt-key-dir): signs qualification answers and receipt bundles. */
  readonly receiptKey?: ReceiptKey;
  /** Publish forge commit statuses for profiles that ask for them (forge.ts). */
  readonly forge?: ForgeOptions;
  /** Where the one JSON access-log line per request goes (none without). */
  readonly accessLog?: (line: string) => void;
  /** How long close() waits for in-flight requests before it cuts their connections (default 10 s). */
  readonly drainMs?: number;
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
  /** Signs qualification answers and receipt bundles when set. */
  receiptKey: ReceiptKey | undefined;
  private readonly opened: { dev: number; ino: number };

  constructor(
    readonly dataDir: string,
    log: (line: string) => void = () => {},
  ) {
    this.authority = Authority.open(dataDir);
    const st = lstatOrUndefined(authorityPath(dataDir))!;
    this.opened = { dev: st.dev, ino: st.ino };
    // Token, profile and Change lookups come from memory while the authority is unchanged; every
    // request and every batch revalidates first (see Authority.revalidate).
    this.authority.enableMemo();
    this.snapshots = new SnapshotStore(dataDir);
    this.commits = new GroupCommit(() => this.writableJournal().db, this.authority.db, log, () => this.authority.revalidate());
  }

  /** Whether the authority file now at the data dir's path is the one this state opened. */
  isOpenedAuthority(st: { dev: number; ino: number }): boolean {
    return st.dev === this.opened.dev && st.ino === this.opened.ino;
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

/**
 * The profiles one Hub process serves: every profile of its one data dir, or exactly the configured
 * entries, each routed to the state of its data dir (one state per data dir).
 */
export class HubSet {
  draining = false;
  private readonly served = new Map<string, HubState>();

  constructor(
    readonly states: readonly HubState[],
    readonly entries?: readonly ProfileEntry[],
  ) {
    for (const e of entries ?? []) this.served.set(`${e.repository_id}\0${e.profile_id}`, states.find((s) => s.dataDir === e.data_dir)!);
  }

  /** Opens every data dir of a configuration and checks each entry's pins; throws naming the entry. */
  static open(config: HubConfig, log?: (line: string) => void): HubSet {
    const states: HubState[] = [];
    try {
      config.agent_task_profiles.forEach((e, i) => {
        // Two spellings of one directory (a symlink) are one data dir: one state, one group commit.
        const real = realOrSelf(e.data_dir);
        let st = states.find((s) => realOrSelf(s.dataDir) === real);
        if (!st) {
          try {
            st = new HubState(e.data_dir, log);
          } catch (err) {
            const a = toAgentscmError(err);
            throw new AgentscmError(a.kind, a.code, `hub config: agent_task_profiles[${i}] (${e.repository_id} ${e.profile_id}): ${a.message}`);
          }
          states.push(st);
        }
        if (st.dataDir !== e.data_dir) throw new AgentscmError('BAD_INPUT', 'BAD_HUB_CONFIG', `hub config: agent_task_profiles[${i}] (${e.repository_id} ${e.profile_id}): data_dir ${e.data_dir} is ${st.dataDir} under another name`);
        const m = entryMismatch(e, i, st.authority);
        if (m) throw new AgentscmError('BAD_INPUT', 'HUB_CONFIG_MISMATCH', `hub config: ${m.message}`);
      });
    } catch (err) {
      for (const s of states) s.close();
      throw err;
    }
    return new HubSet(states, config.agent_task_profiles);
  }

  /**
   * The actor of a bearer token. The actor comes from the token alone, checked against the authority
   * on every request, so a revoked token fails on its next request. A path this Hub does not serve
   * (no target) is checked against every authority it has, so that only an authenticated caller
   * learns that it is not served.
   */
  authenticate(token: string | undefined, target: HubState | undefined): TokenActor | undefined {
    if (token === undefined) return undefined;
    for (const st of target ? [target] : this.states) {
      st.authority.revalidate();
      const actor = st.authority.authenticate(token);
      if (actor) return actor;
    }
    return undefined;
  }

  /** The state serving a repository and profile, or undefined when this Hub does not serve it. */
  state(repository: string, profile: string): HubState | undefined {
    return this.entries ? this.served.get(`${repository}\0${profile}`) : this.states[0];
  }

  close(): void {
    for (const s of this.states) s.close();
  }
}

function realOrSelf(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
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
function refuseBody(ex: Exchange, e = new HubError(413, 'body_too_large', `request bodies are at most ${OPERATION_MAX_BYTES} bytes (a result: ${RESULT_REQUEST_MAX_BYTES})`)): void {
  sendError(ex, e, true);
}

const readScope = () => new HubError(403, 'insufficient_scope', 'a read-scope token runs only the read-only operations');

function bearer(ex: Exchange): string | undefined {
  const h = ex.headers.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer ([!-~]{1,512})$/.exec(h);
  return m?.[1];
}

export const HUB_OPERATIONS: readonly string[] = [...READ_OPERATIONS, ...MUTATION_OPERATIONS, ...COLLECTOR_OPERATIONS, ...EXPORT_OPERATIONS, ...INTEGRATION_OPERATIONS];

export function createHandler(hub: HubState | HubSet, log: (line: string) => void, operations: readonly string[] = HUB_OPERATIONS) {
  const set = hub instanceof HubSet ? hub : new HubSet([hub]);
  // An answer computed from the journal may rest on a batch that is committed but not yet synced: it
  // leaves only once that batch is durable (see batch.ts).
  const sendDurable = (state: HubState | undefined, ex: Exchange, status: number, body: JsonValue, close = false): void =>
    state ? state.commits.whenDurable((failed) => (failed ? sendError(ex, failed, close) : send(ex, status, body, close))) : send(ex, status, body, close);
  // The body arrives turns after the headers: an answer computed now reads the authority as it is now
  // (mutations revalidate in their batch instead).
  const fresh = <C>(state: HubState, ctx: C): C => {
    state.authority.revalidate();
    return ctx;
  };
  return async (ex: Exchange): Promise<void> => {
    // The state whose batches an answer waits for (the one data dir's, or the addressed profile's).
    let chosen: HubState | undefined = set.states.length === 1 ? set.states[0] : undefined;
    try {
      const url = ex.url;
      const pathOnly = url.split('?')[0]!;
      if (pathOnly === '/v1/hub/health' || pathOnly === '/v1/hub/ready') {
        if (ex.method !== 'GET') {
          ex.allow('GET');
          throw new HubError(405, 'method_not_allowed', 'use GET');
        }
        if (pathOnly === '/v1/hub/ready') {
          const reasons = readiness(set.states, set.entries, set.draining);
          send(ex, reasons.length === 0 ? 200 : 503, reasons.length === 0 ? { status: 'ready' } : { status: 'not_ready', reasons: reasons as unknown as JsonValue });
          return;
        }
        let ok = set.states.length > 0;
        for (const st of set.states) {
          try {
            ok &&= st.authority.ping();
          } catch {
            ok = false;
          }
        }
        send(ex, ok ? 200 : 503, { status: ok ? 'ok' : 'unavailable' });
        return;
      }
      const m = ROUTE.exec(pathOnly);
      if (!m) throw new HubError(404, 'not_found', 'no such route');
      if (ex.method !== 'POST') {
        ex.allow('POST');
        throw new HubError(405, 'method_not_allowed', 'use POST');
      }

      let repository: string | undefined;
      let profile: string | undefined;
      try {
        repository = decodeURIComponent(m[1]!);
        profile = decodeURIComponent(m[2]!);
      } catch {
        repository = undefined;
      }
      const wellFormed = repository !== undefined && profile !== undefined && isRepository(repository) && ID_RE.test(profile);
      const target = wellFormed ? set.state(repository!, profile!) : undefined;
      const actor = set.authenticate(bearer(ex), target);
      if (!actor) throw unauthenticated();
      if (!wellFormed) throw invalidRequest('malformed repository or profile in the path');
      repository = repository!;
      profile = profile!;
      if (actor.repository !== null && actor.repository !== repository) throw new HubError(403, 'forbidden', 'the token does not grant this repository');
      if (!target || !target.authority.getProfile(repository, profile)) throw new HubError(404, 'profile_not_found', 'no such agent-task profile');
      const state = target;
      chosen = state;

      if (m[3] !== undefined) {
        if (actor.scope === 'read') throw readScope();
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
      // A result carries an assertion (up to the one assertion bound); every other operation fits 64 KiB.
      if (declared !== undefined && (!/^[0-9]{1,12}$/.test(declared) || Number(declared) > RESULT_REQUEST_MAX_BYTES)) {
        // Refused from the header, before any body byte is read.
        refuseBody(ex);
        return;
      }
      const body = await ex.body(RESULT_REQUEST_MAX_BYTES);
      if (body === undefined) {
        refuseBody(ex);
        return;
      }
      let doc: JsonValue;
      try {
        // Every number of the contract is an integer: 1.0, 1e0 or a float that rounds to one is refused.
        doc = parseStrictJson(body, { maxBytes: RESULT_REQUEST_MAX_BYTES, what: 'request body', integersOnly: true });
      } catch (e) {
        // Over 64 KiB only a result is admitted: anything else that size is too large, valid JSON or not.
        if (body.length > OPERATION_MAX_BYTES) {
          refuseBody(ex);
          return;
        }
        throw invalidRequest(e instanceof AgentscmError ? e.message : 'request body is not valid JSON');
      }
      if (body.length > OPERATION_MAX_BYTES && (typeof doc !== 'object' || doc === null || Array.isArray(doc) || doc.operation !== 'result')) {
        refuseBody(ex);
        return;
      }
      if (typeof doc === 'object' && doc !== null && !Array.isArray(doc) && typeof doc.operation === 'string' && !operations.includes(doc.operation)) {
        throw new HubError(400, 'unsupported_operation', 'this Hub does not offer that operation (see capabilities)');
      }
      // {"change_id": ID} in place of a subject: the Hub derives the Change's current subject itself.
      doc = withCurrentSubject(state.authority, repository, profile, doc);
      const scope: Scope = { repository, profile, actor };
      const ctx = state.mutationContext(operations);
      const op = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? doc.operation : undefined;
      if (actor.scope === 'read' && !(typeof op === 'string' && READ_SCOPE_OPERATIONS.includes(op))) throw readScope();
      if (typeof op === 'string' && (COLLECTOR_OPERATIONS as readonly string[]).includes(op)) {
        const c = CollectorRequest.safeParse(doc);
        if (!c.success) throw invalidRequest(`request body is invalid: ${formatIssues(c.error)}`);
        const req = c.data;
        if (req.operation === 'collector_descriptor') sendDurable(state, ex, 200, handleCollector(fresh(state, ctx), scope, req, doc));
        else state.commits.submit(() => handleCollector(ctx, scope, req, doc), answerWhenCommitted(ex, log));
        return;
      }
      if (typeof op === 'string' && (MUTATION_OPERATIONS as readonly string[]).includes(op)) {
        const m = MutationRequest.safeParse(doc);
        if (!m.success) throw invalidRequest(`request body is invalid: ${formatIssues(m.error)}`);
        const req = m.data;
        // recovery is a read: it answers from committed rows at once.
        if (req.operation === 'recovery') sendDurable(state, ex, 200, handleMutation(fresh(state, ctx), scope, req, doc));
        else state.commits.submit(prepareMutation(ctx, scope, req, doc), answerWhenCommitted(ex, log));
        return;
      }
      if (op === 'receipt_bundle') {
        const r = ReceiptBundleRequest.safeParse(doc);
        if (!r.success) throw invalidRequest(`request body is invalid: ${formatIssues(r.error)}`);
        sendDurable(state, ex, 200, handleReceiptBundle(fresh(state, ctx), scope, r.data, state.receiptKey));
        return;
      }
      if (typeof op === 'string' && (INTEGRATION_OPERATIONS as readonly string[]).includes(op)) {
        const r = IntegrationRequest.safeParse(doc);
        if (!r.success) throw invalidRequest(`request body is invalid: ${formatIssues(r.error)}`);
        sendDurable(state, ex, 200, handleIntegration(state.authority, () => state.journal(), scope, r.data));
        return;
      }
      const parsed = ReadRequest.safeParse(doc);
      if (!parsed.success) throw invalidRequest(`request body is invalid: ${formatIssues(parsed.error)}`);
      const req = parsed.data;
      let answer = handleRead(fresh(state, ctx), scope, req);
      // With a receipt key every qualification answer is signed, bound to the subject and nonce asked.
      if (req.operation === 'qualification' && state.receiptKey) answer = signQualification(answer, (doc as { subject: JsonValue }).subject, req.nonce ?? null, state.receiptKey);
      sendDurable(state, ex, 200, answer);
    } catch (e) {
      const f = failure(e, log);
      // An unauthenticated request's answer ends its connection: a client without a valid token gets
      // one answer per connection, however many requests it pipelines behind it.
      sendDurable(chosen, ex, f.status, { error: { code: f.code, message: f.message } }, f.status === 401);
    }
  };
}

/**
 * The Hub's routes as one plain node:http request listener, so that other handlers (an MCP endpoint)
 * can be mounted beside it on the same server. createHubServer (http.ts) gives it the Hub's bounds.
 */
export function hubRequestListener(state: HubState | HubSet, log: (line: string) => void, operations: readonly string[] = HUB_OPERATIONS): RequestListener {
  const set = state instanceof HubSet ? state : new HubSet([state]);
  const handler = createHandler(set, log, operations);
  const mcp = mcpListener(set, handler, log);
  return (req, res) => {
    if ((req.url ?? '').split('?')[0] === MCP_PATH) mcp(req, res);
    else void handler(exchange(req, res));
  };
}

export async function startHub(opts: HubOptions): Promise<RunningHub> {
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  let set: HubSet;
  if (opts.config) set = HubSet.open(opts.config, log);
  else if (opts.dataDir !== undefined) set = new HubSet([new HubState(opts.dataDir, log)]);
  else throw new Error('startHub needs a data dir or a config');
  const listener = hubRequestListener(set, log);
  const server = createHubServer(listener, { ...(opts.tls ? { tls: opts.tls } : {}), ...(opts.limits ? { limits: opts.limits } : {}), ...(opts.accessLog ? { accessLog: opts.accessLog } : {}) });
  for (const st of set.states) st.receiptKey = opts.receiptKey;
  let addr;
  try {
    addr = await listen(server, opts.port, opts.host);
  } catch (e) {
    set.close();
    throw e;
  }
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const forges = opts.forge ? set.states.map((st) => new ForgeStatus(st, opts.forge!, log)) : [];
  for (const f of forges) f.start();
  return {
    url: `${opts.tls ? 'https' : 'http'}://${host}:${addr.port}`,
    // Draining: no new connection is accepted, idle ones close, requests already received are answered
    // (a mutation once its batch committed); then the forge loops stop, the group commits finish and the
    // stores close.
    close: async () => {
      set.draining = true;
      await drainServer(server, opts.drainMs ?? 10_000);
      for (const f of forges) await f.stop();
      for (const st of set.states) await st.commits.close();
      set.close();
    },
  };
}
