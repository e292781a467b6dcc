// The Agent Zero plugin's capability descriptor. It reaches the CLI only through the plugin's private
// environment transport (TREE_RING_AGENT_ZERO_PLUGIN_MANIFEST), never as a flag or stdin field. It
// must be an absolute, regular, non-symlink file named activation-capability.json outside the project,
// with an exact schema, a sibling plugin.yaml naming the same plugin and version, and a row of the
// compatibility table whose Tree Ring series contains this CLI's version.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseStrictJson } from '../../canonical/json.js';
import { TREE_RING_VERSION } from '../../../version.js';
import {
  ACTIVATION_PROTOCOL_VERSION,
  AGENT_ZERO_COMPATIBILITY,
  AGENT_ZERO_DESCRIPTOR_FILE,
  AGENT_ZERO_DESCRIPTOR_KIND,
  AGENT_ZERO_DESCRIPTOR_MAX_BYTES,
  AGENT_ZERO_PLUGIN_ID,
} from './constants.js';
import { asBool, asInt, asObject, asString } from './validate.js';

export type DescriptorCheck = { ok: true; pluginVersion: string } | { ok: false; reason: string };

function readRegularNoFollow(file: string): Buffer | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > AGENT_ZERO_DESCRIPTOR_MAX_BYTES) return undefined;
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function parseVersion(v: string): number[] | undefined {
  const m = /^([0-9]+)\.([0-9]+)\.([0-9]+)$/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** True when `version` is at least `min` and inside the `minor` series (e.g. 0.15). */
export function inSeries(version: string, min: string, minor: string): boolean {
  const v = parseVersion(version);
  const lo = parseVersion(min);
  if (!v || !lo || `${v[0]}.${v[1]}` !== minor) return false;
  for (let i = 0; i < 3; i++) if (v[i] !== lo[i]) return v[i]! > lo[i]!;
  return true;
}

/** Top-level name and version of a plugin.yaml; duplicates make it unusable. */
function pluginYamlIdentity(text: string): { name?: string; version?: string } | undefined {
  const out: { name?: string; version?: string } = {};
  for (const line of text.split('\n')) {
    if (/^[ \t]/.test(line)) continue;
    const t = line.trim();
    if (t === '' || t.startsWith('#')) continue;
    const i = t.indexOf(':');
    if (i === -1) continue;
    const key = t.slice(0, i).trim();
    const value = t.slice(i + 1).trim().replace(/^['"]|['"]$/g, '');
    if (key === 'name' || key === 'version') {
      if (out[key] !== undefined) return undefined;
      out[key] = value;
    }
  }
  return out;
}

export function checkAgentZeroDescriptor(env: NodeJS.ProcessEnv, realProjectRoot: string, cliVersion = TREE_RING_VERSION): DescriptorCheck {
  const p = env.TREE_RING_AGENT_ZERO_PLUGIN_MANIFEST;
  if (p === undefined || p === '') return { ok: false, reason: 'no plugin descriptor is available to this command' };
  if (!path.isAbsolute(p) || path.basename(p) !== AGENT_ZERO_DESCRIPTOR_FILE) return { ok: false, reason: 'descriptor path must be an absolute activation-capability.json' };
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch {
    return { ok: false, reason: 'descriptor is missing' };
  }
  if (st.isSymbolicLink() || !st.isFile()) return { ok: false, reason: 'descriptor must be a regular non-symlink file' };
  let real: string;
  try {
    real = fs.realpathSync(p);
  } catch {
    return { ok: false, reason: 'descriptor is unreadable' };
  }
  if (real === realProjectRoot || real.startsWith(realProjectRoot + path.sep)) return { ok: false, reason: 'descriptor must live outside the project' };
  const bytes = readRegularNoFollow(real);
  if (!bytes) return { ok: false, reason: 'descriptor is unreadable or too large' };
  let pluginVersion: string;
  try {
    const o = asObject(parseStrictJson(bytes, { maxBytes: AGENT_ZERO_DESCRIPTOR_MAX_BYTES, what: 'descriptor' }), 'descriptor', [
      'schema_version', 'kind', 'plugin_id', 'plugin_version', 'activation_protocol_version', 'tree_ring_version', 'enabled',
    ]);
    const trv = asObject(o.tree_ring_version, 'tree_ring_version', ['min', 'minor']);
    if (asInt(o.schema_version, 'schema_version') !== 1) return { ok: false, reason: 'descriptor schema_version is unsupported' };
    if (asString(o.kind, 'kind') !== AGENT_ZERO_DESCRIPTOR_KIND) return { ok: false, reason: 'descriptor kind is wrong' };
    if (asString(o.plugin_id, 'plugin_id') !== AGENT_ZERO_PLUGIN_ID) return { ok: false, reason: 'descriptor names another plugin' };
    if (asInt(o.activation_protocol_version, 'activation_protocol_version') !== ACTIVATION_PROTOCOL_VERSION) return { ok: false, reason: 'descriptor protocol is unsupported' };
    if (!asBool(o.enabled, 'enabled')) return { ok: false, reason: 'the plugin is disabled' };
    pluginVersion = asString(o.plugin_version, 'plugin_version', 32);
    const min = asString(trv.min, 'tree_ring_version.min', 32);
    const minor = asString(trv.minor, 'tree_ring_version.minor', 32);
    const row = AGENT_ZERO_COMPATIBILITY.find((r) => r.plugin === pluginVersion && r.min === min && r.minor === minor);
    if (!row) return { ok: false, reason: 'plugin release is not in the compatibility table' };
    if (!inSeries(cliVersion, row.min, row.minor)) return { ok: false, reason: `plugin ${pluginVersion} does not pair with tree-ring ${cliVersion}` };
  } catch (e) {
    return { ok: false, reason: `descriptor is invalid: ${e instanceof Error ? e.message : String(e)}` };
  }
  const yaml = readRegularNoFollow(path.join(path.dirname(real), 'plugin.yaml'));
  if (!yaml) return { ok: false, reason: 'sibling plugin.yaml is missing or not a regular file' };
  const id = pluginYamlIdentity(yaml.toString('utf8'));
  if (!id || id.name !== AGENT_ZERO_PLUGIN_ID || id.version !== pluginVersion) return { ok: false, reason: 'sibling plugin.yaml does not match the descriptor' };
  return { ok: true, pluginVersion };
}
