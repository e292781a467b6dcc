// After `tree-ring init`, the real Claude Code and Codex CLIs (headless, against loopback model
// stand-ins) run the project's managed lifecycle hooks exactly as written by init: the project's
// memory brief reaches the first model request through SessionStart, Stop asks for exactly one
// capture checkpoint, and the receipt the hook left makes `integrations status` report the harness
// active.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { describeRun, ensureHosts, makeTempDir, runClaude, runCodex, startAnthropicStandin, startOpenAIStandin, type HostRun, type Standin } from '../support/hosts/index.js';
import { receiptFiles, statusOf, tr } from '../support/treering-activation.js';

const skip = process.env.AGENTSCM_SKIP_HOSTS === '1' && process.env.CI !== 'true' ? 'AGENTSCM_SKIP_HOSTS=1 (never honoured when CI=true)' : false;
const REPLIES = ['FIRST-REPLY', 'SECOND-REPLY'];
const BRIEF = 'Tree Ring Memory scoped preflight recall:';
const CHECKPOINT = 'Tree Ring automatic capture checkpoint';
const MEMORY = 'Release notes live in docs/CHANGES.md and list every user-facing change.';

function project(name: string): string {
  const p = path.join(makeTempDir(`tr-e2e-${name}-`), 'project');
  fs.mkdirSync(p);
  const r = tr(p, ['init']);
  assert.equal(r.code, 0, r.stderr);
  const m = tr(p, ['remember', MEMORY, '--event-type', 'decision', '--scope', 'project', '--project', 'project']);
  assert.equal(m.code, 0, m.stderr);
  return p;
}

function checkConversation(run: HostRun, standin: Standin, p: string, harness: string): void {
  const why = describeRun(run, standin);
  assert.ok(!run.timedOut && run.code === 0, why);
  standin.assertNoFailures();
  const reqs = standin.modelRequests();
  assert.equal(reqs.length, 2, `the first turn plus exactly one checkpoint continuation\n${why}`);
  assert.ok(reqs[0]!.text.includes(BRIEF), `SessionStart brief missing from the first request\n${why}`);
  assert.ok(reqs[0]!.text.includes(MEMORY), `the project's memory missing from the first request\n${why}`);
  assert.ok(!reqs[0]!.text.includes(CHECKPOINT), why);
  assert.ok(reqs[1]!.text.includes(CHECKPOINT), `checkpoint missing from the continuation\n${why}`);
  assert.equal(receiptFiles(p).length, 1, 'one receipt from the one SessionStart');
  const s = statusOf(p, harness);
  assert.equal(s.state, 'active', why);
  assert.equal(s.last_recall_query_class, 'startup_fallback');
  assert.equal(s.last_recall_result_count, 1);
}

describe('real hosts run the hooks tree-ring init wrote', { skip }, () => {
  before(async () => {
    await ensureHosts();
  });

  describe('Claude Code', () => {
    let standin: Standin;
    before(async () => (standin = await startAnthropicStandin({ reply: REPLIES })));
    after(async () => standin.close());
    it('recalls at SessionStart, checkpoints once at Stop, leaves proof', async () => {
      const p = project('claude');
      assert.equal(statusOf(p, 'claude-code').state, 'configured-awaiting-proof');
      const run = await runClaude({ cwd: p, prompt: 'Say hello.', standin });
      checkConversation(run, standin, p, 'claude-code');
    });
  });

  describe('Codex', () => {
    let standin: Standin;
    before(async () => (standin = await startOpenAIStandin({ reply: REPLIES })));
    after(async () => standin.close());
    it('recalls at SessionStart, checkpoints once at Stop, leaves proof', async () => {
      const p = project('codex');
      assert.equal(statusOf(p, 'codex').state, 'configured-awaiting-proof');
      const run = await runCodex({ cwd: p, prompt: 'Say hello.', standin, timeoutMs: 60_000 });
      checkConversation(run, standin, p, 'codex');
    });
  });
});
