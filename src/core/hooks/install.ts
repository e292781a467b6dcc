// Registering a Stop hook in a host's project config, merging with what is there. Both hosts use
// event -> matcher groups -> handlers {"type":"command","command","timeout"} (seconds):
//   Claude Code  <project>/.claude/settings.json  (other settings keys are kept as they are)
//   Codex        <project>/.codex/hooks.json      (runs the command as `$SHELL -lc`, so it is `exec`
//                                                  with absolute paths: a login profile cannot change it)
// A handler is ours when its command runs our Stop hook for the same Change; re-installing replaces it
// in place, so installing twice with the same arguments changes nothing.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { outputJson, parseStrictJson, type JsonValue } from '../canonical/json.js';
import { badInput } from '../errors.js';
import { lstatOrUndefined, replaceDurably } from '../fs/safe.js';
import type { StopHost } from './stop-guard.js';

export const HOOK_TIMEOUT_SECONDS = 60;
const CONFIG_MAX_BYTES = 1024 * 1024;

export function configFile(host: StopHost, project: string): string {
  return host === 'claude-code' ? path.join(project, '.claude', 'settings.json') : path.join(project, '.codex', 'hooks.json');
}

/** POSIX single-quote shell quoting. */
export function shQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface StopCommandInput {
  readonly node: string;
  readonly bin: string;
  readonly host: StopHost;
  readonly dataDir: string;
  readonly change: string;
  readonly endpoint: string;
  /** Passed on to the hook for an https endpoint whose certificate the system does not trust. */
  readonly caFile?: string | undefined;
  readonly repository: string;
  readonly profile: string;
  readonly tokenFile: string;
  readonly workspace: string;
  /** The pinned Hub receipt public key (64 hex). */
  readonly hubKey?: string | undefined;
}

export function stopVerb(host: StopHost): 'task-stop' | 'task-codex-stop' {
  return host === 'claude-code' ? 'task-stop' : 'task-codex-stop';
}

/**
 * The fixed sentence a Stop hook prints (exit 2: both hosts block on it) when its program cannot start:
 * node or the hook entry is gone (an uninstall, a Node switch) or the working directory was removed.
 */
export const HOOK_CANNOT_RUN =
  'Do not stop yet: the agentscm Stop hook cannot run (its Node, its program or its working directory is gone); run agentscm install-stop again for this project.';

/**
 * The installed command is a POSIX sh guard in front of `exec node entry ARGS`: it moves to the working
 * directory by name (refused when it is gone) and checks that node and the entry exist before it execs
 * them, and otherwise blocks with HOOK_CANNOT_RUN (exit 2, on stderr) rather than exit 1 or 127, which
 * the hosts take as "let it stop". Node and the entry are its first two arguments, so no path is
 * quoted twice. Once node runs, its exit codes are the hook's (1 still never blocks).
 */
export const STOP_GUARD_SCRIPT = `[ -n "$PWD" ] && cd "$PWD" 2>/dev/null && [ -x "$1" ] && [ -f "$2" ] || { echo "${HOOK_CANNOT_RUN}" >&2; exit 2; }; exec "$@"`;
const GUARD_PREFIX = `sh -c '${STOP_GUARD_SCRIPT}' agentscm-stop-hook `;

