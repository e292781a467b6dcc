// The real Claude Code and Codex CLIs, headless against loopback model stand-ins, run a project whose
// hooks are trivial shell scripts: SessionStart adds context, Stop blocks once then allows. The model
// requests the stand-in receives prove what the host did with each hook answer. This checks the
// harness itself (test/support/hosts) so later end-to-end tests can trust it.
//
// The hosts are installed on first use into the hosts cache. When they cannot be installed or run,
// the test fails; AGENTSCM_SKIP_HOSTS=1 skips it only outside CI, for offline development.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
  assertCodexHookStdout,
  claudeResult,
  codexSchemaErrors,
  describeRun,
  ensureHosts,
  makeTempDir,
  runClaude,
  runCodex,
  startAnthropicStandin,
  startOpenAIStandin,
  writeClaudeHooks,
  writeCodexHooks,
  type HookTable,
  type HostRun,
  type Standin,
} from '../support/hosts/index.js';

const skip =
  process.env.AGENTSCM_SKIP_HOSTS === '1' && process.env.CI !== 'true'
    ? 'AGENTSCM_SKIP_HOSTS=1 (never honoured when CI=true)'
    : false;

const MARKER = 'MARKER-123';
const REASON = 'REASON-456';
const SESSION_START_OUT = JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: MARKER } });
const STOP_BLOCK_OUT = JSON.stringify({ decision: 'block', reason: REASON });
const REPLIES = ['FIRST-REPLY', 'SECOND-REPLY'];

// One script for every event: counts its calls, keeps each stdin, prints the answer prepared for
// that call (if any). Exit 0 with empty stdout is "allow / nothing to add" on both hosts.
const HOOK_SH = `#!/bin/sh
ev="$1"; d="$2"
n=$(cat "$d/$ev.count" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$d/$ev.count"
cat > "$d/$ev.$n.in.json"
if [ -f "$d/$ev.$n.out.json" ]; then cat "$d/$ev.$n.out.json"; fi
exit 0
`;

interface Fixture {
  project: string;
  state: string;
  hooks: HookTable;
}

function fixture(name: string): Fixture {
  const root = makeTempDir(`agentscm-hosts-${name}-`);
  const project = path.join(root, 'project');
  const state = path.join(root, 'state');
  fs.mkdirSync(project);
  fs.mkdirSync(state);
  const script = path.join(root, 'hook.sh');
  fs.writeFileSync(script, HOOK_SH, { mode: 0o755 });
  fs.writeFileSync(path.join(state, 'SessionStart.1.out.json'), SESSION_START_OUT);
  fs.writeFileSync(path.join(state, 'Stop.1.out.json'), STOP_BLOCK_OUT);
  const handler = (ev: string) => ({ type: 'command' as const, command: `/bin/sh ${script} ${ev} ${state}`, timeout: 30 });
  return {
    project,
    state,
    hooks: {
      SessionStart: [{ hooks: [handler('SessionStart')] }],
      Stop: [{ hooks: [handler('Stop')] }],
    },
  };
}

function count(state: string, ev: string): number {
  const f = path.join(state, `${ev}.count`);
  return fs.existsSync(f) ? Number(fs.readFileSync(f, 'utf8').trim()) : 0;
}

function hookInput(state: string, ev: string, n: number): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(state, `${ev}.${n}.in.json`), 'utf8')) as Record<string, unknown>;
}

function checkRun(run: HostRun, standin: Standin): void {
  assert.ok(!run.timedOut && run.code === 0, describeRun(run, standin));
  standin.assertNoFailures();
}

/** The evidence both hosts must show for "context at start, one Stop block, then allow". */
function checkConversation(run: HostRun, standin: Standin, state: string): void {
  const why = describeRun(run, standin);
  const reqs = standin.modelRequests();
  assert.equal(reqs.length, 2, `expected the first turn plus one continuation\n${why}`);
  const [first, second] = reqs as [(typeof reqs)[0], (typeof reqs)[0]];
  assert.ok(first.text.includes(MARKER), `SessionStart context missing from the first model request\n${why}`);
  assert.ok(!first.text.includes(REASON), `Stop reason already in the first request\n${why}`);
  assert.ok(second.text.includes(REASON), `Stop block reason missing from the continuation request\n${why}`);
  assert.equal(count(state, 'SessionStart'), 1, why);
  assert.equal(count(state, 'Stop'), 2, `Stop should run once per model turn\n${why}`);
  const stop1 = hookInput(state, 'Stop', 1);
  const stop2 = hookInput(state, 'Stop', 2);
  assert.equal(stop1.hook_event_name, 'Stop');
  assert.equal(stop1.stop_hook_active, false);
  assert.equal(stop2.stop_hook_active, true, 'the second Stop is a continuation');
  assert.equal(stop1.last_assistant_message, REPLIES[0]);
  assert.equal(stop2.last_assistant_message, REPLIES[1]);
  assert.equal(stop1.session_id, stop2.session_id);
  const start = hookInput(state, 'SessionStart', 1);
  assert.equal(start.hook_event_name, 'SessionStart');
  assert.equal(start.source, 'startup');
  assert.equal(start.session_id, stop1.session_id);
}

