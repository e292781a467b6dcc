// Whole-process SessionStart lifecycle hook, as Claude Code and Codex run it after `tree-ring init`:
// the project-local launcher `.tree-ring/bin/tree-ring --root .tree-ring integrations hook --harness
// claude-code --input-json-stdin` with a SessionStart event on stdin, in a project whose store holds
// 10,000 memories, against bare `node -e 0`, alternating runs. Each run recalls, renders the brief,
// writes and verifies a receipt (fsync included) and prunes. Target: median ratio <= 2.0.

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, type BenchResult } from './stats.js';
import { populateStore } from './treering-populate.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TARGET = 2.0;
const MEMORIES = 10_000;

// Hosts run hooks with a small environment; ours may carry settings that slow every node start (such
// as NODE_EXTRA_CA_CERTS) and would hide the hook's own cost in the ratio.
const ENV = { PATH: process.env.PATH };

function timeRun(cmd: string, args: string[], cwd: string, input: string): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd, input, env: ENV, stdio: ['pipe', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${String(r.stderr)}`);
  return ms;
}

function project(memories: number): { dir: string; stored: number } {
  const dir = path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tr-hook-bench-'))), 'project');
  fs.mkdirSync(dir);
  const init = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'tree-ring.js'), 'init'], { cwd: dir, encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`tree-ring init failed: ${init.stderr}`);
  return { dir, stored: memories > 0 ? populateStore(path.join(dir, '.tree-ring'), path.basename(dir), memories) : 0 };
}

const HOOK = ['--root', '.tree-ring', 'integrations', 'hook', '--harness', 'claude-code', '--input-json-stdin'];
const eventFor = (cwd: string) => JSON.stringify({ session_id: 'bench-session', transcript_path: null, cwd, hook_event_name: 'SessionStart', source: 'startup', model: 'm', permission_mode: 'default' });
const launcherOf = (dir: string) => path.join(dir, '.tree-ring', 'bin', 'tree-ring');

export function run(options: { runs?: number; warmup?: number } = {}): BenchResult {
  const runs = options.runs ?? 30;
  const warmup = options.warmup ?? 5;
  const full = project(MEMORIES);
  // The same hook against an empty store separates the process and activation cost from the recall.
  const empty = project(0);
  const probe = spawnSync(launcherOf(full.dir), HOOK, { cwd: full.dir, input: eventFor(full.dir), encoding: 'utf8' });
  const context = (JSON.parse(probe.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext;
  const entries = context.split('\n').filter((l) => l.startsWith('- [')).length;
  const sides: [string, () => number][] = [
    ['full', () => timeRun(launcherOf(full.dir), HOOK, full.dir, eventFor(full.dir))],
    ['empty', () => timeRun(launcherOf(empty.dir), HOOK, empty.dir, eventFor(empty.dir))],
    ['node', () => timeRun(process.execPath, ['-e', '0'], full.dir, '')],
  ];
  for (let i = 0; i < warmup; i++) for (const [, f] of sides) f();
  const t: Record<string, number[]> = { full: [], empty: [], node: [] };
  for (let i = 0; i < runs; i++) {
    // Rotate the order so that no side always follows another.
    for (let k = 0; k < sides.length; k++) {
      const [name, f] = sides[(i + k) % sides.length]!;
      t[name]!.push(f());
    }
  }
  for (const d of [full.dir, empty.dir]) fs.rmSync(path.dirname(d), { recursive: true, force: true });
  const line = (label: string, xs: number[]) => `${label.padEnd(34)} median ${median(xs).toFixed(1)} ms  (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)}, n=${runs})`;
  const ratio = median(t.full!) / median(t.node!);
  return {
    name: 'treering-hook',
    lines: [
      `store: ${full.stored} memories; the brief held ${entries} of them`,
      line('SessionStart hook, 10,000 memories', t.full!),
      line('SessionStart hook, empty store', t.empty!),
      line('node -e 0', t.node!),
      `empty-store ratio ${(median(t.empty!) / median(t.node!)).toFixed(3)}`,
      `ratio ${ratio.toFixed(3)} (target <= ${TARGET}): ${ratio <= TARGET ? 'met' : 'MISSED'}`,
    ],
    ok: ratio <= TARGET,
  };
}