export function stopCommand(i: StopCommandInput): string {
  return GUARD_PREFIX + [
    shQuote(i.node),
    shQuote(i.bin),
    '--data-dir',
    shQuote(i.dataDir),
    'skill-workflow',
    stopVerb(i.host),
    shQuote(i.change),
    '--endpoint',
    shQuote(i.endpoint),
    ...(i.caFile !== undefined ? ['--ca-file', shQuote(i.caFile)] : []),
    '--repository',
    shQuote(i.repository),
    '--profile',
    shQuote(i.profile),
    '--token-file',
    shQuote(i.tokenFile),
    ...(i.hubKey !== undefined ? ['--hub-key', i.hubKey] : []),
    // Last: isOurs finds the workspace's handler by this ending.
    '--workspace',
    shQuote(i.workspace),
  ].join(' ');
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Ours: a handler that runs our Stop hook (this guard, or the bare `exec` form of earlier releases) for
 * the same workspace, whichever Change it names: one workspace has one Stop gate.
 */
function isOurs(handler: unknown, host: StopHost, workspace: string): boolean {
  if (!isObj(handler) || typeof handler.command !== 'string') return false;
  const c = handler.command;
  return (c.startsWith(GUARD_PREFIX) || c.startsWith('exec ')) && c.includes(` skill-workflow ${stopVerb(host)} `) && c.endsWith(` --workspace ${shQuote(workspace)}`);
}

/** How many of our handlers for the workspace a config text holds (the check after a write). */
export function countOurs(text: string, host: StopHost, workspace: string): number {
  const doc = parseConfig(text);
  const stop = isObj(doc.hooks) && Array.isArray(doc.hooks.Stop) ? doc.hooks.Stop : [];
  return stop.reduce((n: number, g: unknown) => n + (isObj(g) && Array.isArray(g.hooks) ? g.hooks.filter((h: unknown) => isOurs(h, host, workspace)).length : 0), 0);
}

function parseConfig(existing: string | undefined): Obj {
  if (existing === undefined || existing.trim() === '') return {};
  // Strict (duplicate keys, size) and lossless: an integer beyond 2^53 is written back as it was.
  let v: JsonValue;
  try {
    v = parseStrictJson(existing, { maxBytes: CONFIG_MAX_BYTES, what: 'hook config' });
  } catch {
    throw badInput('the existing hook config is not one JSON document; fix or move it first', 'BAD_HOOK_CONFIG');
  }
  if (!isObj(v)) throw badInput('the existing hook config is not a JSON object', 'BAD_HOOK_CONFIG');
  return v;
}

/**
 * Merges one Stop handler into a config document's text. Returns the new text, or the old text
 * unchanged when the handler is already there. Anything that is not ours is kept.
 */
export function mergeStopHook(existing: string | undefined, host: StopHost, workspace: string, command: string | undefined): { text: string; changed: boolean } {
  const doc = parseConfig(existing);
  if (doc.hooks !== undefined && !isObj(doc.hooks)) throw badInput('"hooks" in the existing config is not an object', 'BAD_HOOK_CONFIG');
  const hooks: Obj = isObj(doc.hooks) ? doc.hooks : {};
  if (hooks.Stop !== undefined && !Array.isArray(hooks.Stop)) throw badInput('"hooks.Stop" in the existing config is not a list', 'BAD_HOOK_CONFIG');
  const groups: unknown[] = Array.isArray(hooks.Stop) ? hooks.Stop : [];
  const hasOurs = groups.some((g) => isObj(g) && Array.isArray(g.hooks) && g.hooks.some((h: unknown) => isOurs(h, host, workspace)));
  if (command === undefined && !hasOurs) return { text: existing ?? '', changed: false };
  // No command: uninstall (every handler of ours for the workspace goes).
  const handler = command === undefined ? undefined : { type: 'command', command, timeout: HOOK_TIMEOUT_SECONDS };

  let placed = handler === undefined;
  const newGroups = groups
    .map((g) => {
      if (!isObj(g) || !Array.isArray(g.hooks)) return g;
      if (!g.hooks.some((h: unknown) => isOurs(h, host, workspace))) return g;
      const hs = g.hooks.flatMap((h: unknown) => {
        if (!isOurs(h, host, workspace)) return [h];
        if (placed) return [];
        placed = true;
        return [handler];
      });
      // A group left empty by removing a duplicate of ours goes; any other group stays as it was.
      return hs.length === 0 ? undefined : { ...g, hooks: hs };
    })
    .filter((g) => g !== undefined);
  if (!placed) newGroups.push({ hooks: [handler] });
  // An uninstall that empties Stop removes the key rather than leave an empty list behind.
  const { Stop: _stop, ...otherHooks } = hooks;
  const emptied = handler === undefined && newGroups.length === 0 && groups.length > 0;
  const out = { ...doc, hooks: emptied ? otherHooks : { ...hooks, Stop: newGroups } };
  if (existing !== undefined && outputJson(doc) === outputJson(out as JsonValue)) return { text: existing, changed: false };
  return { text: indentedJson(out), changed: true };
}

/** JSON.stringify(v, null, 2) that writes a bigint (an integer beyond 2^53 read from the file) exactly. */
export function indentedJson(v: unknown): string {
  // Each bigint goes out as a string with a random tag no file holds, then loses its quotes and tag.
  const tag = `bigint-${randomBytes(12).toString('hex')}:`;
  const text = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${tag}${x.toString(10)}` : x), 2);
  return text.replace(new RegExp(`"${tag}(-?[0-9]+)"`, 'g'), '$1') + '\n';
}

/**
 * Reads, merges and writes the host's config, then reads it back: exactly one handler of ours for the
 * workspace (none after an uninstall), whatever else the file holds (Tree Ring's lifecycle hooks, the
 * project's). Refuses a symlinked config.
 */
export function installStopHook(host: StopHost, project: string, workspace: string, command: string | undefined): { file: string; changed: boolean } {
  const file = configFile(host, project);
  // .claude or .codex must be the project's own directory: a symlink would send the write elsewhere.
  const dir = lstatOrUndefined(path.dirname(file));
  if (dir && (dir.isSymbolicLink() || !dir.isDirectory())) throw badInput(`${path.dirname(file)} is not a directory of the project; refusing to write into it`, 'BAD_HOOK_CONFIG');
  const st = lstatOrUndefined(file);
  if (st && !st.isFile()) throw badInput(`${file} is not a regular file; refusing to change it`, 'BAD_HOOK_CONFIG');
  const existing = st ? fs.readFileSync(file, 'utf8') : undefined;
  if (existing === undefined && command === undefined) return { file, changed: false };
  const { text, changed } = mergeStopHook(existing, host, workspace, command);
  if (changed) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    replaceDurably(file, text, st ? st.mode & 0o777 : 0o644);
  }
  const count = countOurs(fs.readFileSync(file, 'utf8'), host, workspace);
  if (count !== (command === undefined ? 0 : 1)) throw badInput(`${file} changed while it was written; run install-stop again`, 'HOOK_CONFIG_RACED');
  return { file, changed };
}
