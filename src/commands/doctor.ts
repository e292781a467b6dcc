// `agentscm doctor`: a health view of this machine and project. Each check is ok, warn or fail; the
// command exits 0 when none fails and 21 (CHECK_FAILED) otherwise. Checks: the Node version (a warning
// once its release line is past its end of life), a container
// engine answering /_ping (cheap: one bounded request, no dockerode), the data dir's permissions,
// authority and snapshot packs (a warning past 256: snapshot repack), the Hub's reachability and the
// token (one capabilities call, when an endpoint and a token file are given or configured), the
// agentscm Stop handlers in the project's Claude Code and Codex hook files (and whether the programs
// they start still exist), and Codex's trust of the project. Whether Codex trusts the hook itself cannot
// be read reliably (it keeps a content hash of each hook it was told to trust), so that part is
// reported as unknown.

import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { engineAddressFor, engineCandidates, NO_ENGINE_HINT } from '../collectors/engine-endpoint.js';
import { AUTHORITY_FILE } from '../core/authority/files.js';
import { packNames } from '../core/native/pack.js';
import { EXIT_CODES, isAgentscmError } from '../core/errors.js';
import { escapeControls } from '../core/collector/output-tail.js';
import { configFile } from '../core/hooks/install.js';
import type { StopHost } from '../core/hooks/stop-guard.js';
import { HubClient, readTokenFile } from '../core/hub-client/client.js';
import type { CommandContext, CommandResult, Invocation } from '../cli/types.js';
import { caFileOpt, idOpt, optionalStringOpt, repositoryOpt } from './options.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';
export interface Check {
  readonly name: string;
  readonly status: CheckStatus;
  readonly message: string;
  readonly detail?: Record<string, unknown>;
}

const MIN_NODE: readonly [number, number] = [20, 19];
const PING_TIMEOUT_MS = 3_000;

/**
 * The end of life of each Node release line this program runs on, from Node's release schedule
 * (github.com/nodejs/Release): past it a line gets no security fixes. A line not listed is newer.
 */
export const NODE_END_OF_LIFE: Readonly<Record<number, string>> = {
  20: '2026-04-30',
  21: '2024-06-01',
  22: '2027-04-30',
  23: '2025-06-01',
  24: '2028-04-30',
  25: '2026-06-01',
};

export function nodeCheck(version = process.versions.node, today = new Date().toISOString().slice(0, 10)): Check {
  const [maj = 0, min = 0] = version.split('.').map(Number);
  const detail = { version };
  if (maj < MIN_NODE[0] || (maj === MIN_NODE[0] && min < MIN_NODE[1])) {
    return { name: 'node', status: 'fail', message: `Node ${version} is older than the ${MIN_NODE.join('.')} this program needs`, detail };
  }
  const eol = NODE_END_OF_LIFE[maj];
  if (eol !== undefined && eol < today) {
    return { name: 'node', status: 'warn', message: `Node ${version}: Node ${maj} reached its end of life on ${eol} and gets no security fixes; move to a supported release line`, detail: { ...detail, end_of_life: eol } };
  }
  return { name: 'node', status: 'ok', message: `Node ${version}`, detail };
}

