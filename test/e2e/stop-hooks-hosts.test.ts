// The real Claude Code and Codex CLIs, headless against loopback model stand-ins, run in a workspace
// where `agentscm install-stop` registered the task-stop hook against a real Hub. While the Change's
// subject is not qualified the hook sends each host back (its reason reaches the next model request)
// and its own counter ends the loop after 8 continuations: Codex has no cap of its own, and Claude's
// cap is raised here so that the hook's counter is what ends it. Once the collector exists, a
// qualified, clean subject lets each host stop at once.
//
// AGENTSCM_SKIP_HOSTS=1 skips the host runs outside CI only (as in hosts-harness.test.ts).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentscm, json } from '../support/cli.js';
import { describeRun, ensureHosts, runClaude, runCodex, startAnthropicStandin, startOpenAIStandin, type HostRun, type Standin } from '../support/hosts/index.js';
import { COLLECTOR_SKIP, installStop, qualifiedRig } from '../support/qualified.js';
import { adminSetup, PROFILE, REPO, startHub, type RunningHub, type Setup } from '../support/hub.js';

const skip =
  process.env.AGENTSCM_SKIP_HOSTS === '1' && process.env.CI !== 'true' ? 'AGENTSCM_SKIP_HOSTS=1 (never honoured when CI=true)' : false;


type Host = 'claude-code' | 'codex';

interface World {
  s: Setup;
  hub: RunningHub;
  state: string;
  taskId: string;
}

async function world(host: Host): Promise<World> {
  const s = adminSetup();
  s.workspace = fs.realpathSync(s.workspace);
  const hub = await startHub(s.dataDir);
  // Installed before the checkpoint: the host config is part of the workspace's files.
  const inst = agentscm([
    'install-stop', 'c1', '--host', host, '--project', s.workspace, '--data-dir', s.dataDir, '--endpoint', hub.url,
    '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile, '--json',
  ]);
  assert.equal(inst.code, 0, inst.stderr);
  const cp = agentscm(['checkpoint', 'c1', '--data-dir', s.dataDir, '--repository', REPO, '--profile', PROFILE, '--workspace', s.workspace, '--json']);
  assert.equal(cp.code, 0, cp.stderr);
  const taskId = (json(cp).tasks as { step_id: string; task_id: string }[]).find((t) => t.step_id === 'check')!.task_id;
  const state = path.join(s.root, 'stop-state');
  return { s, hub, state, taskId };
}

function counters(state: string): number[] {
  const dir = path.join(state, 'agent-stop');
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).map((f) => (JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as { count: number }).count);
}

/** 1 first turn + 8 continuations, each continuation request carrying the hook's typed reason. */
function checkEightContinuations(run: HostRun, standin: Standin, w: World): void {
  const why = describeRun(run, standin);
  assert.ok(!run.timedOut && run.code === 0, why);
  standin.assertNoFailures();
  const reqs = standin.modelRequests();
  assert.equal(reqs.length, 9, `expected the first turn plus 8 continuations\n${why}`);
  assert.ok(!reqs[0]!.text.includes('not_ready_to_stop'), why);
  for (const r of reqs.slice(1)) {
    assert.ok(r.text.includes('not_ready_to_stop'), `block reason missing from a continuation request\n${why}`);
    assert.ok(r.text.includes('collector_claim') && r.text.includes(w.taskId), `next (collector_claim of the check task) missing\n${why}`);
  }
  assert.deepEqual(counters(w.state), [8], why);
}

describe('Stop hooks in the real hosts', { skip }, () => {
  before(async () => {
    await ensureHosts();
  });

  describe('Claude Code', () => {
    let w: World;
    let standin: Standin;
    before(async () => {
      w = await world('claude-code');
      standin = await startAnthropicStandin({ reply: 'I am done.' });
    });
    after(async () => {
      await standin.close();
      await w.hub.stop();
    });

    it('is sent back while the subject is not qualified, and the hook\'s counter ends the loop', async () => {
      const run = await runClaude({
        cwd: w.s.workspace,
        prompt: 'Finish the change.',
        standin,
        // Claude's own cap (8) would end the loop at the same point: raise it so the hook's counter is what ends it.
        env: { AGENTSCM_STATE_DIR: w.state, CLAUDE_CODE_STOP_HOOK_BLOCK_CAP: '20' },
        timeoutMs: 180_000,
      });
      process.stderr.write(`# claude run: ${run.durationMs} ms, ${standin.modelRequests().length} model requests\n`);
      checkEightContinuations(run, standin, w);
      assert.ok(standin.modelRequests()[1]!.text.includes('Stop hook feedback'), describeRun(run, standin));
    });
  });

  describe('Codex', () => {
    let w: World;
    let standin: Standin;
    before(async () => {
      w = await world('codex');
      standin = await startOpenAIStandin({ reply: 'I am done.' });
    });
    after(async () => {
      await standin.close();
      await w.hub.stop();
    });

    it('is sent back while the subject is not qualified, and only the hook\'s counter ends the loop', async () => {
      const run = await runCodex({ cwd: w.s.workspace, prompt: 'Finish the change.', standin, env: { AGENTSCM_STATE_DIR: w.state }, timeoutMs: 120_000 });
      process.stderr.write(`# codex run: ${run.durationMs} ms, ${standin.modelRequests().length} model requests\n`);
      checkEightContinuations(run, standin, w);
      assert.ok(standin.modelRequests()[1]!.text.includes('hook_prompt'), describeRun(run, standin));
    });
  });

  it('a qualified, clean subject lets each host stop at once', { skip: COLLECTOR_SKIP }, async () => {
    const rig = await qualifiedRig((r) => {
      installStop(r, 'claude-code');
      installStop(r, 'codex');
    });
    try {
      for (const host of ['claude-code', 'codex'] as const) {
        const state = path.join(rig.root, `stop-state-${host}`);
        const standin = host === 'codex' ? await startOpenAIStandin({ reply: 'Done.' }) : await startAnthropicStandin({ reply: 'Done.' });
        try {
          const env = { AGENTSCM_STATE_DIR: state };
          const run = host === 'codex'
            ? await runCodex({ cwd: rig.workspace, prompt: 'Finish.', standin, env, timeoutMs: 60_000 })
            : await runClaude({ cwd: rig.workspace, prompt: 'Finish.', standin, env, timeoutMs: 60_000 });
          assert.ok(!run.timedOut && run.code === 0, describeRun(run, standin));
          standin.assertNoFailures();
          assert.equal(standin.modelRequests().length, 1, `${host}: a qualified subject stops at once\n${describeRun(run, standin)}`);
          assert.deepEqual(counters(state), [], 'no continuation was granted');
        } finally {
          await standin.close();
        }
      }
    } finally {
      await rig.stop();
    }
  });
});

