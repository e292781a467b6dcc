// The workspace MCP endpoint, POST /v1/hub/workspace/mcp?repository={repository}&profile={profile}, on
// the official MCP SDK (@modelcontextprotocol/server): the 2026-07-28 revision (stateless, per-request
// _meta, server/discover) and, through the SDK's stateless legacy fallback, the initialize path of
// 2025-11-25 and 2025-06-18 clients. Answers are single JSON bodies (no SSE stream, no session).
//
// One facade, two doors: every tool call is handed to the HTTP facade's own handler (server.ts) as the
// request its operation would be over HTTP, with the bearer token of the MCP request. So the token,
// origin, scope, decoding, bounds, durability and error codes are those of the HTTP facade, and a tool's
// structuredContent is the HTTP answer; a refused call is a tool error whose structuredContent is the
// facade's {"error":{"code","message"}} document.
//
// Before the SDK sees a request: POST only (405 otherwise), no Origin header unless allowed (403), a
// valid unrevoked token (401), the repository and profile of the query as the facade checks them, and
// a bounded body (413).

import type * as http from 'node:http';
import { Readable } from 'node:stream';
import { createMcpHandler, McpServer, type StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import type { TokenActor } from '../core/authority/types.js';
import { outputJson, parseStrictJson } from '../core/canonical/json.js';
import { RESULT_REQUEST_MAX_BYTES } from '../core/contract/ops.js';
import { ID_RE, isRepository } from '../core/contract/paths.js';
import { READ_SCOPE_OPERATIONS, TOOLS, type ToolSpec } from '../core/contract/tools.js';
import { AGENTSCM_VERSION } from '../version.js';
import { CHANGE_FORM_OPERATIONS } from './change-subject.js';
import { exchange, noteBodyBytes, type Exchange, type RequestListener } from './http.js';

export const MCP_PATH = '/v1/hub/workspace/mcp';
/**
 * An MCP request body: a tool's arguments within the facade's largest bound (a result's), plus the
 * JSON-RPC envelope. The facade then holds every other operation to its own 64 KiB.
 */
export const MCP_MAX_BYTES = RESULT_REQUEST_MAX_BYTES + 16 * 1024;

/** The profiles a Hub serves (server.ts HubSet): the same lookups as the HTTP facade's. */
interface McpHubs {
  state(repository: string, profile: string): { readonly authority: { getProfile(repository: string, profile: string): unknown } } | undefined;
  authenticate(token: string | undefined, target: ReturnType<McpHubs['state']>): TokenActor | undefined;
}

type FacadeHandler = (ex: Exchange) => Promise<void>;

const errorJson = (code: string, message: string) => JSON.stringify({ error: { code, message } });

/**
 * A tool's input schema as the SDK takes it: the JSON Schema of the operation's request (without
 * `operation`), with validation left to the facade so that bad input gets the facade's error code.
 */
function inputSchema(spec: ToolSpec): StandardSchemaWithJSON<Record<string, unknown>> {
  const schema = spec.request.omit({ operation: true });
  let json: Record<string, unknown> | undefined;
  const jsonSchema = () => (json ??= withChangeForm(spec.name, schema.toJSONSchema({ target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as Record<string, unknown>));
  return {
    '~standard': {
      version: 1,
      vendor: 'agentscm',
      validate: (value: unknown) => ({ value: value as Record<string, unknown> }),
      jsonSchema: { input: jsonSchema, output: jsonSchema },
    },
  };
}

/**
 * The Change form (change-subject.ts) in a subject-bound tool's JSON Schema: `change_id` beside
 * `subject`, neither required by the schema (the facade refuses both or neither). Kept as one object
 * schema, without a oneOf at its top, which some hosts do not take for a tool's input.
 */
function withChangeForm(name: string, json: Record<string, unknown>): Record<string, unknown> {
  const properties = json.properties as Record<string, unknown> | undefined;
  if (!CHANGE_FORM_OPERATIONS.includes(name) || properties === undefined || !('subject' in properties)) return json;
  const required = Array.isArray(json.required) ? (json.required as string[]).filter((k) => k !== 'subject') : undefined;
  const changeId = {
    type: 'string',
    pattern: ID_RE.source,
    description: 'Instead of subject (give exactly one): the Change id; the Hub runs the request with that Change\'s current subject.',
  };
  return { ...json, properties: { ...properties, change_id: changeId }, ...(required ? { required } : {}) };
}

const SCHEMAS = new Map(TOOLS.map((t) => [t.name, inputSchema(t)]));

/** Runs one operation through the facade as an HTTP request would: resolves its status and JSON text. */
function viaFacade(handler: FacadeHandler, token: string, repository: string, profile: string, body: string): Promise<{ status: number; json: string }> {
  const bytes = Buffer.from(body, 'utf8');
  const url = `/v1/hub/workspace/repositories/${repository.split('/').map(encodeURIComponent).join('/')}/profiles/${encodeURIComponent(profile)}/agent-tasks`;
  return new Promise((resolve) => {
    let asked = false;
    void handler({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(bytes.length) },
      body(max: number) {
        if (asked) return Promise.reject(new Error('the body was asked for twice'));
        asked = true;
        return Promise.resolve(bytes.length > max ? undefined : bytes);
      },
      answer(status: number, json: string) {
        resolve({ status, json });
      },
      // Always POST here: no 405 to name methods for.
      allow() {},
    });
  });
}

interface ActorExtra {
  readonly actor: TokenActor;
  readonly repository: string;
  readonly profile: string;
  /**
   * Each tools/call's arguments as the strict parse read them (JSON-RPC id to arguments; AMBIGUOUS for an
   * id two calls share): a tool builds its facade request from these, never from the SDK's copy, which
   * drops a "__proto__" member (it assigns keys) where the facade would refuse it as unknown.
   */
  readonly rawArguments: ReadonlyMap<unknown, unknown>;
}

const AMBIGUOUS = Symbol('two calls with one id');

/** The authenticated request a tool runs for: the SDK hands the request's authInfo to the tool's callback. */
interface ToolContext {
  readonly http?: { readonly authInfo?: { readonly token: string; readonly extra?: Record<string, unknown> } };
  readonly mcpReq?: { readonly id?: unknown };
}

/** Whether a tools/call's arguments are a JSON object (what the SDK's request schema takes, and a facade request can carry). */
const isJsonObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The facade request of a tool call, as JSON text: the operation, then the call's arguments as the
 * request's members (a "__proto__" member stays one; an integer beyond 2^53 - 1 stays exact, for the
 * facade to judge); a refusal (the facade's error document) for arguments no request could carry.
 */
function facadeRequest(name: string, raw: unknown): { body: string } | { refused: string } {
  if (raw === AMBIGUOUS) return { refused: errorJson('invalid_request', 'two tools/call requests share one JSON-RPC id') };
  if (raw === undefined) return { body: outputJson({ operation: name }) };
  if (!isJsonObject(raw)) return { refused: errorJson('invalid_request', 'tool arguments must be a JSON object') };
  if (Object.hasOwn(raw, 'operation')) return { refused: errorJson('invalid_request', `"operation" is the tool's name (${name}), not an argument`) };
  const doc: Record<string, unknown> = { operation: name };
  for (const k of Object.keys(raw)) Object.defineProperty(doc, k, { value: raw[k], enumerable: true, writable: true, configurable: true });
  return { body: outputJson(doc) };
}

function toolServer(handler: FacadeHandler, repository: string, profile: string, scope: TokenActor['scope']): McpServer {
  const server = new McpServer(
    { name: 'agentscm-hub', version: AGENTSCM_VERSION },
    {
      instructions:
        `The agentscm task contract of ${repository}, profile ${profile}. Start with capabilities and next; ` +
        'a refused call carries {"error":{"code","message"}} with a stable code.',
    },
  );
  for (const spec of TOOLS) {
    if (scope === 'read' && !spec.read) continue;
    server.registerTool(
      spec.name,
      { description: spec.description, inputSchema: SCHEMAS.get(spec.name)!, annotations: { readOnlyHint: spec.read, idempotentHint: true, openWorldHint: false } },
      async (_args: Record<string, unknown>, ctx: ToolContext) => {
        // The token is the one this request authenticated with (mcpListener), never one a pooled server kept.
        const auth = ctx.http?.authInfo;
        const a = auth?.extra as ActorExtra | undefined;
        if (!auth || !a || a.repository !== repository || a.profile !== profile || a.actor.scope !== scope) throw new Error('no authenticated actor');
        // Never the SDK's copy of the arguments: the SDK was handed this very document, so its id is here.
        const id = ctx.mcpReq?.id;
        if (!a.rawArguments.has(id)) throw new Error('no decoded arguments for this call');
        const request = facadeRequest(spec.name, a.rawArguments.get(id));
        if ('refused' in request) return { content: [{ type: 'text', text: request.refused }], structuredContent: JSON.parse(request.refused) as Record<string, unknown>, isError: true };
        const { status, json } = await viaFacade(handler, auth.token, repository, profile, request.body);
        const answer = JSON.parse(json) as Record<string, unknown>;
        return status === 200 ? { content: [{ type: 'text', text: json }], structuredContent: answer } : { content: [{ type: 'text', text: json }], structuredContent: answer, isError: true };
      },
    );
  }
  return server;
}

/**
 * Idle tool servers of the modern (stateless) revision, by repository, profile and scope: building a server
 * and registering its tools is most of the per-request cost the Hub can avoid. A server serves one
 * exchange at a time (the SDK refuses one still connected) and comes back here when its exchange closes.
 * Legacy (initialize) requests get a fresh server each: that path keeps the handshake state per request.
 */
class ServerPool {
  private readonly idle = new Map<string, McpServer[]>();
  private static readonly MAX_IDLE = 32;
  constructor(private readonly handler: FacadeHandler) {}

  take(era: string, { repository, profile, actor }: ActorExtra): McpServer {
    if (era !== 'modern') return toolServer(this.handler, repository, profile, actor.scope);
    const key = `${repository}\n${profile}\n${actor.scope}`;
    const server = this.idle.get(key)?.pop() ?? toolServer(this.handler, repository, profile, actor.scope);
    // Called by the SDK once the exchange is over (transport closed): the server is free again.
    let back = false;
    server.server.onclose = () => {
      if (back) return;
      back = true;
      const list = this.idle.get(key) ?? [];
      if (list.length < ServerPool.MAX_IDLE && server.server.transport === undefined) list.push(server);
      this.idle.set(key, list);
    };
    return server;
  }
}

/**
 * The JSON-RPC document of a body, decoded strictly (well-formed UTF-8, no duplicate keys: a lax parser
 * would take the last of two keys), or the reason it is not one. Numbers are taken by value: a tool's
 * arguments reach the facade re-encoded, so 1.0 arrives as 1 while 1.5 is refused by the schema.
 */
function parseBody(body: Buffer): { doc: unknown } | { refused: string } {
  try {
    return { doc: parseStrictJson(body, { maxBytes: MCP_MAX_BYTES, what: 'the MCP request' }) };
  } catch (e) {
    return { refused: e instanceof Error ? e.message.slice(0, 200) : 'not strict JSON' };
  }
}

/** One tools/call of a JSON-RPC document: the tool's name ('' when not a string), its id, its arguments. */
interface ToolCall {
  readonly name: string;
  readonly id: unknown;
  readonly args: unknown;
}

/** The tools/call messages of a JSON-RPC document (one message or a batch), as the strict parse read them. */
function toolCalls(doc: unknown): ToolCall[] {
  return (Array.isArray(doc) ? doc : [doc]).flatMap((m: unknown) => {
    const msg = m as { method?: unknown; id?: unknown; params?: { name?: unknown; arguments?: unknown } } | null;
    if (msg?.method !== 'tools/call') return [];
    const params = msg.params;
    const args = params !== null && typeof params === 'object' && Object.hasOwn(params, 'arguments') ? params.arguments : undefined;
    return [{ name: typeof params?.name === 'string' ? params.name : '', id: msg.id, args }];
  });
}

/**
 * The document as the SDK is handed it: a tools/call whose arguments are not a JSON object carries {}
 * there instead. The SDK then dispatches the call, and the tool refuses the arguments it was sent
 * (rawArguments) with the facade's invalid_request, as a tool error with the stable code, instead of the
 * SDK answering JSON-RPC -32602 with its schema's validation issues.
 */
function sdkDocument(doc: unknown, calls: readonly ToolCall[]): unknown {
  if (!calls.some((c) => c.args !== undefined && !isJsonObject(c.args))) return doc;
  const asObject = (m: unknown): unknown => {
    const msg = m as { method?: unknown; params?: unknown } | null;
    const params = msg?.params;
    if (msg?.method !== 'tools/call' || !isJsonObject(params) || !Object.hasOwn(params, 'arguments') || isJsonObject(params.arguments)) return m;
    return { ...msg, params: { ...params, arguments: {} } };
  };
  return Array.isArray(doc) ? doc.map(asObject) : asObject(doc);
}

/** The arguments of each call with an id, by that id (ActorExtra.rawArguments). */
function argumentsById(calls: readonly ToolCall[]): Map<unknown, unknown> {
  const out = new Map<unknown, unknown>();
  for (const c of calls) if (c.id !== undefined) out.set(c.id, out.has(c.id) ? AMBIGUOUS : c.args);
  return out;
}

/**
 * How many subscriptions/listen streams one token may hold open at once. A stream has no end of its own
 * (it stays until the client goes), so without a bound one token could hold any number of sockets; a
 * host opens one per session, and no tool list here ever changes.
 */
export const MAX_LISTEN_STREAMS_PER_TOKEN = 16;

/** Whether a JSON-RPC document is one subscriptions/listen request. */
const isListen = (doc: unknown): boolean => !Array.isArray(doc) && (doc as { method?: unknown } | null)?.method === 'subscriptions/listen';

/** The MCP endpoint as a node:http listener; `handler` is the HTTP facade's (server.ts createHandler). */
export function mcpListener(hubs: McpHubs, handler: FacadeHandler, log: (line: string) => void, allowedOrigins: readonly string[] = []): RequestListener {
  const pool = new ServerPool(handler);
  /** Open listen streams by token id. */
  const listening = new Map<string, number>();
  const mcp = createMcpHandler(
    ({ era, authInfo }) => {
      const a = authInfo?.extra as ActorExtra | undefined;
      if (!a || !authInfo) throw new Error('no authenticated actor');
      return pool.take(era, a);
    },
    { legacy: 'stateless', responseMode: 'auto', maxRequestBodySize: MCP_MAX_BYTES, onerror: (e) => log(`hub: mcp: ${e.message.slice(0, 200)}`) },
  );
  return (req, res) => {
    const ex = exchange(req, res);
    const refuse = (status: number, code: string, message: string, close = false) => ex.answer(status, errorJson(code, message), close);
    void (async () => {
      if (req.method !== 'POST') {
        res.setHeader('allow', 'POST');
        return refuse(405, 'method_not_allowed', 'use POST (a stateless endpoint: no GET stream, no session to DELETE)');
      }
      // A browser page must not reach the Hub: MCP hosts send no Origin header.
      const origin = req.headers.origin;
      if (origin !== undefined && !allowedOrigins.includes(origin)) return refuse(403, 'origin_not_allowed', 'requests from this Origin are refused');
      const h = req.headers.authorization;
      const token = typeof h === 'string' ? /^Bearer ([!-~]{1,512})$/.exec(h)?.[1] : undefined;
      const q = new URL(req.url ?? '', 'http://hub').searchParams;
      const repository = q.get('repository');
      const profile = q.get('profile');
      const wellFormed = repository !== null && profile !== null && isRepository(repository) && ID_RE.test(profile);
      const target = wellFormed ? hubs.state(repository, profile) : undefined;
      const actor = hubs.authenticate(token, target);
      if (!actor || token === undefined) {
        res.setHeader('www-authenticate', 'Bearer');
        return refuse(401, 'unauthenticated', 'missing, unknown or revoked workspace token', true);
      }
      if (!wellFormed) return refuse(400, 'invalid_request', 'the query names no valid repository and profile');
      if (actor.repository !== null && actor.repository !== repository) return refuse(403, 'forbidden', 'the token does not grant this repository');
      if (!target || !target.authority.getProfile(repository, profile)) return refuse(404, 'profile_not_found', 'no such agent-task profile');
      const ctype = req.headers['content-type'];
      if (typeof ctype !== 'string' || !/^application\/json(\s*;\s*charset=utf-8)?$/i.test(ctype)) return refuse(415, 'unsupported_media_type', 'send application/json');
      const body = await ex.body(MCP_MAX_BYTES);
      if (body === undefined) return refuse(413, 'body_too_large', `MCP request bodies are at most ${MCP_MAX_BYTES} bytes`, true);
      const parsed = parseBody(body);
      if ('refused' in parsed) {
        // JSON-RPC's parse error, as the SDK answers a body that is not JSON, with the facade's reason.
        const json = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${parsed.refused}` } });
        return ex.answer(400, json);
      }
      const doc = parsed.doc;
      const calls = toolCalls(doc);
      const called = calls.map((c) => c.name);
      if (actor.scope === 'read' && called.some((n) => !READ_SCOPE_OPERATIONS.includes(n))) {
        res.setHeader('www-authenticate', 'Bearer error="insufficient_scope"');
        return refuse(403, 'insufficient_scope', 'a read-scope token runs only the read-only operations');
      }
      if (isListen(doc)) {
        const open = listening.get(actor.token_id) ?? 0;
        if (open >= MAX_LISTEN_STREAMS_PER_TOKEN) {
          return refuse(429, 'too_many_streams', `a token holds at most ${MAX_LISTEN_STREAMS_PER_TOKEN} subscriptions/listen streams at once`);
        }
        listening.set(actor.token_id, open + 1);
        res.once('close', () => {
          const n = (listening.get(actor.token_id) ?? 1) - 1;
          if (n > 0) listening.set(actor.token_id, n);
          else listening.delete(actor.token_id);
        });
      }
      // The request's string headers as a plain record: the Request copies them once.
      const headers: Record<string, string> = {};
      for (const k in req.headers) {
        const v = req.headers[k];
        if (typeof v === 'string') headers[k] = v;
      }
      const extra: ActorExtra = { actor, repository, profile, rawArguments: argumentsById(calls) };
      // The body is handed over parsed: the SDK never parses it again (more loosely).
      // A stream the SDK serves (subscriptions/listen) ends when the client goes away: such a request gets
      // an abort signal. A single tools/call is answered as one JSON body (its tools send no progress), so
      // it gets none: a Request that follows a signal costs about as much as one without it again.
      let signal: AbortSignal | undefined;
      if (Array.isArray(doc) || called.length === 0) {
        const gone = new AbortController();
        signal = gone.signal;
        // Only a client gone before the answer is complete aborts (an abort after it costs every request).
        res.once('close', () => {
          if (!res.writableFinished) gone.abort();
        });
      }
      // A fixed origin: the client's Host header is not ours to parse (a malformed one would throw here).
      const request = new Request(`http://hub${req.url}`, { method: 'POST', headers, ...(signal ? { signal } : {}) });
      const answer = await mcp.fetch(request, { authInfo: { token, clientId: actor.token_id, scopes: [actor.scope], extra: { ...extra } }, parsedBody: sdkDocument(doc, calls) });
      const outHeaders: http.OutgoingHttpHeaders = { 'cache-control': 'no-store' };
      answer.headers.forEach((v, k) => {
        if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection') outHeaders[k] = v;
      });
      if (answer.body !== null && /^text\/event-stream/i.test(answer.headers.get('content-type') ?? '')) {
        // An event stream goes out as it is written (chunked).
        res.writeHead(answer.status, outHeaders);
        const stream = Readable.fromWeb(answer.body as import('node:stream/web').ReadableStream<Uint8Array>);
        stream.on('data', (c: Uint8Array) => noteBodyBytes(res, c.byteLength));
        stream.on('error', () => res.destroy()).pipe(res);
        return;
      }
      const out = Buffer.from(await answer.arrayBuffer());
      res.writeHead(answer.status, { ...outHeaders, 'content-length': out.length });
      noteBodyBytes(res, out.length);
      res.end(out);
    })().catch((e: unknown) => {
      log(`hub: mcp: internal error (${e instanceof Error ? e.name : 'unknown'})`);
      if (!res.headersSent) refuse(500, 'internal', 'internal error');
      else res.destroy();
    });
  };
}
