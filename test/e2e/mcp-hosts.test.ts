// The real Claude Code and Codex CLIs, headless against the loopback model stand-ins, in a project
// where `agentscm install-mcp` registered a real Hub's workspace MCP endpoint (the token only in the
// environment). The stand-in's model asks for the `qualification` tool, then for `claim`: the Hub's
// real answers come back as tool results in the next model requests, and the claim is visible to
// `agentscm agent-task status`.
//
// AGENTSCM_SKIP_HOSTS=1 skips the host runs outside CI only (as in hosts-harness.test.ts).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { subjectToJson, type Task } from '../../src/core/authority/plan.js';
import { Authority } from '../../src/core/authority/store.js';
import { agentscm, json } from '../support/cli.js';
import { claimBody, opPath, postOp } from '../support/hub-http.js';
import { describeRun, runClaude, runCodex, startAnthropicStandin, startOpenAIStandin, type RecordedRequest } from '../support/hosts/index.js';
import { adminSetup, callArgs, PROFILE, REPO, startHub, type RunningHub, type Setup } from '../support/hub.js';

const skip =
  process.env.AGENTSCM_SKIP_HOSTS === '1' && process.env.CI !== 'true' ? 'AGENTSCM_SKIP_HOSTS=1 (never honoured when CI=true)' : false;

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const REQUIREMENT = {
  version: 1,
  workflow: 'mcp-hosts',
  steps: [{ id: 'say', skill: 'say', action_class: 'agent_assertion', required: true, depends_on: [], summary: 'say it', criteria: [{ id: 'said', text: 'said', required: true, controller_only: false }], references: [] }],
};

/** The text of every tool_result block of a model request, by tool_use id. */
function toolResults(req: RecordedRequest): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of ((req.body as Doc)?.messages ?? []) as Doc[]) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as Doc[]) {
      if (b.type !== 'tool_result') continue;
      const text = typeof b.content === 'string' ? b.content : (b.content as Doc[]).filter((c) => c.type === 'text').map((c) => c.text).join('');
      out.set(b.tool_use_id, text);
    }
  }
  return out;
}

