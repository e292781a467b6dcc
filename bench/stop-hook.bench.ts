// Whole-process Stop hook time: `agentscm skill-workflow task-codex-stop` as Codex runs it (payload on
// stdin) against a real local `hub serve`, alternating with bare `node -e 0` in the same run. Each hook
// run does the full check: counter, authority read, workspace state and file scan before and after,
// one qualification call over HTTP, and the block answer with its durable counter update. The Hub
// serves with a receipt key and the hook pins it (--hub-key), as install-stop sets it up: each run also
// sends a fresh nonce and verifies the Hub's Ed25519 signature of the answer.
// Target: median ratio <= 2.0.

import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, type BenchResult } from './stats.js';
import { exampleCheckpointedWorkspace } from '../scripts/example-authority.js';
import { forwardDiagnostics } from './hub-log.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TARGET = 2.0;

function timeRun(args: readonly string[], input: string, env: NodeJS.ProcessEnv, want: (stdout: string) => boolean): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, input, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0 || !want(String(r.stdout))) throw new Error(`${args.join(' ')} exited ${r.status}: ${String(r.stdout)} ${String(r.stderr)}`);
  return ms;
}

export async function run(options: { runs?: number; warmup?: number } = {}): Promise<BenchResult> {
  const runs = options.runs ?? 30;
  const warmup = options.warmup ?? 5;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-bench-stop-'));
  const { dataDir, tokenFile, ws } = exampleCheckpointedWorkspace(root, { owner: 'alice', agent: 'bench' });

  const keyDir = path.join(root, 'receipt-key');
  const key = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'agentscm.js'), 'agent-task', 'key', 'generate', '--key-dir', keyDir, '--json'], { encoding: 'utf8' });
  if (key.status !== 0) throw new Error(`key generate failed: ${key.stderr}`);
  const hubKey = String((JSON.parse(key.stdout) as { public_key: string }).public_key);
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'agentscm.js'), 'hub', 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--receipt-key-dir', keyDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  forwardDiagnostics(child);
  const url = await new Promise<string>((resolve) => child.stdout.once('data', (c: Buffer) => resolve(c.toString().split('\n')[0]!)));
  // What install-stop registers: the one-file bundle when it was built, else the launcher.
  const bundle = path.join(ROOT, 'dist', 'bundles', 'agentscm-stop-hook.cjs');
  const entry = fs.existsSync(bundle) ? bundle : path.join(ROOT, 'bin', 'agentscm.js');
  const hook = [
    entry, '--data-dir', dataDir, 'skill-workflow', 'task-codex-stop', 'c1', '--endpoint', url,
    '--repository', 'acme/demo', '--profile', 'default', '--token-file', tokenFile, '--workspace', ws, '--hub-key', hubKey,
  ];
  const env = { PATH: process.env.PATH, AGENTSCM_STATE_DIR: path.join(root, 'state') };
  let seq = 0;
  const payload = () =>
    JSON.stringify({
      session_id: `bench-${++seq}`, turn_id: 't', transcript_path: null, cwd: ws, hook_event_name: 'Stop', model: 'm',
      permission_mode: 'bypassPermissions', stop_hook_active: false, last_assistant_message: null,
    });
  // A block that is not about the signature: the pinned key verified the answer.
  const blocks = (out: string) => out.startsWith('{"decision":"block"') && !out.includes('answer not signed');
  const bare = ['-e', '0'];
  const h: number[] = [];
  const b: number[] = [];
  try {
    for (let i = 0; i < warmup; i++) {
      timeRun(hook, payload(), env, blocks);
      timeRun(bare, '', env, () => true);
    }
    for (let i = 0; i < runs; i++) {
      if (i % 2 === 0) {
        h.push(timeRun(hook, payload(), env, blocks));
        b.push(timeRun(bare, '', env, () => true));
      } else {
        b.push(timeRun(bare, '', env, () => true));
        h.push(timeRun(hook, payload(), env, blocks));
      }
    }
  } finally {
    child.kill('SIGTERM');
    fs.rmSync(root, { recursive: true, force: true });
  }
  const ratio = median(h) / median(b);
  return {
    name: 'stop-hook',
    lines: [
      `task-codex-stop (block, local Hub, pinned key)  median ${median(h).toFixed(1)} ms  (min ${Math.min(...h).toFixed(1)}, max ${Math.max(...h).toFixed(1)}, n=${runs})`,
      `node -e 0                                       median ${median(b).toFixed(1)} ms  (min ${Math.min(...b).toFixed(1)}, max ${Math.max(...b).toFixed(1)}, n=${runs})`,
      `ratio ${ratio.toFixed(3)} (target <= ${TARGET}): ${ratio <= TARGET ? 'met' : 'MISSED'}`,
    ],
    ok: ratio <= TARGET,
  };
}
