// Tree Ring memory and the agentscm Stop gate installed together, run by the real Claude Code and
// Codex CLIs (headless, against loopback model stand-ins): the project's memory reaches the first
// model request, Tree Ring asks for its capture checkpoint exactly once, the gate sends the agent back
// while the Change is not qualified (and, once it is, lets the session stop), and nothing the hooks
// write (receipts, the store, the counter) makes the checkpointed workspace dirty.
//
// AGENTSCM_SKIP_HOSTS=1 skips the host runs outside CI only (as in hosts-harness.test.ts).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import { readWorkspaceLater } from '../../src/core/native/snapshot.js';
import { agentscm, json } from '../support/cli.js';
import { describeRun, ensureHosts, runClaude, runCodex, startAnthropicStandin, startOpenAIStandin, type HostRun, type Standin } from '../support/hosts/index.js';
import { adminSetup, PROFILE, REPO, startHub } from '../support/hub.js';
import { COLLECTOR_SKIP, installStop, qualifiedRig } from '../support/qualified.js';
import { receiptFiles, tr } from '../support/treering-activation.js';

const skip = process.env.AGENTSCM_SKIP_HOSTS === '1' && process.env.CI !== 'true' ? 'AGENTSCM_SKIP_HOSTS=1 (never honoured when CI=true)' : false;
const HOSTS = ['claude-code', 'codex'] as const;
type Host = (typeof HOSTS)[number];
const BRIEF = 'Tree Ring Memory scoped preflight recall:';
const CHECKPOINT = 'Tree Ring automatic capture checkpoint';
const MEMORY = 'Release notes live in docs/CHANGES.md and list every user-facing change.';

/** tree-ring init and one project memory, in a workspace about to be checkpointed. */
function withMemory(workspace: string): void {
  assert.equal(tr(workspace, ['init']).code, 0);
  const m = tr(workspace, ['remember', MEMORY, '--event-type', 'decision', '--scope', 'project', '--project', path.basename(workspace)]);
  assert.equal(m.code, 0, m.stderr);
}

async function runHost(host: Host, cwd: string, standin: Standin, state: string): Promise<HostRun> {
  const env = { AGENTSCM_STATE_DIR: state, CLAUDE_CODE_STOP_HOOK_BLOCK_CAP: '20' };
  return host === 'codex'
    ? runCodex({ cwd, prompt: 'Finish the change.', standin, env, timeoutMs: 150_000 })
    : runClaude({ cwd, prompt: 'Finish the change.', standin, env, timeoutMs: 180_000 });
}

const occurrences = (text: string, needle: string) => text.split(needle).length - 1;

/** Memory in the first request, the capture checkpoint asked once (in the second), receipts not content. */
function checkMemory(run: HostRun, standin: Standin, workspace: string, revision: string): void {
  const why = describeRun(run, standin);
  assert.ok(!run.timedOut && run.code === 0, why);
  standin.assertNoFailures();
  const reqs = standin.modelRequests();
  assert.ok(reqs.length >= 2, why);
  assert.ok(reqs[0]!.text.includes(BRIEF) && reqs[0]!.text.includes(MEMORY), `the project's memory missing from the first request\n${why}`);
  assert.ok(!reqs[0]!.text.includes(CHECKPOINT), why);
  assert.ok(reqs[1]!.text.includes(CHECKPOINT), `capture checkpoint missing from the first continuation\n${why}`);
  const once = occurrences(reqs[1]!.text, CHECKPOINT);
  for (const r of reqs.slice(2)) assert.equal(occurrences(r.text, CHECKPOINT), once, `the capture checkpoint was asked again\n${why}`);
  assert.ok(receiptFiles(workspace).length >= 1, 'Tree Ring left its receipt');
  assert.equal(readWorkspaceLater(workspace).scanned().revision, revision, 'receipts, the store and the counter left the workspace clean');
  for (const r of reqs) assert.ok(!r.text.includes('workspace_dirty'), `the gate saw the workspace dirty\n${why}`);
}

describe('Tree Ring and the Stop gate together in the real hosts', { skip }, () => {
  before(async () => {
    await ensureHosts();
  });

  for (const host of HOSTS) {
    it(`${host}: memory arrives, one capture checkpoint, and the gate sends the agent back until the counter ends it`, async () => {
      const s = adminSetup();
      s.workspace = fs.realpathSync(s.workspace);
      const hub = await startHub(s.dataDir);
      const standin = host === 'codex' ? await startOpenAIStandin({ reply: 'I am done.' }) : await startAnthropicStandin({ reply: 'I am done.' });
      try {
        withMemory(s.workspace);
        const inst = agentscm([
          'install-stop', 'c1', '--host', host, '--project', s.workspace, '--data-dir', s.dataDir, '--endpoint', hub.url,
          '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile,
        ]);
        assert.equal(inst.code, 0, inst.stderr);
        const cp = agentscm(['checkpoint', 'c1', '--data-dir', s.dataDir, '--repository', REPO, '--profile', PROFILE, '--workspace', s.workspace, '--json']);
        assert.equal(cp.code, 0, cp.stderr);
        const revision = (json(cp).subject as { revision: string }).revision;
        const run = await runHost(host, s.workspace, standin, path.join(s.root, 'stop-state'));
        process.stderr.write(`# ${host} run: ${run.durationMs} ms, ${standin.modelRequests().length} model requests\n`);
        checkMemory(run, standin, s.workspace, revision);
        const reqs = standin.modelRequests();
        assert.equal(reqs.length, 9, `the first turn plus 8 continuations of the gate\n${describeRun(run, standin)}`);
        for (const r of reqs.slice(1)) assert.ok(r.text.includes('collector_claim'), `the gate's next is the collector claim, never a checkpoint\n${describeRun(run, standin)}`);
      } finally {
        await standin.close();
        await hub.stop();
      }
    });
  }

  it('a qualified subject: one capture checkpoint, then each host stops', { skip: COLLECTOR_SKIP }, async () => {
    let revision = '';
    const rig = await qualifiedRig((r) => {
      withMemory(r.workspace);
      installStop(r, 'claude-code');
      installStop(r, 'codex');
      revision = readWorkspaceLater(r.workspace).scanned().revision;
    });
    try {
      for (const host of HOSTS) {
        const state = path.join(rig.root, `stop-state-${host}`);
        const standin = host === 'codex' ? await startOpenAIStandin({ reply: 'Done.' }) : await startAnthropicStandin({ reply: 'Done.' });
        try {
          const run = await runHost(host, rig.workspace, standin, state);
          checkMemory(run, standin, rig.workspace, revision);
          assert.equal(standin.modelRequests().length, 2, `${host}: the checkpoint turn, then the stop\n${describeRun(run, standin)}`);
          assert.ok(!fs.existsSync(path.join(state, 'agent-stop')) || fs.readdirSync(path.join(state, 'agent-stop')).length === 0, 'the gate granted no continuation');
        } finally {
          await standin.close();
        }
      }
    } finally {
      await rig.stop();
    }
  });
});
