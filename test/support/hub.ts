// A real Hub for tests: `agentscm hub serve` as a child process on 127.0.0.1:0 over a temp data dir,
// plus the admin sequence that sets up the example profile.

import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { agentscm, AGENTSCM_BIN, json, REPO_ROOT, type User } from './cli.js';

export const REPO = 'acme/demo';
export const PROFILE = 'default';
export const EXAMPLE_REQUIREMENT = path.join(REPO_ROOT, 'examples', 'requirement.json');
export const EXAMPLE_WORKSPACE = path.join(REPO_ROOT, 'examples', 'workspace');

export interface RunningHub {
  url: string;
  child: ChildProcess;
  /** Everything the Hub wrote on stderr so far (its access log and diagnostics). */
  stderr(): string;
  stop(): Promise<void>;
}

/** The fixed test CA and the server certificate it issued for 127.0.0.1 and localhost (test/fixtures/tls). */
export const TLS_FIXTURES = {
  ca: path.join(REPO_ROOT, 'test', 'fixtures', 'tls', 'ca.pem'),
  cert: path.join(REPO_ROOT, 'test', 'fixtures', 'tls', 'server.pem'),
  key: path.join(REPO_ROOT, 'test', 'fixtures', 'tls', 'server.key'),
};

/** `hub serve` arguments that make it serve https with the test certificate. */
export const TLS_SERVE_ARGS = ['--tls-cert', TLS_FIXTURES.cert, '--tls-key', TLS_FIXTURES.key];

/** Starts `hub serve` (with extra arguments) and resolves with the URL it prints as its first stdout line. */
export function startHub(dataDir: string, extra: readonly string[] = [], nodeArgs: readonly string[] = [], user?: User): Promise<RunningHub> {
  return serveHub(['--data-dir', dataDir, ...extra], nodeArgs, user);
}

/** `hub serve --listen 127.0.0.1:0` with these arguments (--data-dir D or --config FILE, ...). */
export function serveHub(args: readonly string[], nodeArgs: readonly string[] = [], user?: User): Promise<RunningHub> {
  const child = spawn(process.execPath, [...nodeArgs, AGENTSCM_BIN, 'hub', 'serve', '--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...(user ?? {}) });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => reject(new Error(`hub exited early (${code}): ${err}`)));
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const nl = out.indexOf('\n');
      if (nl === -1) return;
      child.removeAllListeners('exit');
      resolve({
        url: out.slice(0, nl),
        child,
        stderr: () => err,
        stop: () =>
          new Promise<void>((res) => {
            if (child.exitCode !== null) return res();
            child.once('exit', () => res());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `agentscm-${prefix}-`));
}

export interface Setup {
  root: string;
  dataDir: string;
  tokenFile: string;
  tokenId: string;
  workspace: string;
}

/** authority init, profile add (example requirement), token issue, copy of the example workspace. */
export function adminSetup(requirement = EXAMPLE_REQUIREMENT): Setup {
  const root = tempDir('hub');
  const dataDir = path.join(root, 'data');
  const ok = (args: string[]) => {
    const r = agentscm([...args, '--json']);
    if (r.code !== 0) throw new Error(`${args.join(' ')} failed (${r.code}): ${r.stderr}`);
    return json(r);
  };
  ok(['authority', 'init', '--data-dir', dataDir]);
  ok(['authority', 'profile', 'add', '--data-dir', dataDir, '--repository', REPO, '--profile', PROFILE, '--target', 'main', '--requirement', requirement]);
  const tokenFile = path.join(root, 'token');
  const t = ok(['authority', 'token', 'issue', '--data-dir', dataDir, '--owner', 'alice', '--agent', 'claude', '--out', tokenFile]);
  const workspace = path.join(root, 'ws');
  fs.cpSync(EXAMPLE_WORKSPACE, workspace, { recursive: true });
  return { root, dataDir, tokenFile, tokenId: t.token_id as string, workspace };
}

/** The workspace rows and Change versions of a setup: what a refused checkpoint must leave as it was. */
export function checkpointState(s: Setup): unknown {
  const rows = (file: string, sql: string) => {
    if (!fs.existsSync(path.join(s.dataDir, file))) return [];
    const db = new Database(path.join(s.dataDir, file), { readonly: true });
    try {
      return db.prepare(sql).all();
    } finally {
      db.close();
    }
  };
  return { workspaces: rows('workspaces.sqlite', 'SELECT * FROM workspaces ORDER BY workspace_key'), versions: rows('authority.sqlite', 'SELECT * FROM change_versions ORDER BY rowid') };
}

export function checkpointArgs(s: Setup, change = 'c1'): string[] {
  return ['checkpoint', change, '--data-dir', s.dataDir, '--repository', REPO, '--profile', PROFILE, '--workspace', s.workspace, '--json'];
}

export function callArgs(s: Setup, url: string, op: string, ...rest: string[]): string[] {
  return ['agent-task', op, ...rest, '--data-dir', s.dataDir, '--endpoint', url, '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile, '--json'];
}
