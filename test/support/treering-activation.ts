// Helpers for Tree Ring activation tests: temp projects, hashing a tree to prove bytes unchanged,
// Codex-shaped hook inputs (every key present, nulls where Codex allows them).

import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { treeRing, type RunResult } from './cli.js';

export function tempProject(name = 'proj'): string {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tr-act-')));
  const dir = path.join(base, name);
  fs.mkdirSync(dir);
  return dir;
}

/** path -> sha256 (or "dir"/"symlink:target") of everything under dir, to compare before/after. */
export function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const rel = path.relative(dir, p);
      if (e.isSymbolicLink()) out[rel] = `symlink:${fs.readlinkSync(p)}`;
      else if (e.isDirectory()) {
        out[rel] = 'dir';
        walk(p);
      } else out[rel] = createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

export const tr = (cwd: string, args: readonly string[], input?: string, env?: NodeJS.ProcessEnv): RunResult =>
  treeRing(args, { cwd, ...(input !== undefined ? { input } : {}), env: { ...process.env, TREE_RING_AGENT_ZERO_PLUGIN_MANIFEST: '', ...env } });

export function hookInput(event: string, cwd: string, extra: Record<string, unknown> = {}): string {
  const common = { session_id: 'sess-0001', transcript_path: null, cwd, hook_event_name: event, model: 'gpt-test', permission_mode: 'default' };
  switch (event) {
    case 'SessionStart':
      return JSON.stringify({ ...common, source: 'startup', ...extra });
    case 'SubagentStart':
      return JSON.stringify({ ...common, turn_id: 'turn-1', agent_id: 'agent-7', agent_type: 'reviewer', ...extra });
    case 'Stop':
      return JSON.stringify({ ...common, turn_id: 'turn-1', stop_hook_active: false, last_assistant_message: null, ...extra });
    case 'SubagentStop':
      return JSON.stringify({ ...common, turn_id: 'turn-1', stop_hook_active: false, last_assistant_message: null, agent_id: 'agent-7', agent_type: 'reviewer', agent_transcript_path: null, ...extra });
    default:
      return JSON.stringify({ ...common, ...extra });
  }
}

export function hook(cwd: string, harness: string, input: string, env?: NodeJS.ProcessEnv): RunResult {
  return tr(cwd, ['--root', '.tree-ring', 'integrations', 'hook', '--harness', harness, '--input-json-stdin'], input, env);
}

export function statusOf(cwd: string, harness: string, env?: NodeJS.ProcessEnv, extra: string[] = []): Record<string, unknown> {
  const r = tr(cwd, ['integrations', 'status', '--json', '--verbose', ...extra], undefined, env);
  if (r.code !== 0) throw new Error(`status failed: ${r.stderr}`);
  const doc = JSON.parse(r.stdout) as { integrations: Record<string, unknown>[] };
  const h = doc.integrations.find((x) => x.harness_id === harness);
  if (!h) throw new Error(`no ${harness} in status`);
  return h;
}

/** Receipt files, relative to .tree-ring/activation/receipts (<harness>/<worker>/<id>.json). */
export function receiptFiles(project: string): string[] {
  const d = path.join(project, '.tree-ring', 'activation', 'receipts');
  if (!fs.existsSync(d)) return [];
  return (fs.readdirSync(d, { recursive: true }) as string[]).filter((n) => n.endsWith('.json')).sort();
}