describe('the workspace MCP endpoint in the real Claude Code and Codex CLIs', { skip }, () => {
  let s: Setup;
  let hub: RunningHub;
  let token: string;
  let task: Task;
  before(async () => {
    const reqFile = path.join(fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'agentscm-req-')), 'requirement.json');
    fs.writeFileSync(reqFile, JSON.stringify(REQUIREMENT));
    s = adminSetup(reqFile);
    s.workspace = fs.realpathSync(s.workspace);
    token = fs.readFileSync(s.tokenFile, 'utf8').trim();
    hub = await startHub(s.dataDir);
    const inst = agentscm(['install-mcp', '--host', 'claude-code', '--project', s.workspace, '--endpoint', hub.url, '--repository', REPO, '--profile', PROFILE, '--json']);
    assert.equal(inst.code, 0, inst.stderr);
    assert.doesNotMatch(fs.readFileSync(path.join(s.workspace, '.mcp.json'), 'utf8'), /agentscm_wt1_/);
    const cp = agentscm(['checkpoint', 'c1', '--data-dir', s.dataDir, '--repository', REPO, '--profile', PROFILE, '--workspace', s.workspace, '--json']);
    assert.equal(cp.code, 0, cp.stderr);
    const a = Authority.open(s.dataDir, { readonly: true });
    try {
      task = a.tasksFor(a.currentSubject(REPO, PROFILE, 'c1'))[0]!;
    } finally {
      a.close();
    }
  });
  after(async () => {
    await hub?.stop();
  });

  it('Claude Code: qualification and claim through MCP: the Hub\'s answers reach the model, the claim is visible to agent-task status', { timeout: 180_000 }, async () => {
    const subject = subjectToJson(task.subject);
    const claimArgs = claimBody(task, 'claude-mcp-claim') as Doc;
    delete claimArgs.operation;
    const agent = new http.Agent({ keepAlive: true });
    let before: Doc | undefined;
    const standin = await startAnthropicStandin({
      reply: async (i) => {
        // Claude Code connects MCP servers in the background; its own tool waits for them.
        if (i === 0) return { toolUse: { name: 'WaitForMcpServers', input: {} } };
        if (i === 1) return { toolUse: { name: 'mcp__agentscm__qualification', input: { subject } } };
        if (i === 2) {
          // The Hub's HTTP answer now, before the claim changes it.
          before = (await postOp(agent, hub.url, opPath(REPO, PROFILE), token, { operation: 'qualification', subject })).body;
          return { toolUse: { name: 'mcp__agentscm__claim', input: claimArgs } };
        }
        return 'Claimed.';
      },
    });
    const home = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'agentscm-claude-home-'));
    // The project's .mcp.json servers are used once the user approves them; this is that approval.
    fs.mkdirSync(path.join(home, '.claude'));
    fs.writeFileSync(path.join(home, '.claude', 'settings.json'), JSON.stringify({ enabledMcpjsonServers: ['agentscm'] }));
    try {
      const run = await runClaude({
        cwd: s.workspace,
        home,
        prompt: 'Check the qualification, then claim the task.',
        standin,
        env: { AGENTSCM_MCP_TOKEN: token, ENABLE_TOOL_SEARCH: 'false' },
        args: ['--allowedTools', 'mcp__agentscm__qualification,mcp__agentscm__claim'],
        timeoutMs: 150_000,
      });
      const why = describeRun(run, standin);
      assert.ok(!run.timedOut && run.code === 0, why);
      standin.assertNoFailures();
      const reqs = standin.modelRequests();
      assert.equal(reqs.length, 4, why);
      // The model was offered the endpoint's tools.
      const all = (((reqs[1]!.body as Doc).tools ?? []) as Doc[]).map((t) => t.name as string);
      const offered = all.filter((n) => n.startsWith('mcp__agentscm__'));
      assert.equal(offered.length, 16, `${all.join(', ')}\n${[...toolResults(reqs[1]!).values(), ...toolResults(reqs[2]!).values()].join('\n')}\n${why}`);

      const qText = toolResults(reqs[2]!).get('toolu_standin_1');
      assert.ok(qText, why);
      assert.deepEqual(JSON.parse(qText), before, 'the qualification tool result is the Hub\'s answer');
      assert.equal((before as Doc).qualified, false);

      const cText = toolResults(reqs[3]!).get('toolu_standin_2');
      assert.ok(cText, why);
      const claimed = JSON.parse(cText) as Doc;
      assert.equal(claimed.operation, 'claim', cText);
      assert.deepEqual(claimed.attempt.agent, { owner_id: 'alice', agent_id: 'claude' });
      const status = agentscm(callArgs(s, hub.url, 'status', 'c1', '--task-id', task.task_id));
      assert.equal(status.code, 0, status.stderr);
      const st = json<Doc>(status);
      assert.equal(st.attempt?.attempt_id, claimed.attempt.attempt_id, status.stdout);
      assert.equal(st.attempt?.state, 'leased');
    } finally {
      agent.destroy();
      await standin.close();
    }
  });
  it('Codex: qualification and claim through the MCP server of install-mcp\'s .codex/config.toml', { timeout: 180_000 }, async () => {
    // A fresh Change of its own, in a project configured for Codex.
    const reqFile = path.join(fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'agentscm-req-')), 'requirement.json');
    fs.writeFileSync(reqFile, JSON.stringify(REQUIREMENT));
    const cs = adminSetup(reqFile);
    cs.workspace = fs.realpathSync(cs.workspace);
    const ctoken = fs.readFileSync(cs.tokenFile, 'utf8').trim();
    const chub = await startHub(cs.dataDir);
    const agent = new http.Agent({ keepAlive: true });
    try {
      const inst = agentscm(['install-mcp', '--host', 'codex', '--project', cs.workspace, '--endpoint', chub.url, '--repository', REPO, '--profile', PROFILE, '--json']);
      assert.equal(inst.code, 0, inst.stderr);
      assert.doesNotMatch(fs.readFileSync(path.join(cs.workspace, '.codex', 'config.toml'), 'utf8'), /agentscm_wt1_/);
      assert.equal(agentscm(['checkpoint', 'c1', '--data-dir', cs.dataDir, '--repository', REPO, '--profile', PROFILE, '--workspace', cs.workspace, '--json']).code, 0);
      const a = Authority.open(cs.dataDir, { readonly: true });
      let t: Task;
      try {
        t = a.tasksFor(a.currentSubject(REPO, PROFILE, 'c1'))[0]!;
      } finally {
        a.close();
      }
      const subject = subjectToJson(t.subject);
      const claimArgs = claimBody(t, 'codex-mcp-claim') as Doc;
      delete claimArgs.operation;
      const names: string[] = [];
      let before: Doc | undefined;
      /** Codex offers an MCP server's tools in one namespace, mcp__SERVER. */
      const tool = (req: RecordedRequest, op: string): { name: string; namespace: string } => {
        const tools = ((req.body as Doc)?.tools ?? []) as Doc[];
        names.splice(0, names.length, ...tools.map((x) => String(x.name)));
        const ns = tools.find((x) => x.type === 'namespace' && x.name === 'mcp__agentscm');
        const offered = ((ns?.tools ?? []) as Doc[]).map((x) => x.name as string);
        assert.equal(offered.length, 16, `the 16 tools in the mcp__agentscm namespace: ${offered.join(', ')}`);
        return { namespace: 'mcp__agentscm', name: offered.find((n) => n === op) ?? `missing:${op}` };
      };
      const standin = await startOpenAIStandin({
        reply: async (i, req) => {
          if (i === 0) return { toolUse: { ...tool(req, 'qualification'), input: { subject } } };
          if (i === 1) {
            before = (await postOp(agent, chub.url, opPath(REPO, PROFILE), ctoken, { operation: 'qualification', subject })).body;
            return { toolUse: { ...tool(req, 'claim'), input: claimArgs } };
          }
          return 'Claimed.';
        },
      });
      try {
        // codex exec cannot ask for approval of a tool that is not read-only (claim): this run approves.
        const run = await runCodex({ cwd: cs.workspace, prompt: 'Check the qualification, then claim the task.', standin, env: { AGENTSCM_MCP_TOKEN: ctoken }, args: ['--dangerously-bypass-approvals-and-sandbox'], timeoutMs: 150_000 });
        const why = `${names.join(', ')}\n${describeRun(run, standin)}`;
        assert.ok(!run.timedOut && run.code === 0, why);
        standin.assertNoFailures();
        const reqs = standin.modelRequests();
        assert.equal(reqs.length, 3, why);
        const output = (req: RecordedRequest, callId: string): string | undefined => {
          const items = ((req.body as Doc)?.input ?? []) as Doc[];
          const o = items.find((x) => x.type === 'function_call_output' && x.call_id === callId);
          if (!o) return undefined;
          return typeof o.output === 'string' ? o.output : JSON.stringify(o.output);
        };
        const qOut = output(reqs[1]!, 'call_standin_0');
        assert.ok(qOut, why);
        assert.ok(!qOut.includes('unsupported call'), why);
        assert.ok(qOut.includes(JSON.stringify(before)) || qOut.includes(JSON.stringify(JSON.stringify(before)).slice(1, -1)), `the Hub's qualification answer reaches the model: ${qOut}`);
        const cOut = output(reqs[2]!, 'call_standin_1');
        assert.ok(cOut, why);
        const status = agentscm(callArgs(cs, chub.url, 'status', 'c1', '--task-id', t.task_id));
        assert.equal(status.code, 0, status.stderr);
        const st = json<Doc>(status);
        assert.equal(st.attempt?.state, 'leased', `${status.stdout}\n${cOut}`);
        assert.ok(cOut.includes(st.attempt.attempt_id), `the claim answer reaches the model: ${cOut}`);
      } finally {
        await standin.close();
      }
    } finally {
      agent.destroy();
      await chub.stop();
    }
  });
});