/** One GET /_ping over the endpoint's socket or TCP address: whether it answers OK in time. */
function ping(url: string): Promise<boolean> {
  let addr;
  try {
    addr = engineAddressFor(url);
  } catch {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    const req = http.request({ ...('socketPath' in addr ? { socketPath: addr.socketPath } : { host: addr.host, port: addr.port }), path: '/_ping', method: 'GET', timeout: PING_TIMEOUT_MS }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
        if (body.length > 4096) res.destroy();
      });
      res.on('end', () => resolve(res.statusCode === 200 && body.trim() === 'OK'));
      res.on('error', () => resolve(false));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

export async function engineCheck(dockerHost: string | undefined, env: NodeJS.ProcessEnv): Promise<Check> {
  const candidates = engineCandidates(dockerHost, env);
  if (candidates.length === 0) return { name: 'engine', status: 'warn', message: `${NO_ENGINE_HINT} (needed only to collect)` };
  for (const c of candidates) {
    if (await ping(c.url)) return { name: 'engine', status: 'ok', message: `${c.url} answers`, detail: { endpoint: c.url, source: c.source } };
  }
  const named = candidates[0]!.source !== 'default';
  return {
    name: 'engine',
    status: named ? 'fail' : 'warn',
    message: named ? `${candidates[0]!.url} (${candidates[0]!.source === 'flag' ? '--docker-host' : 'DOCKER_HOST'}) does not answer` : `no engine socket answers (${candidates.map((c) => c.url).join(', ')})`,
    detail: { endpoints: candidates.map((c) => c.url) },
  };
}

export function dataDirCheck(dir: string): Check[] {
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (!st) return [{ name: 'data-dir', status: 'fail', message: `${dir} does not exist (agentscm authority init --data-dir ${dir})` }];
  if (st.isSymbolicLink() || !st.isDirectory()) return [{ name: 'data-dir', status: 'fail', message: `${dir} is not a directory (a symlink is refused)` }];
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const mode = st.mode & 0o777;
  const detail = { data_dir: dir, mode: mode.toString(8).padStart(4, '0') };
  if (uid !== undefined && st.uid !== uid) return [{ name: 'data-dir', status: 'fail', message: `${dir} belongs to uid ${st.uid}, not to this user`, detail }];
  if ((mode & 0o077) !== 0) return [{ name: 'data-dir', status: 'fail', message: `${dir} is mode ${detail.mode}: others may read or write it (chmod 700 ${dir})`, detail }];
  const out: Check[] = [{ name: 'data-dir', status: 'ok', message: `${dir} is owner-private (${detail.mode})`, detail }];
  const auth = fs.lstatSync(path.join(dir, AUTHORITY_FILE), { throwIfNoEntry: false });
  out.push(
    auth?.isFile()
      ? { name: 'authority', status: 'ok', message: `${AUTHORITY_FILE} present` }
      : { name: 'authority', status: 'warn', message: `no authority in ${dir} (agentscm authority init --data-dir ${dir})` },
  );
  out.push(packsCheck(dir));
  return out;
}

/** The data dir's snapshot packs: ok up to PACKS_WARN, a warning naming snapshot repack past it. */
function packsCheck(dir: string): Check {
  const packsDir = path.join(dir, 'snapshots', 'packs');
  let packs: number;
  try {
    packs = packNames(packsDir).length;
  } catch {
    return { name: 'packs', status: 'fail', message: `${packsDir} cannot be read` };
  }
  if (packs <= PACKS_WARN) return { name: 'packs', status: 'ok', message: `${packs} snapshot pack${packs === 1 ? '' : 's'}`, detail: { packs } };
  return { name: 'packs', status: 'warn', message: `${packs} snapshot packs: every reader loads each one's index (agentscm snapshot repack --data-dir ${dir})`, detail: { packs } };
}

/** More snapshot packs than this (one per checkpoint) is worth a repack: each reader loads every index. */
const PACKS_WARN = 256;

async function hubCheck(inv: Invocation, endpoint: string): Promise<Check> {
  const tokenFile = optionalStringOpt(inv, 'token-file');
  if (tokenFile === undefined) return { name: 'hub', status: 'warn', message: `${endpoint}: pass --token-file to check reachability and the token` };
  if (optionalStringOpt(inv, 'repository') === undefined || optionalStringOpt(inv, 'profile') === undefined) {
    return { name: 'hub', status: 'warn', message: `${endpoint}: pass --repository and --profile to check the Hub (its routes name both)` };
  }
  let client: HubClient | undefined;
  try {
    const repository = repositoryOpt(inv);
    const profile = idOpt(inv, 'profile');
    client = new HubClient({ endpoint, ...caFileOpt(inv), repository, profile, token: readTokenFile(tokenFile), maxAnswerBytes: 65_536 });
    const a = (await client.call({ operation: 'capabilities' })) as { capability?: unknown };
    return { name: 'hub', status: 'ok', message: `${endpoint} answers and accepts the token`, detail: { endpoint, capability: typeof a?.capability === 'string' ? a.capability : null } };
  } catch (e) {
    if (!isAgentscmError(e)) throw e;
    const hint = typeof e.detail?.hint === 'string' ? ` (${e.detail.hint})` : '';
    const what = e.kind === 'AUTH_REJECTED' ? 'the Hub rejected the token' : e.kind === 'HUB_UNREACHABLE' ? 'the Hub cannot be reached' : 'the Hub call failed';
    return { name: 'hub', status: 'fail', message: `${what}: ${e.message}${hint}`, detail: { endpoint, kind: e.kind, code: e.code } };
  } finally {
    client?.close();
  }
}

/** The words of a POSIX sh command line that uses only plain words and single quotes. */
function shWords(s: string): string[] {
  const out: string[] = [];
  let cur: string | undefined;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) break;
      cur = (cur ?? '') + s.slice(i + 1, end);
      i = end;
    } else if (c === ' ') {
      if (cur !== undefined) out.push(cur);
      cur = undefined;
    } else if (c === '\\' && i + 1 < s.length) {
      cur = (cur ?? '') + s[++i];
    } else cur = (cur ?? '') + c;
  }
  if (cur !== undefined) out.push(cur);
  return out;
}

