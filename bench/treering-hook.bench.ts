// Whole-process SessionStart lifecycle hook, as Claude Code and Codex run it after `tree-ring init`:
// the project-local launcher `.tree-ring/bin/tree-ring --root .tree-ring integrations hook --harness
// claude-code --input-json-stdin` with a SessionStart event on stdin, in a project whose store holds
// 10,000 memories, against bare `node -e 0`, alternating runs. Each run recalls, renders the brief,
// writes and verifies a receipt (fsync included) and prunes. Target: median ratio <= 1.6.

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, type BenchResult } from './stats.js';
import { populateStore } from './treering-populate.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TARGET = 1.6;
const MEMORIES = 10_000;

function timeRun(cmd: string, args: string[], cwd: string, input: string): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd, input, stdio: ['pipe', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${String(r.stderr)}`);
  return ms;
}

export function run(options: { runs?: number; warmup?: number } = {}): BenchResult {
  const runs = options.runs ?? 30;
  const warmup = options.warmup ?? 5;
  const project = path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tr-hook-bench-'))), 'project');
  fs.mkdirSync(project);
  const init = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'tree-ring.js'), 'init'], { cwd: project, encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`tree-ring init failed: ${init.stderr}`);
  const stored = populateStore(path.join(project, '.tree-ring'), path.basename(project), MEMORIES);
  const input = JSON.stringify({ session_id: 'bench-session', transcript_path: null, cwd: project, hook_event_name: 'SessionStart', source: 'startup', model: 'm', permission_mode: 'default' });
  const launcher = path.join(project, '.tree-ring', 'bin', 'tree-ring');
  const hook = ['--root', '.tree-ring', 'integrations', 'hook', '--harness', 'claude-code', '--input-json-stdin'];
  const probe = spawnSync(launcher, hook, { cwd: project, input, encoding: 'utf8' });
  const context = (JSON.parse(probe.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext;
  const entries = context.split('\n').filter((l) => l.startsWith('- [')).length;
  for (let i = 0; i < warmup; i++) {
    timeRun(launcher, hook, project, input);
    timeRun(process.execPath, ['-e', '0'], project, '');
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) {
      a.push(timeRun(launcher, hook, project, input));
      b.push(timeRun(process.execPath, ['-e', '0'], project, ''));
    } else {
      b.push(timeRun(process.execPath, ['-e', '0'], project, ''));
      a.push(timeRun(launcher, hook, project, input));
    }
  }
  fs.rmSync(path.dirname(project), { recursive: true, force: true });
  const ratio = median(a) / median(b);
  return {
    name: 'treering-hook',
    lines: [
      `store: ${stored} memories; the brief held ${entries} of them`,
      `SessionStart hook  median ${median(a).toFixed(1)} ms  (min ${Math.min(...a).toFixed(1)}, max ${Math.max(...a).toFixed(1)}, n=${runs})`,
      `node -e 0          median ${median(b).toFixed(1)} ms  (min ${Math.min(...b).toFixed(1)}, max ${Math.max(...b).toFixed(1)}, n=${runs})`,
      `ratio ${ratio.toFixed(3)} (target <= ${TARGET}): ${ratio <= TARGET ? 'met' : 'MISSED'}`,
    ],
    ok: ratio <= TARGET,
  };
}
