// The versioned activation manifest, .tree-ring/activation.json. Decoded strictly (exact keys,
// bounded values) and encoded deterministically, so that an unchanged manifest is recognised as such
// and never rewritten.

import { compareUtf8, parseStrictJson, type JsonValue } from '../../canonical/json.js';
import {
  ACTIVATION_PROTOCOL_VERSION,
  ACTIVATION_SCHEMA_VERSION,
  ACTIVATION_STATES,
  ADAPTER_CAPABILITIES,
  type ActivationState,
  type AdapterCapability,
} from './constants.js';
import { LEADING_SEPARATORS, type ManagedBlock, type OwnedFile } from './fingerprint.js';
import { asArray, asInt, asObject, asRelativePath, asString, fail, HEX64, oneOf, SAFE_ID } from './validate.js';

export const MANIFEST_FILE = 'activation.json';
const MANIFEST_MAX_BYTES = 256 * 1024;

export interface HarnessRecord {
  readonly state: ActivationState;
  readonly adapter_version: string;
  readonly adapter_capability: AdapterCapability;
  readonly bridge_fingerprint: string;
  readonly bridge_path: string;
  readonly owned_files: readonly OwnedFile[];
  readonly managed_blocks: readonly ManagedBlock[];
}

export interface ActivationManifest {
  readonly schema_version: number;
  readonly protocol_version: number;
  readonly store_id: string;
  readonly project_root_fingerprint: string;
  readonly cli_version: string;
  readonly harnesses: Readonly<Record<string, HarnessRecord>>;
}

export const HARNESS_ID = /^[a-z][a-z0-9-]{0,31}$/;
export const CLI_VERSION = /^[0-9A-Za-z.+-]+$/;
export const BLOCK_ID = /^[A-Za-z0-9._-]+$/;
export const ADAPTER_VERSION = /^[0-9A-Za-z.-]+$/;

export function parseManifest(bytes: Uint8Array | string): ActivationManifest {
  const doc = parseStrictJson(bytes, { maxBytes: MANIFEST_MAX_BYTES, what: 'activation manifest' });
  const o = asObject(doc, 'manifest', ['schema_version', 'protocol_version', 'store_id', 'project_root_fingerprint', 'cli_version', 'harnesses']);
  const schema = asInt(o.schema_version, 'schema_version', 0, 65535);
  if (schema !== ACTIVATION_SCHEMA_VERSION) fail('schema_version', `unsupported version ${schema}`);
  const protocol = asInt(o.protocol_version, 'protocol_version', 0, 65535);
  if (protocol !== ACTIVATION_PROTOCOL_VERSION) fail('protocol_version', `unsupported version ${protocol}`);
  const harnessesIn = asObject(o.harnesses, 'harnesses', [], Object.keys((o.harnesses as object | null) ?? {}));
  const harnesses: Record<string, HarnessRecord> = {};
  const ids = Object.keys(harnessesIn);
  if (ids.length > 16) fail('harnesses', 'too many entries');
  for (const id of ids) {
    if (!HARNESS_ID.test(id)) fail('harnesses', `invalid harness id ${JSON.stringify(id)}`);
    harnesses[id] = parseHarness(harnessesIn[id], `harnesses.${id}`);
  }
  return {
    schema_version: schema,
    protocol_version: protocol,
    store_id: asString(o.store_id, 'store_id', 128, SAFE_ID),
    project_root_fingerprint: asString(o.project_root_fingerprint, 'project_root_fingerprint', 64, HEX64),
    cli_version: asString(o.cli_version, 'cli_version', 64, CLI_VERSION),
    harnesses,
  };
}

function parseHarness(v: JsonValue | undefined, where: string): HarnessRecord {
  const o = asObject(v, where, ['state', 'adapter_version', 'adapter_capability', 'bridge_fingerprint', 'bridge_path', 'owned_files', 'managed_blocks']);
  const owned_files = asArray(o.owned_files, `${where}.owned_files`, 64).map((f, i) => {
    const w = `${where}.owned_files[${i}]`;
    const fo = asObject(f, w, ['path', 'sha256']);
    return { path: asRelativePath(fo.path, `${w}.path`), sha256: asString(fo.sha256, `${w}.sha256`, 64, HEX64) };
  });
  const managed_blocks = asArray(o.managed_blocks, `${where}.managed_blocks`, 64).map((b, i) => {
    const w = `${where}.managed_blocks[${i}]`;
    const bo = asObject(b, w, ['path', 'block_id', 'sha256'], ['leading_separator']);
    // Omitted means "": the empty separator still contributes a zero-length fingerprint field.
    const sep = bo.leading_separator === undefined ? '' : oneOf(bo.leading_separator, `${w}.leading_separator`, LEADING_SEPARATORS);
    return {
      path: asRelativePath(bo.path, `${w}.path`),
      block_id: asString(bo.block_id, `${w}.block_id`, 128, BLOCK_ID),
      sha256: asString(bo.sha256, `${w}.sha256`, 64, HEX64),
      leading_separator: sep,
    };
  });
  return {
    state: oneOf(o.state, `${where}.state`, ACTIVATION_STATES),
    adapter_version: asString(o.adapter_version, `${where}.adapter_version`, 32, ADAPTER_VERSION),
    adapter_capability: oneOf(o.adapter_capability, `${where}.adapter_capability`, ADAPTER_CAPABILITIES),
    bridge_fingerprint: asString(o.bridge_fingerprint, `${where}.bridge_fingerprint`, 64, HEX64),
    bridge_path: asRelativePath(o.bridge_path, `${where}.bridge_path`),
    owned_files,
    managed_blocks,
  };
}

/** Deterministic bytes: fixed key order, harnesses sorted by UTF-8 bytes, empty separators omitted. */
export function serializeManifest(m: ActivationManifest): string {
  const harnesses: Record<string, unknown> = {};
  for (const id of Object.keys(m.harnesses).sort(compareUtf8)) {
    const h = m.harnesses[id]!;
    harnesses[id] = {
      state: h.state,
      adapter_version: h.adapter_version,
      adapter_capability: h.adapter_capability,
      bridge_fingerprint: h.bridge_fingerprint,
      bridge_path: h.bridge_path,
      owned_files: h.owned_files.map((f) => ({ path: f.path, sha256: f.sha256 })),
      managed_blocks: h.managed_blocks.map((b) =>
        b.leading_separator === ''
          ? { path: b.path, block_id: b.block_id, sha256: b.sha256 }
          : { path: b.path, block_id: b.block_id, sha256: b.sha256, leading_separator: b.leading_separator },
      ),
    };
  }
  const doc = {
    schema_version: m.schema_version,
    protocol_version: m.protocol_version,
    store_id: m.store_id,
    project_root_fingerprint: m.project_root_fingerprint,
    cli_version: m.cli_version,
    harnesses,
  };
  return JSON.stringify(doc, null, 2) + '\n';
}

/** Semantic equality: everything but the CLI version that wrote it (a binary update is not a change). */
export function sameManifest(a: ActivationManifest, b: ActivationManifest): boolean {
  return serializeManifest({ ...a, cli_version: '' }) === serializeManifest({ ...b, cli_version: '' });
}
