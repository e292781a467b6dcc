// Runs the real hosts headless against a stand-in (./standin.ts), the way a user's project would run
// them, so a test can watch them invoke the project's hooks. Each run gets a clean environment (no
// inherited ANTHROPIC_*/OPENAI_*/CODEX_* or credentials), a temp home, its own process group (so a
// timeout kills the host and any hook it started), and a result that carries everything a failure
// message needs.

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { ensureHosts, tail } from './install.js';
import type { Standin } from './standin.js';

export interface HostRun {
  host: 'claude' | 'codex';
  argv: string[];
  cwd: string;
  /** Exit code, or -1 when the process ended by a signal. */
  code: number;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
  /** HOME (Claude) or CODEX_HOME (Codex) the run used. */
  home: string;
}

export interface RunClaudeOptions {
  /** Project directory (holds `.claude/settings.json`). */
  cwd: string;
  prompt: string;
  standin: Standin;
  /** Temp HOME; a fresh one is made when absent. */
  home?: string;
  /** Extra environment, applied last. */
  env?: Record<string, string>;
  /** Extra argv after the defaults. */
  args?: string[];
  timeoutMs?: number;
}

export interface RunCodexOptions {
  /** Project directory (holds `.codex/hooks.json`); marked trusted in the generated config.toml. */
  cwd: string;
  prompt: string;
  standin: Standin;
  /** Temp CODEX_HOME; a fresh one is made when absent. Its config.toml is (re)written each run. */
  codexHome?: string;
  env?: Record<string, string>;
  args?: string[];
  /** Extra TOML for config.toml (top-level keys and/or tables), placed before the generated tables. */
  extraConfig?: string;
  /** Model name sent to the stand-in (Codex warns that it has no metadata for it; harmless). */
  model?: string;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const KILL_GRACE_MS = 3_000;

/** Process groups still running; killed if the test process exits first. */
const live = new Set<number>();
process.on('exit', () => {
  for (const pgid of live) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

function baseEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    // Codex runs hooks as `$SHELL -lc "<command>"`; a plain POSIX login shell keeps stdout clean.
    SHELL: '/bin/sh',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
  };
  for (const k of ['LD_LIBRARY_PATH', 'SSL_CERT_FILE', 'NODE_EXTRA_CA_CERTS']) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  // Claude Code keeps per-session scratch and sockets under the temp dir: keep them with the run.
  const tmp = path.join(home, 'tmp');
  fs.mkdirSync(tmp, { recursive: true });
  env.TMPDIR = tmp;
  return env;
}

function tempDir(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

/**
 * `claude -p <prompt> --output-format json` against the Anthropic stand-in. In print mode Claude Code
 * skips the workspace-trust dialog, so project hooks in `.claude/settings.json` run without setup.
 */
export async function runClaude(opts: RunClaudeOptions): Promise<HostRun> {
  if (opts.standin.kind !== 'anthropic') throw new Error('runClaude needs an Anthropic stand-in');
  const hosts = await ensureHosts();
  const home = opts.home ?? tempDir('agentscm-claude-home-');
  const env: Record<string, string> = {
    ...baseEnv(home),
    ANTHROPIC_BASE_URL: opts.standin.baseUrl,
    ANTHROPIC_API_KEY: opts.standin.apiKey,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    ...opts.env,
  };
  const argv = ['-p', opts.prompt, '--output-format', 'json', ...(opts.args ?? [])];
  return spawnHost('claude', hosts.claude, argv, opts.cwd, env, home, opts.timeoutMs);
}

/** The config.toml a Codex run uses: the stand-in as the model provider, the project trusted. */
export function codexConfigToml(o: { standin: Standin; projectDir: string; model?: string; extra?: string }): string {
  const q = (s: string): string => JSON.stringify(s); // a JSON string is a valid TOML basic string
  return [
    `model = ${q(o.model ?? 'gpt-standin')}`,
    `model_provider = "standin"`,
    // Before the tables below, so top-level keys stay top-level; any table it opens ends at the next.
    o.extra ?? '',
    '',
    '[model_providers.standin]',
    `name = "agentscm stand-in"`,
    `base_url = ${q(o.standin.baseUrl)}`,
    `wire_api = "responses"`,
    `env_key = "STANDIN_API_KEY"`,
    // One attempt: a failing stand-in should fail the run now, not after retries with backoff.
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    // Project hooks (.codex/hooks.json) are skipped unless the project is trusted.
    `[projects.${q(o.projectDir)}]`,
    `trust_level = "trusted"`,
    '',
  ].join('\n');
}

/**
 * `codex exec --dangerously-bypass-hook-trust --skip-git-repo-check <prompt>` against the OpenAI
 * stand-in. Both gates matter: without the flag, hooks not yet trusted in `/hooks` are skipped; without
 * the trusted project entry, project hooks are skipped. Either way silently (exit 0, no hook ran).
 */
export async function runCodex(opts: RunCodexOptions): Promise<HostRun> {
  if (opts.standin.kind !== 'openai') throw new Error('runCodex needs an OpenAI stand-in');
  const hosts = await ensureHosts();
  const codexHome = opts.codexHome ?? tempDir('agentscm-codex-home-');
  const projectDir = fs.realpathSync(opts.cwd);
  fs.writeFileSync(
    path.join(codexHome, 'config.toml'),
    codexConfigToml({
      standin: opts.standin,
      projectDir,
      ...(opts.model !== undefined ? { model: opts.model } : {}),
      ...(opts.extraConfig !== undefined ? { extra: opts.extraConfig } : {}),
    }),
  );
  const env: Record<string, string> = {
    ...baseEnv(codexHome),
    CODEX_HOME: codexHome,
    STANDIN_API_KEY: opts.standin.apiKey,
    // What the npm wrapper (bin/codex.js) sets before exec'ing the native binary.
    CODEX_MANAGED_PACKAGE_ROOT: hosts.codexPackageRoot,
    CODEX_MANAGED_BY_NPM: '1',
    ...opts.env,
  };
  const argv = [
    'exec',
    '--dangerously-bypass-hook-trust',
    '--skip-git-repo-check',
    // A mistyped key in the generated or extra config fails the run instead of being ignored.
    '--strict-config',
    '--color',
    'never',
    '-C',
    projectDir,
    ...(opts.args ?? []),
    opts.prompt,
  ];
  return spawnHost('codex', hosts.codex, argv, projectDir, env, codexHome, opts.timeoutMs);
}

function spawnHost(
  host: 'claude' | 'codex',
  bin: string,
  argv: string[],
  cwd: string,
  env: Record<string, string>,
  home: string,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<HostRun> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    // stdin closed: both hosts read a piped stdin as extra prompt input.
    const child = spawn(bin, argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const pgid = child.pid;
    if (pgid !== undefined) live.add(pgid);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const killGroup = (sig: NodeJS.Signals): void => {
      if (pgid === undefined) return;
      try {
        process.kill(-pgid, sig);
      } catch {
        // the group is gone
      }
    };
    let graceTimer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup('SIGTERM');
      graceTimer = setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS);
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      if (pgid !== undefined) live.delete(pgid);
      reject(new Error(`cannot start ${host} (${bin}): ${err.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      // Hooks the host left behind (it should not) go with it.
      killGroup('SIGKILL');
      if (pgid !== undefined) live.delete(pgid);
      resolve({
        host,
        argv,
        cwd,
        code: code ?? -1,
        signal,
        stdout,
        stderr,
        timedOut,
        durationMs: Math.round(performance.now() - t0),
        home,
      });
    });
  });
}

/** A failure message: how the host ended, its output tails, and what the stand-in received. */
export function describeRun(run: HostRun, standin?: Standin): string {
  const how = run.timedOut
    ? `timed out after ${run.durationMs} ms`
    : run.signal
      ? `ended by ${run.signal}`
      : `exited ${run.code}`;
  return [
    `${run.host} ${how} (cwd ${run.cwd}, ${run.durationMs} ms)`,
    `--- stderr (tail)\n${tail(run.stderr) || '(empty)'}`,
    `--- stdout (tail)\n${tail(run.stdout) || '(empty)'}`,
    ...(standin ? [`--- ${standin.kind} stand-in requests\n${standin.describe()}`] : []),
    ...(standin && standin.failures.length > 0 ? [`--- stand-in failures\n${standin.failures.join('\n')}`] : []),
  ].join('\n');
}

/** Parses Claude's `--output-format json` result document. */
export function claudeResult(run: HostRun): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(run.stdout);
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new Error(`claude stdout is not one JSON object\n${describeRun(run)}`);
}

export interface CommandHandler {
  type: 'command';
  command: string;
  /** Seconds. */
  timeout?: number;
  /** Other handler fields a host reads (e.g. Claude's `description`, `args`). */
  [field: string]: unknown;
}

export interface MatcherGroup {
  matcher?: string;
  hooks: CommandHandler[];
}

/** Event name (SessionStart, Stop, SubagentStop, …) → matcher groups, the shape both hosts read. */
export type HookTable = Record<string, MatcherGroup[]>;

/** Writes `<project>/.claude/settings.json` with the given hooks (replacing the file). */
export function writeClaudeHooks(projectDir: string, hooks: HookTable): string {
  const file = path.join(projectDir, '.claude', 'settings.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ hooks }, null, 2) + '\n');
  return file;
}

/** Writes `<project>/.codex/hooks.json` with the given hooks (replacing the file). */
export function writeCodexHooks(projectDir: string, hooks: HookTable): string {
  const file = path.join(projectDir, '.codex', 'hooks.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ hooks }, null, 2) + '\n');
  return file;
}

/** A fresh real-path temp directory (the hosts compare paths after resolving symlinks). */
export function makeTempDir(prefix: string): string {
  return tempDir(prefix);
}