describe('model stand-ins', () => {
  it('record requests in order and turn anything unexpected into a recorded failure', async () => {
    const a = await startAnthropicStandin({ reply: ['one', 'two'] });
    const o = await startOpenAIStandin({ reply: async (i) => Promise.resolve(`reply-${i}`) });
    try {
      const post = (url: string, headers: Record<string, string>, body: unknown) =>
        fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      const ak = { 'x-api-key': a.apiKey };
      const ok = await post(`${a.baseUrl}/v1/messages?beta=true`, ak, { model: 'm', stream: true, messages: [] });
      assert.equal(ok.status, 200);
      const events = (await ok.text()).match(/^event: (\S+)$/gm)?.map((l) => l.slice(7));
      assert.deepEqual(events, [
        'message_start',
        'content_block_start',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
      const plain = (await (await post(`${a.baseUrl}/v1/messages`, ak, { model: 'm', messages: [] })).json()) as {
        content: { text: string }[];
      };
      assert.equal(plain.content[0]?.text, 'two');
      assert.equal((await post(`${a.baseUrl}/v1/messages/count_tokens`, ak, { messages: [] })).status, 200);
      a.assertNoFailures();
      assert.equal((await fetch(`${a.baseUrl}/api/hello`, { method: 'HEAD' })).status, 404);
      assert.equal((await post(`${a.baseUrl}/v1/messages`, { 'x-api-key': 'wrong' }, {})).status, 401);
      assert.equal(a.modelRequests().length, 2);
      assert.deepEqual(
        a.requests.map((r) => r.status),
        [200, 200, 200, 404, 401],
      );
      assert.equal(a.failures.length, 2);
      assert.throws(() => a.assertNoFailures(), /HEAD \/api\/hello/);

      const r = await post(`${o.baseUrl}/responses`, { authorization: `Bearer ${o.apiKey}` }, { model: 'm', stream: true });
      const body = await r.text();
      assert.deepEqual(body.match(/^event: (\S+)$/gm)?.map((l) => l.slice(7)), [
        'response.created',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.done',
        'response.output_item.done',
        'response.completed',
      ]);
      assert.ok(body.includes('"text":"reply-0"'));
      assert.equal((await fetch(`${o.baseUrl}/models`)).status, 404);
      assert.equal(o.failures.length, 1);
    } finally {
      await a.close();
      await o.close();
    }
  });
});

describe('real hosts run project hooks against loopback model stand-ins', { skip }, () => {
  before(async () => {
    await ensureHosts();
  });

  describe('Claude Code', () => {
    let standin: Standin;
    before(async () => {
      standin = await startAnthropicStandin({ reply: REPLIES });
    });
    after(async () => {
      await standin.close();
    });

    it('adds SessionStart context to the first request and continues once on a Stop block', async () => {
      const fx = fixture('claude');
      writeClaudeHooks(fx.project, fx.hooks);
      const run = await runClaude({ cwd: fx.project, prompt: 'Say hello.', standin });
      process.stderr.write(`# claude run: ${run.durationMs} ms, ${standin.requests.length} requests\n`);
      checkRun(run, standin);
      checkConversation(run, standin, fx.state);
      const result = claudeResult(run);
      assert.equal(result.is_error, false, describeRun(run, standin));
      assert.equal(result.result, REPLIES[1]);
      assert.equal(result.session_id, hookInput(fx.state, 'Stop', 1).session_id);
      for (const r of standin.modelRequests()) assert.equal(r.headers['x-api-key'], standin.apiKey);
    });
  });

  describe('Codex', () => {
    let standin: Standin;
    before(async () => {
      standin = await startOpenAIStandin({ reply: REPLIES });
    });
    after(async () => {
      await standin.close();
    });

    it('adds SessionStart context to the first request and continues once on a Stop block', async () => {
      const fx = fixture('codex');
      writeCodexHooks(fx.project, fx.hooks);
      const run = await runCodex({ cwd: fx.project, prompt: 'Say hello.', standin });
      process.stderr.write(`# codex run: ${run.durationMs} ms, ${standin.requests.length} requests\n`);
      checkRun(run, standin);
      checkConversation(run, standin, fx.state);
      assert.ok(run.stdout.trimEnd().endsWith(REPLIES[1] as string), describeRun(run, standin));
      for (const r of standin.modelRequests()) assert.equal(r.headers.authorization, `Bearer ${standin.apiKey}`);
      // What the hooks printed is what Codex accepts, and what Codex sent is what its schema says.
      assertCodexHookStdout('session-start.command.output', SESSION_START_OUT);
      assertCodexHookStdout('stop.command.output', STOP_BLOCK_OUT);
      for (const n of [1, 2]) {
        assert.deepEqual(codexSchemaErrors('stop.command.input', hookInput(fx.state, 'Stop', n)), []);
      }
    });
  });

  it('the Codex schema check rejects what Codex would reject', () => {
    // Without these, a passing schema check above would prove nothing.
    assert.throws(() => assertCodexHookStdout('stop.command.output', JSON.stringify({ decision: 'approve' })));
    assert.throws(() => assertCodexHookStdout('stop.command.output', JSON.stringify({ decision: 'block' })));
    assert.throws(() => assertCodexHookStdout('stop.command.output', JSON.stringify({ decision: 'block', reason: '  ' })));
    assert.throws(() =>
      assertCodexHookStdout(
        'stop.command.output',
        JSON.stringify({ decision: 'block', reason: 'x', hookSpecificOutput: { hookEventName: 'Stop' } }),
      ),
    );
    assert.throws(() =>
      assertCodexHookStdout(
        'session-start.command.output',
        JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: 'x', sessionTitle: 't' } }),
      ),
    );
    assert.throws(() => assertCodexHookStdout('stop.command.output', 'not json'));
    assertCodexHookStdout('stop.command.output', '');
    assertCodexHookStdout('stop.command.output', '{}');
  });
});
