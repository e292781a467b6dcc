// Installs the real Claude Code and Codex CLIs, pinned, into a cache outside the package's
// dependencies (they are ≈ 400 MB each and only end-to-end tests need them). Parallel test files call
// ensureHosts() at once, so one process installs under a lock while the others wait; an install is
// staged in a scratch directory and renamed into place only after both binaries ran, so a crashed or
// half-finished install is never mistaken for a good one.
//
// Run as a script (`node dist/test/support/hosts/install.js`) it installs and prints the paths; CI
// does that before `npm test` so a broken install fails loudly in its own step.

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Exact versions the harness was verified with (see README.md next to this file). */
export const CLAUDE_CODE_VERSION = '2.1.332';
export const CODEX_VERSION = '0.171.0';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const LOCK_STALE_MS = 20 * 60_000;
const INSTALL_TIMEOUT_MS = 15 * 60_000;

export interface HostPaths {
  /** The native `claude` executable (the platform package's binary; no Node wrapper). */
  claude: string;
  /** The native `codex` executable from the platform package's vendor tree. */
  codex: string;
  /** Root of the installed `@openai/codex` package, passed as CODEX_MANAGED_PACKAGE_ROOT like its wrapper does. */
  codexPackageRoot: string;
  /** The directory holding this pinned install. */
  dir: string;
}

export function hostsCacheDir(): string {
  const fromEnv = process.env.AGENTSCM_HOSTS_CACHE;
  return path.resolve(fromEnv !== undefined && fromEnv !== '' ? fromEnv : path.join(REPO_ROOT, '.cache', 'hosts'));
}

let memo: Promise<HostPaths> | undefined;

/** Installs both hosts once (per cache directory and pinned versions) and returns their executables. */
export function ensureHosts(): Promise<HostPaths> {
  memo ??= install().catch((err: unknown) => {
    memo = undefined;
    throw err;
  });
  return memo;
}

const installName = `claude-code-${CLAUDE_CODE_VERSION}+codex-${CODEX_VERSION}`;