interface Handler {
  readonly node: string;
  readonly entry: string;
  readonly workspace: string | undefined;
}

/** Our Stop handlers in a host's hook file: the node and program each starts, and its workspace. */
function ourHandlers(text: string, host: StopHost): Handler[] | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  const verb = host === 'claude-code' ? 'task-stop' : 'task-codex-stop';
  const groups = (doc as { hooks?: { Stop?: unknown } })?.hooks?.Stop;
  const out: Handler[] = [];
  for (const g of Array.isArray(groups) ? groups : []) {
    for (const h of Array.isArray((g as { hooks?: unknown })?.hooks) ? ((g as { hooks: unknown[] }).hooks) : []) {
      const cmd = (h as { command?: unknown })?.command;
      if (typeof cmd !== 'string' || !cmd.includes(` skill-workflow ${verb} `)) continue;
      const words = shWords(cmd);
      const at = words.indexOf('agentscm-stop-hook');
      const start = at >= 0 ? at + 1 : words[0] === 'exec' ? 1 : -1;
      if (start < 0) continue;
      const w = words.indexOf('--workspace');
      out.push({ node: words[start] ?? '', entry: words[start + 1] ?? '', workspace: w >= 0 ? words[w + 1] : undefined });
    }
  }
  return out;
}

export function hookChecks(project: string, env: NodeJS.ProcessEnv): Check[] {
  const out: Check[] = [];
  let codexInstalled = false;
  for (const host of ['claude-code', 'codex'] as const) {
    const file = configFile(host, project);
    const name = `hook:${host}`;
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    const handlers = ourHandlers(text, host);
    if (handlers === undefined) {
      out.push({ name, status: 'fail', message: `${file} is not one JSON document: the host ignores it`, detail: { file } });
      continue;
    }
    if (handlers.length === 0) {
      out.push({ name, status: 'warn', message: `${file} has no agentscm Stop handler (agentscm install-stop --host ${host})`, detail: { file } });
      continue;
    }
    if (host === 'codex') codexInstalled = true;
    const missing = handlers.flatMap((h) => [h.node, h.entry].filter((p) => !fs.existsSync(p)));
    const goneWs = handlers.flatMap((h) => (h.workspace !== undefined && !fs.existsSync(h.workspace) ? [h.workspace] : []));
    const detail = { file, handlers: handlers.length, programs: handlers.flatMap((h) => [h.node, h.entry]) };
    if (missing.length > 0) {
      out.push({ name, status: 'fail', message: `the Stop handler in ${file} starts ${missing.join(', ')}, which no longer exists: the hook blocks every stop (agentscm install-stop again)`, detail });
    } else if (goneWs.length > 0) {
      out.push({ name, status: 'fail', message: `the Stop handler in ${file} names the workspace ${goneWs.join(', ')}, which no longer exists`, detail });
    } else {
      out.push({ name, status: handlers.length > 1 ? 'warn' : 'ok', message: handlers.length > 1 ? `${file} has ${handlers.length} agentscm Stop handlers` : `agentscm Stop handler in ${file}, its program present`, detail });
    }
  }
  if (out.length === 0) out.push({ name: 'hooks', status: 'warn', message: `no Claude Code or Codex hook file in ${project} (agentscm install-stop)` });
  if (codexInstalled) out.push(codexTrustCheck(project, env));
  return out;
}

