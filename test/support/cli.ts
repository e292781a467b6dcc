// Runs the built CLI as a user would: a real child process, argv, optional stdin, exit code and output.

import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const AGENTSCM_BIN = path.join(REPO_ROOT, 'bin', 'agentscm.js');
export const TREE_RING_BIN = path.join(REPO_ROOT, 'bin', 'tree-ring.js');

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  input?: string | Buffer;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  timeoutMs?: number;
  /** Run as this user (the tests run as root, which may switch to any). */
  user?: User;
}

/** A user and group id to run a child process as. */
export interface User {
  readonly uid: number;
  readonly gid: number;
}

function run(bin: string, args: readonly string[], opts: RunOptions = {}): RunResult {
  const o: SpawnSyncOptions = {
    input: opts.input ?? '',
    env: opts.env ?? process.env,
    cwd: opts.cwd ?? process.cwd(),
    timeout: opts.timeoutMs ?? 60_000,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    ...(opts.user ?? {}),
  };
  const r = spawnSync(process.execPath, [bin, ...args], o);
  if (r.error) throw r.error;
  return { code: r.status ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

export const agentscm = (args: readonly string[], opts?: RunOptions): RunResult => run(AGENTSCM_BIN, args, opts);
export const treeRing = (args: readonly string[], opts?: RunOptions): RunResult => run(TREE_RING_BIN, args, opts);

/** Parses the one JSON document a --json command printed. */
export function json<T = Record<string, unknown>>(r: RunResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`stdout is not one JSON document (exit ${r.code}):\n${r.stdout}\nstderr:\n${r.stderr}`);
  }
}
