// Running the built Stop hooks the way a host does: argv, JSON on stdin, exit code and stdout checked.
// Asynchronous (spawn, not spawnSync), so that servers in the test process keep answering meanwhile.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AGENTSCM_BIN, REPO_ROOT, type User } from './cli.js';
import { PROFILE, REPO, type Setup } from './hub.js';

export interface HookRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The one-file bundle install-stop registers (same arguments as the launcher). */
export const STOP_HOOK_BUNDLE = path.join(REPO_ROOT, 'dist', 'bundles', 'agentscm-stop-hook.cjs');

export function runAsync(args: readonly string[], input: string, env: NodeJS.ProcessEnv, entry = AGENTSCM_BIN, user?: User): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'], ...(user ?? {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

export type Host = 'claude-code' | 'codex';

export function hookArgs(s: Setup, url: string, host: Host, o: { change?: string; dataDir?: string; workspace?: string; tokenFile?: string } = {}): string[] {
  return [
    '--data-dir', o.dataDir ?? s.dataDir,
    'skill-workflow', host === 'codex' ? 'task-codex-stop' : 'task-stop', o.change ?? 'c1',
    '--endpoint', url, '--repository', REPO, '--profile', PROFILE,
    '--token-file', o.tokenFile ?? s.tokenFile, '--workspace', o.workspace ?? s.workspace,
  ];
}

/** A Stop payload as each host sends it: Codex sends every key of its input schema (nulls allowed). */
export function stopPayload(host: Host, sessionId: string, active: boolean, cwd: string): string {
  if (host === 'codex') {
    return JSON.stringify({
      session_id: sessionId, turn_id: 'turn-1', transcript_path: null, cwd, hook_event_name: 'Stop', model: 'gpt-standin',
      permission_mode: 'bypassPermissions', stop_hook_active: active, last_assistant_message: null,
    });
  }
  return JSON.stringify({
    session_id: sessionId, transcript_path: path.join(cwd, 'transcript.jsonl'), cwd, hook_event_name: 'Stop', prompt_id: 'p1',
    permission_mode: 'default', effort: 'medium', stop_hook_active: active, last_assistant_message: 'Done.', background_tasks: [], session_crons: [],
  });
}

/**
 * Digest of every file under the given roots (path, mode and bytes), SQLite -wal/-shm sidecars aside:
 * equal digests mean the hook changed nothing there.
 */
export function treeDigest(...roots: string[]): string {
  const h = createHash('sha256');
  const walk = (root: string, rel: string) => {
    const abs = path.join(root, rel);
    const st = fs.lstatSync(abs, { throwIfNoEntry: false });
    if (!st) return void h.update(`missing ${abs}\0`);
    if (st.isDirectory()) {
      h.update(`dir ${rel} ${st.mode}\0`);
      for (const n of fs.readdirSync(abs).sort()) walk(root, rel === '' ? n : `${rel}/${n}`);
    } else if (!/-(wal|shm)$/.test(rel)) {
      h.update(`file ${rel} ${st.mode}\0`);
      // A FIFO or socket is never opened (a read would wait for a writer): its kind and mode stand for it.
      h.update(st.isSymbolicLink() ? fs.readlinkSync(abs) : st.isFile() ? fs.readFileSync(abs) : `special ${st.mode & 0o170000}`);
      h.update('\0');
    }
  };
  for (const r of roots) walk(r, '');
  return h.digest('hex');
}

export interface Block {
  decision: 'block';
  reason: string;
}

/** The reason's JSON document (after the fixed lead sentence). */
export function reasonDoc(stdout: string): Record<string, any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const b = JSON.parse(stdout) as Block;
  const i = b.reason.indexOf('{');
  return JSON.parse(b.reason.slice(i)) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}