/** The trust_level of the project's `[projects."<path>"]` table in Codex's config.toml, if any. */
export function codexProjectTrust(configText: string, project: string): string | undefined {
  const candidates = new Set([project]);
  try {
    candidates.add(fs.realpathSync(project));
  } catch {
    /* the project as given */
  }
  const lines = configText.split(/\r?\n/);
  let inTable = false;
  for (const raw of lines) {
    const line = raw.trim();
    const table = /^\[\s*projects\s*\.\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)')\s*\]$/.exec(line);
    if (table) {
      const key = table[1] !== undefined ? (JSON.parse(`"${table[1]}"`) as string) : table[2]!;
      inTable = candidates.has(key.replace(/\/+$/, '') || '/');
      continue;
    }
    if (line.startsWith('[')) inTable = false;
    const kv = inTable ? /^trust_level\s*=\s*["']([a-z_]+)["']/.exec(line) : null;
    if (kv) return kv[1];
  }
  return undefined;
}

function codexTrustCheck(project: string, env: NodeJS.ProcessEnv): Check {
  const home = env.CODEX_HOME !== undefined && env.CODEX_HOME !== '' ? env.CODEX_HOME : path.join(env.HOME ?? os.homedir(), '.codex');
  const file = path.join(home, 'config.toml');
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    /* no config: the project is not trusted */
  }
  const level = codexProjectTrust(text, project);
  const hookTrust = 'unknown (Codex runs a new or changed hook only after you trust it in /hooks; agentscm cannot read that record)';
  const detail = { config: file, project_trust: level ?? null, hook_trust: 'unknown' };
  if (level === 'trusted') return { name: 'codex-trust', status: 'ok', message: `Codex trusts the project; hook trust: ${hookTrust}`, detail };
  return {
    name: 'codex-trust',
    status: 'warn',
    message: `Codex does not trust ${project} (${level === undefined ? 'no entry' : `trust_level ${level}`} in ${file}): it skips the project's hooks until you trust the project; hook trust: ${hookTrust}`,
    detail,
  };
}

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const checks: Check[] = [nodeCheck()];
  checks.push(await engineCheck(optionalStringOpt(inv, 'docker-host'), ctx.env));
  const dataDir = optionalStringOpt(inv, 'data-dir');
  if (dataDir !== undefined) checks.push(...dataDirCheck(path.resolve(ctx.cwd, dataDir)));
  const endpoint = optionalStringOpt(inv, 'endpoint');
  if (endpoint !== undefined) checks.push(await hubCheck(inv, endpoint));
  checks.push(...hookChecks(path.resolve(ctx.cwd, optionalStringOpt(inv, 'project') ?? '.'), ctx.env));
  const failed = checks.filter((c) => c.status === 'fail').length;
  const warned = checks.filter((c) => c.status === 'warn').length;
  const skipped = [...(dataDir === undefined ? ['data-dir (no --data-dir)'] : []), ...(endpoint === undefined ? ['hub (no --endpoint)'] : [])];
  const w = Math.max(...checks.map((c) => c.name.length));
  const text =
    checks.map((c) => `${c.status.padEnd(4)}  ${c.name.padEnd(w)}  ${escapeControls(c.message)}`).join('\n') +
    (skipped.length > 0 ? `\nnot checked: ${skipped.join(', ')}` : '') +
    `\n${failed === 0 ? 'no check failed' : `${failed} check${failed === 1 ? '' : 's'} failed`}${warned > 0 ? `, ${warned} warning${warned === 1 ? '' : 's'}` : ''}\n`;
  return { data: { ok: failed === 0, checks, not_checked: skipped }, text, exitCode: failed === 0 ? 0 : EXIT_CODES.CHECK_FAILED };
}
