// The operator's startup configuration of `hub serve --config FILE`: strict execution config version 1
// with agent_task_profiles only. Each entry pins one installed agent-task profile of one data dir; the
// Hub refuses to start, naming the entry, when the file has an unknown field or the pin differs from
// what the data dir's authority has installed.

import * as path from 'node:path';
import { parseStrictJson, type JsonValue } from '../core/canonical/json.js';
import { ID_RE, isRepository } from '../core/contract/paths.js';
import { HEX64 } from '../core/crypto/digest.js';
import { badInput } from '../core/errors.js';
import { readBoundedInput } from '../core/fs/safe.js';
import type { Authority } from '../core/authority/store.js';

export const CONFIG_MAX_BYTES = 256 * 1024;
/** How many profiles one Hub process serves at most. */
export const CONFIG_MAX_PROFILES = 256;

export interface ProfileEntry {
  readonly repository_id: string;
  readonly profile_id: string;
  /** The repository's name in the native store; this Hub's authority names it as the workspace does. */
  readonly native_repository: string;
  readonly data_dir: string;
  readonly target: string;
  readonly requirement_digest: string;
  readonly publish_forge_status: boolean;
}

export interface HubConfig {
  readonly version: 1;
  readonly agent_task_profiles: readonly ProfileEntry[];
}

const ENTRY_FIELDS = ['repository_id', 'profile_id', 'native_repository', 'data_dir', 'target', 'requirement_digest', 'publish_forge_status'];

const bad = (msg: string) => badInput(`hub config: ${msg}`, 'BAD_HUB_CONFIG');

/** The name of entry i in messages: its index and, when readable, repository/profile. */
export function entryName(i: number, e: { repository_id?: unknown; profile_id?: unknown }): string {
  const who = typeof e.repository_id === 'string' && typeof e.profile_id === 'string' ? ` (${e.repository_id} ${e.profile_id})` : '';
  return `agent_task_profiles[${i}]${who}`;
}

function isObject(v: JsonValue | undefined): v is { [k: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses and checks the shape of a config document (no file system or authority access). */
export function parseHubConfig(text: Uint8Array | string): HubConfig {
  let doc: JsonValue;
  try {
    doc = parseStrictJson(text, { maxBytes: CONFIG_MAX_BYTES, what: 'hub config', integersOnly: true });
  } catch (e) {
    throw bad(e instanceof Error ? e.message : 'not JSON');
  }
  if (!isObject(doc)) throw bad('the document must be a JSON object');
  for (const k of Object.keys(doc)) if (k !== 'version' && k !== 'agent_task_profiles') throw bad(`unknown field ${JSON.stringify(k)}`);
  if (doc.version !== 1) throw bad('version must be 1');
  const list = doc.agent_task_profiles;
  if (!Array.isArray(list) || list.length === 0) throw bad('agent_task_profiles must be a non-empty array');
  if (list.length > CONFIG_MAX_PROFILES) throw bad(`agent_task_profiles has more than ${CONFIG_MAX_PROFILES} entries`);
  const seen = new Map<string, number>();
  const entries = list.map((raw, i): ProfileEntry => {
    if (!isObject(raw)) throw bad(`agent_task_profiles[${i}] must be an object`);
    const name = entryName(i, raw);
    for (const k of Object.keys(raw)) if (!ENTRY_FIELDS.includes(k)) throw bad(`${name}: unknown field ${JSON.stringify(k)}`);
    const str = (k: string, ok: (s: string) => boolean, what: string): string => {
      const v = raw[k];
      if (typeof v !== 'string' || !ok(v)) throw bad(`${name}: ${k} must be ${what}`);
      return v;
    };
    const e: ProfileEntry = {
      repository_id: str('repository_id', isRepository, 'OWNER/NAME'),
      profile_id: str('profile_id', (s) => ID_RE.test(s), 'an id'),
      native_repository: str('native_repository', isRepository, 'OWNER/NAME'),
      data_dir: str('data_dir', (s) => path.isAbsolute(s) && path.resolve(s) === s, 'an absolute, normalized path'),
      target: str('target', (s) => s.length > 0 && s.length <= 256, 'a non-empty target of at most 256 characters'),
      requirement_digest: str('requirement_digest', (s) => HEX64.test(s), '64 lowercase hex characters'),
      publish_forge_status: raw.publish_forge_status === undefined ? false : (raw.publish_forge_status as boolean),
    };
    if (typeof e.publish_forge_status !== 'boolean') throw bad(`${name}: publish_forge_status must be true or false`);
    if (e.native_repository !== e.repository_id) throw bad(`${name}: native_repository must equal repository_id (this Hub's authority names repositories as the workspace does)`);
    const key = `${e.repository_id}\0${e.profile_id}`;
    const dup = seen.get(key);
    if (dup !== undefined) throw bad(`${name}: the same repository and profile as agent_task_profiles[${dup}]`);
    seen.set(key, i);
    return e;
  });
  return { version: 1, agent_task_profiles: entries };
}

export function readHubConfig(file: string): HubConfig {
  return parseHubConfig(readBoundedInput(file, CONFIG_MAX_BYTES, 'hub config'));
}

/**
 * What differs between an entry's pins and the profile its authority has installed (undefined when
 * they agree): the stable reason code and a message naming the entry.
 */
export function entryMismatch(e: ProfileEntry, i: number, authority: Authority): { code: string; message: string } | undefined {
  const name = entryName(i, e);
  const p = authority.getProfile(e.native_repository, e.profile_id);
  if (!p) return { code: 'profile_missing', message: `${name}: no such agent-task profile is installed in ${e.data_dir}` };
  if (p.requirement_digest !== e.requirement_digest) {
    return { code: 'requirement_digest_mismatch', message: `${name}: requirement_digest ${e.requirement_digest} differs from the installed ${p.requirement_digest}` };
  }
  if (p.target !== e.target) return { code: 'target_mismatch', message: `${name}: target ${JSON.stringify(e.target)} differs from the installed ${JSON.stringify(p.target)}` };
  if (p.publish_forge_status !== e.publish_forge_status) {
    return { code: 'publish_forge_status_mismatch', message: `${name}: publish_forge_status ${e.publish_forge_status} differs from the installed ${p.publish_forge_status}` };
  }
  return undefined;
}
