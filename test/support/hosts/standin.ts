// Loopback stand-ins for the two model APIs the hosts talk to: Anthropic Messages (Claude Code) and
// OpenAI Responses (Codex). They are real node:http servers on 127.0.0.1 with an OS-assigned port that
// the runners pass to the host explicitly. Each answers with a short scripted assistant text (no tool
// calls) and records every request in arrival order: the requests are the evidence a test asserts on
// (SessionStart context in the first, a Stop block's reason in the next, one request per
// continuation). Any path the stand-in does not serve answers 404 and is recorded as a failure, so a
// host that starts calling something new shows up in the test instead of being silently tolerated.

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  /** Arrival order over all requests to this stand-in, from 0. */
  seq: number;
  method: string;
  /** Path including the query (Claude Code sends `/v1/messages?beta=true`). */
  url: string;
  pathname: string;
  headers: http.IncomingHttpHeaders;
  /** The raw request body. */
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
  /** True for a model turn the stand-in answered (`/v1/messages` or `/v1/responses`, not refused). */
  model: boolean;
  /** HTTP status the stand-in answered with. */
  status: number;
}

/**
 * The reply text for a model request; `index` counts model requests only, from 0. A function may be
 * async and may act before answering (write a file, run a command): the host waits for the reply, so
 * that is how a test does something "between turns".
 */
export type ReplyScript =
  | ModelReply
  | readonly ModelReply[]
  | ((index: number, req: RecordedRequest) => ModelReply | Promise<ModelReply>);

/**
 * A model turn: text, or one tool call (Anthropic tool_use, OpenAI function_call). The host runs the
 * tool and sends its result (tool_result, function_call_output) in the next model request.
 */
export type ModelReply = string | { readonly toolUse: { readonly name: string; readonly input: Record<string, unknown>; /** OpenAI: the tool's namespace (Codex puts MCP tools in one). */ readonly namespace?: string } };

export interface StandinOptions {
  reply?: ReplyScript;
  /** If set, every request must carry it (`x-api-key` / `Authorization: Bearer`); others get 401 + a failure. */
  apiKey?: string;
}

export interface Standin {
  readonly kind: 'anthropic' | 'openai';
  readonly port: number;
  /** Base URL the host is configured with (Anthropic: no `/v1`; OpenAI: ends in `/v1`). */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** Every request, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Requests the stand-in did not expect (unknown path, bad body, missing key), in words. */
  readonly failures: readonly string[];
  /** Model requests only, in order. */
  modelRequests(): RecordedRequest[];
  /** Throws with a readable summary if any failure was recorded. */
  assertNoFailures(): void;
  /** A one-line-per-request summary for failure messages. */
  describe(): string;
  close(): Promise<void>;
}

const DEFAULT_REPLY = 'Done.';
const DEFAULT_KEY = 'sk-standin-0123456789';
const MAX_BODY = 32 << 20;

type Handler = (req: RecordedRequest, res: http.ServerResponse, modelIndex: number, reply: ModelReply) => void;

interface Route {
  method: string;
  pathname: string;
  model: boolean;
  handle: Handler;
}

function pickReply(script: ReplyScript | undefined, index: number, req: RecordedRequest): ModelReply | Promise<ModelReply> {
  if (script === undefined) return DEFAULT_REPLY;
  if (typeof script === 'string') return script;
  if (typeof script === 'function') return script(index, req);
  const arr = script as readonly string[];
  return arr[Math.min(index, arr.length - 1)] ?? DEFAULT_REPLY;
}

async function startStandin(
  kind: 'anthropic' | 'openai',
  routes: Route[],
  keyOf: (h: http.IncomingHttpHeaders) => string | undefined,
  opts: StandinOptions,
): Promise<Standin> {
  const requests: RecordedRequest[] = [];
  const failures: string[] = [];
  const apiKey = opts.apiKey ?? DEFAULT_KEY;
  let modelCount = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      const url = req.url ?? '/';
      const pathname = new URL(url, 'http://127.0.0.1').pathname;
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      const route = routes.find((r) => r.method === req.method && r.pathname === pathname);
      const rec: RecordedRequest = {
        seq: requests.length,
        method: req.method ?? '?',
        url,
        pathname,
        headers: req.headers,
        text,
        body,
        model: route?.model ?? false,
        status: 0,
      };
      requests.push(rec);
      const fail = (status: number, why: string): void => {
        rec.status = status;
        rec.model = false;
        failures.push(`#${rec.seq} ${rec.method} ${url}: ${why}`);
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'standin_error', message: why } }));
      };
      if (size > MAX_BODY) return fail(413, `body over ${MAX_BODY} bytes`);
      if (!route) return fail(404, 'no such endpoint on the stand-in');
      if (keyOf(req.headers) !== apiKey) return fail(401, 'missing or wrong API key');
      if (body === null || typeof body !== 'object') return fail(400, 'body is not a JSON object');
      rec.status = 200;
      const index = route.model ? modelCount++ : -1;
      new Promise<ModelReply>((resolve) => resolve(route.model ? pickReply(opts.reply, index, rec) : '')).then(
        (reply) => route.handle(rec, res, index, reply),
        // 400, not 5xx: the hosts retry server errors with backoff, which would only delay the failure.
        (err: unknown) => fail(400, `reply script threw: ${err instanceof Error ? err.message : String(err)}`),
      );
    });
  });
  // Streams end with the response; keep-alive sockets are closed on close().
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const baseUrl = kind === 'anthropic' ? `http://127.0.0.1:${port}` : `http://127.0.0.1:${port}/v1`;

  const describe = (): string =>
    requests.length === 0
      ? '(no requests)'
      : requests.map((r) => `#${r.seq} ${r.method} ${r.url} -> ${r.status} (${r.text.length} bytes)`).join('\n');

  return {
    kind,
    port,
    baseUrl,
    apiKey,
    requests,
    failures,
    modelRequests: () => requests.filter((r) => r.model),
    assertNoFailures() {
      if (failures.length > 0) {
        throw new Error(`${kind} stand-in saw unexpected requests:\n${failures.join('\n')}\nall requests:\n${describe()}`);
      }
    },
    describe,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function sse(res: http.ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function startSse(res: http.ServerResponse, extra: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...extra });
}