async function install(): Promise<HostPaths> {
  const cache = hostsCacheDir();
  fs.mkdirSync(cache, { recursive: true });
  const dir = path.join(cache, installName);
  const ready = readyPaths(dir);
  if (ready) return ready;

  const lock = path.join(cache, `${installName}.lock`);
  await acquireLock(lock);
  try {
    const again = readyPaths(dir);
    if (again) return again;
    // Leftovers of an installer that died holding the lock (only the lock holder stages).
    for (const name of fs.readdirSync(cache)) {
      if (name.startsWith(`.staging-${installName}-`)) fs.rmSync(path.join(cache, name), { recursive: true, force: true });
    }
    const staging = fs.mkdtempSync(path.join(cache, `.staging-${installName}-`));
    try {
      fs.writeFileSync(path.join(staging, 'package.json'), '{"private":true}\n');
      await npmInstall(staging);
      const paths = locate(staging);
      await checkVersion(paths.claude, ['--version'], CLAUDE_CODE_VERSION);
      await checkVersion(paths.codex, ['--version'], CODEX_VERSION);
      fs.writeFileSync(
        path.join(staging, 'installed.json'),
        JSON.stringify({ claude: CLAUDE_CODE_VERSION, codex: CODEX_VERSION }) + '\n',
      );
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(staging, dir);
    } catch (err) {
      fs.rmSync(staging, { recursive: true, force: true });
      throw err;
    }
    const done = readyPaths(dir);
    if (!done) throw new Error(`hosts install: ${dir} is incomplete after install`);
    return done;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function readyPaths(dir: string): HostPaths | undefined {
  if (!fs.existsSync(path.join(dir, 'installed.json'))) return undefined;
  try {
    return locate(dir);
  } catch {
    return undefined;
  }
}

/**
 * Finds the native binaries. Install scripts are not run (npm 11 blocks them unless approved), so
 * Claude's `bin/claude.exe` stays a placeholder: the real binary is in the platform package that npm
 * picked among the optionalDependencies (glibc or musl). Codex's `bin/codex.js` is a Node wrapper that
 * only locates and execs the vendored binary; calling the binary directly lets a timeout kill it.
 */
function locate(dir: string): HostPaths {
  const nm = path.join(dir, 'node_modules');
  const plat = `${process.platform}-${process.arch}`;
  const claudeCandidates = [`claude-code-${plat}`, `claude-code-${plat}-musl`].map((p) =>
    path.join(nm, '@anthropic-ai', p, process.platform === 'win32' ? 'claude.exe' : 'claude'),
  );
  const claude = claudeCandidates.find((p) => isExecutable(p));
  if (!claude) {
    throw new Error(
      `hosts install: no native Claude Code binary for ${plat} (looked for ${claudeCandidates.join(', ')}); ` +
        'the platform optional dependency did not install',
    );
  }
  const codexPackageRoot = path.join(nm, '@openai', 'codex');
  const vendor = path.join(nm, '@openai', `codex-${plat}`, 'vendor');
  let codex: string | undefined;
  if (fs.existsSync(vendor)) {
    for (const triple of fs.readdirSync(vendor)) {
      const p = path.join(vendor, triple, 'bin', process.platform === 'win32' ? 'codex.exe' : 'codex');
      if (isExecutable(p)) codex = p;
    }
  }
  if (!codex) {
    throw new Error(
      `hosts install: no native Codex binary under ${vendor}; the platform optional dependency ` +
        `@openai/codex-${plat} did not install`,
    );
  }
  return { claude, codex, codexPackageRoot, dir };
}

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** npm as the test run invoked it (npm_execpath under `npm test`), else the one on PATH. */
function npmCommand(): { cmd: string; pre: string[] } {
  const execPath = process.env.npm_execpath;
  if (execPath !== undefined && /npm-cli\.c?js$/.test(execPath) && fs.existsSync(execPath)) {
    return { cmd: process.execPath, pre: [execPath] };
  }
  return { cmd: 'npm', pre: [] };
}

async function npmInstall(staging: string): Promise<void> {
  const { cmd, pre } = npmCommand();
  const args = [
    ...pre,
    'install',
    '--prefix',
    staging,
    '--no-audit',
    '--no-fund',
    '--no-save',
    '--no-package-lock',
    '--ignore-scripts',
    // Claude Code declares engines node>=22 for its wrapper; the native binary does not use Node.
    '--engine-strict=false',
    '--include=optional',
    '--loglevel=error',
    `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`,
    `@openai/codex@${CODEX_VERSION}`,
  ];
  const env = { ...process.env };
  // Under `npm test` these point npm at the project; the install must stay in the staging prefix.
  // Other npm_config_* (registry, cache, proxy) are kept so CI's npm settings still apply.
  for (const k of Object.keys(env)) {
    if (/^npm_config_(prefix|local_prefix|global|global_prefix|location)$/i.test(k) || k.startsWith('npm_package_')) {
      delete env[k];
    }
  }
  const r = await exec(cmd, args, { cwd: staging, env, timeoutMs: INSTALL_TIMEOUT_MS });
  if (r.code !== 0) {
    throw new Error(
      `hosts install: npm install in ${staging} failed (exit ${r.code}${r.timedOut ? ', timed out' : ''}):\n` +
        tail(r.stderr + r.stdout),
    );
  }
}

async function checkVersion(bin: string, args: string[], want: string): Promise<void> {
  const r = await exec(bin, args, { cwd: path.dirname(bin), env: { ...process.env }, timeoutMs: 60_000 });
  if (r.code !== 0 || !r.stdout.includes(want)) {
    throw new Error(
      `hosts install: ${bin} ${args.join(' ')} exited ${r.code}, expected version ${want}:\n` +
        tail(r.stdout + r.stderr),
    );
  }
}

/** A mkdir lock: atomic on every filesystem; the owner's pid lets a waiter clear a dead owner's lock. */
async function acquireLock(lock: string): Promise<void> {
  const deadline = Date.now() + INSTALL_TIMEOUT_MS + 60_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'owner'), `${process.pid}\n`);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (lockIsStale(lock)) {
      fs.rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`hosts install: gave up waiting for lock ${lock}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

function lockIsStale(lock: string): boolean {
  let st: fs.Stats;
  try {
    st = fs.statSync(lock);
  } catch {
    return false;
  }
  if (Date.now() - st.mtimeMs > LOCK_STALE_MS) return true;
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(lock, 'owner'), 'utf8').trim());
  } catch {
    // The owner has made the directory but not yet written its pid: give it time.
    return Date.now() - st.mtimeMs > 30_000;
  }
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

function exec(
  cmd: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`hosts install: cannot run ${cmd}: ${err.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr, timedOut });
    });
  });
}

export function tail(text: string, lines = 40): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const t0 = Date.now();
  ensureHosts().then(
    (p) => {
      process.stdout.write(
        `hosts: claude ${CLAUDE_CODE_VERSION} at ${p.claude}\nhosts: codex ${CODEX_VERSION} at ${p.codex}\n` +
          `hosts: ready in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`,
      );
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
