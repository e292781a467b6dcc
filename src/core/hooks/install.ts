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

export function stopCommand(i: StopCommandInput): string {
  return [
    'exec',
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
    '--workspace',
    shQuote(i.workspace),
    ...(i.hubKey !== undefined ? ['--hub-key', i.hubKey] : []),
  ].join(' ');
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function isOurs(handler: unknown, host: StopHost, change: string): boolean {
  if (!isObj(handler) || typeof handler.command !== 'string') return false;
  return handler.command.includes(` skill-workflow ${stopVerb(host)} ${shQuote(change)} `);
}

/**
 * Merges one Stop handler into a config document's text. Returns the new text, or the old text
 * unchanged when the handler is already there. Anything that is not ours is kept.
 */
export function mergeStopHook(existing: string | undefined, host: StopHost, change: string, command: string): { text: string; changed: boolean } {
  let doc: Obj = {};
  if (existing !== undefined && existing.trim() !== '') {
    // Strict (duplicate keys, size) and lossless: an integer beyond 2^53 is written back as it was.
    let v: JsonValue;
    try {
      v = parseStrictJson(existing, { maxBytes: CONFIG_MAX_BYTES, what: 'hook config' });
    } catch {
      throw badInput('the existing hook config is not one JSON document; fix or move it first', 'BAD_HOOK_CONFIG');
    }
    if (!isObj(v)) throw badInput('the existing hook config is not a JSON object', 'BAD_HOOK_CONFIG');
    doc = v;
  }
  if (doc.hooks !== undefined && !isObj(doc.hooks)) throw badInput('"hooks" in the existing config is not an object', 'BAD_HOOK_CONFIG');
  const hooks: Obj = isObj(doc.hooks) ? doc.hooks : {};
  if (hooks.Stop !== undefined && !Array.isArray(hooks.Stop)) throw badInput('"hooks.Stop" in the existing config is not a list', 'BAD_HOOK_CONFIG');
  const groups: unknown[] = Array.isArray(hooks.Stop) ? hooks.Stop : [];
  const handler = { type: 'command', command, timeout: HOOK_TIMEOUT_SECONDS };

  let placed = false;
  const newGroups = groups
    .map((g) => {
      if (!isObj(g) || !Array.isArray(g.hooks)) return g;
      if (!g.hooks.some((h: unknown) => isOurs(h, host, change))) return g;
      const hs = g.hooks.flatMap((h: unknown) => {
        if (!isOurs(h, host, change)) return [h];
        if (placed) return [];
        placed = true;
        return [handler];
      });
      // A group left empty by removing a duplicate of ours goes; any other group stays as it was.
      return hs.length === 0 ? undefined : { ...g, hooks: hs };
    })
    .filter((g) => g !== undefined);
  if (!placed) newGroups.push({ hooks: [handler] });
  const out = { ...doc, hooks: { ...hooks, Stop: newGroups } };
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

/** Reads, merges and writes the host's config; refuses a symlinked config. */
export function installStopHook(host: StopHost, project: string, change: string, command: string): { file: string; changed: boolean } {
  const file = configFile(host, project);
  // .claude or .codex must be the project's own directory: a symlink would send the write elsewhere.
  const dir = lstatOrUndefined(path.dirname(file));
  if (dir && (dir.isSymbolicLink() || !dir.isDirectory())) throw badInput(`${path.dirname(file)} is not a directory of the project; refusing to write into it`, 'BAD_HOOK_CONFIG');
  const st = lstatOrUndefined(file);
  if (st && !st.isFile()) throw badInput(`${file} is not a regular file; refusing to change it`, 'BAD_HOOK_CONFIG');
  const existing = st ? fs.readFileSync(file, 'utf8') : undefined;
  const { text, changed } = mergeStopHook(existing, host, change, command);
  if (changed) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    replaceDurably(file, text, st ? st.mode & 0o777 : 0o644);
  }
  return { file, changed };
}