function field(body: unknown, key: string): unknown {
  return body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[key] : undefined;
}

/** Anthropic Messages stand-in for Claude Code (set `ANTHROPIC_BASE_URL` to `baseUrl`). */
export function startAnthropicStandin(opts: StandinOptions = {}): Promise<Standin> {
  const messages: Handler = (req, res, index, reply) => {
    const model = String(field(req.body, 'model') ?? 'claude-standin');
    const id = `msg_standin_${index}`;
    const usage = { input_tokens: 10, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const tool = typeof reply === 'string' ? undefined : reply.toolUse;
    const text = typeof reply === 'string' ? reply : '';
    const toolBlock = tool ? { type: 'tool_use', id: `toolu_standin_${index}`, name: tool.name, input: tool.input } : undefined;
    const stop = tool ? 'tool_use' : 'end_turn';
    if (field(req.body, 'stream') !== true) {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_standin_${req.seq}` });
      res.end(
        JSON.stringify({
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [toolBlock ?? { type: 'text', text }],
          stop_reason: stop,
          stop_sequence: null,
          usage,
        }),
      );
      return;
    }
    startSse(res, { 'request-id': `req_standin_${req.seq}` });
    sse(res, 'message_start', {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    if (toolBlock) {
      sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { ...toolBlock, input: {} } });
      sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(toolBlock.input) } });
    } else {
      sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
      sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
    }
    sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
    sse(res, 'message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: 2 },
    });
    sse(res, 'message_stop', { type: 'message_stop' });
    res.end();
  };
  const countTokens: Handler = (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ input_tokens: Math.max(1, Math.ceil(req.text.length / 4)) }));
  };
  return startStandin(
    'anthropic',
    [
      { method: 'POST', pathname: '/v1/messages', model: true, handle: messages },
      { method: 'POST', pathname: '/v1/messages/count_tokens', model: false, handle: countTokens },
    ],
    (h) => {
      const x = h['x-api-key'];
      if (typeof x === 'string') return x;
      const a = h.authorization;
      return typeof a === 'string' && a.startsWith('Bearer ') ? a.slice(7) : undefined;
    },
    opts,
  );
}

/** OpenAI Responses stand-in for Codex (a `model_providers` entry with `base_url = baseUrl`). */
export function startOpenAIStandin(opts: StandinOptions = {}): Promise<Standin> {
  const responses: Handler = (req, res, index, reply) => {
    const text = typeof reply === 'string' ? reply : '';
    const call = typeof reply === 'string' ? undefined : reply.toolUse;
    const model = String(field(req.body, 'model') ?? 'gpt-standin');
    const id = `resp_standin_${index}`;
    const itemId = call ? `fc_standin_${index}` : `msg_standin_${index}`;
    const createdAt = Math.floor(Date.now() / 1000);
    const base = { id, object: 'response', created_at: createdAt, model, status: 'in_progress', output: [] as unknown[] };
    const item: Record<string, unknown> = call
      ? { id: itemId, type: 'function_call', status: 'completed', call_id: `call_standin_${index}`, name: call.name, ...(call.namespace !== undefined ? { namespace: call.namespace } : {}), arguments: JSON.stringify(call.input) }
      : {
          id: itemId,
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text, annotations: [] }],
        };
    const usage = {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 2,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 12,
    };
    let seq = 0;
    const ev = (type: string, data: Record<string, unknown>): void => sse(res, type, { type, sequence_number: seq++, ...data });
    startSse(res, { 'x-request-id': `req_standin_${req.seq}` });
    ev('response.created', { response: base });
    if (call) {
      ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } });
      ev('response.function_call_arguments.delta', { item_id: itemId, output_index: 0, delta: item.arguments });
      ev('response.function_call_arguments.done', { item_id: itemId, output_index: 0, arguments: item.arguments });
      ev('response.output_item.done', { output_index: 0, item });
      ev('response.completed', { response: { ...base, status: 'completed', output: [item], usage } });
      res.end();
      return;
    }
    ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    ev('response.content_part.added', {
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    ev('response.output_text.delta', { item_id: itemId, output_index: 0, content_index: 0, delta: text });
    ev('response.output_text.done', { item_id: itemId, output_index: 0, content_index: 0, text });
    ev('response.output_item.done', { output_index: 0, item });
    ev('response.completed', { response: { ...base, status: 'completed', output: [item], usage } });
    res.end();
  };
  return startStandin(
    'openai',
    [{ method: 'POST', pathname: '/v1/responses', model: true, handle: responses }],
    (h) => {
      const a = h.authorization;
      return typeof a === 'string' && a.startsWith('Bearer ') ? a.slice(7) : undefined;
    },
    opts,
  );
}
