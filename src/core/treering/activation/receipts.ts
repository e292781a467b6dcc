// Redacted activation receipts under .tree-ring/activation/receipts/. A receipt proves that one
// privacy-safe preflight ran and rendered context; it holds identifiers and digests only — never a
// prompt, a hint, recalled content, a secret or an absolute path. Retention: at most 100 per
// harness/worker and none older than 30 days.

import { randomBytes } from '../../crypto/random.js';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { compareUtf8, parseStrictJson } from '../../canonical/json.js';
import {
  ACTIVATION_PROTOCOL_VERSION,
  ACTIVATION_STATES,
  QUERY_CLASSES,
  RECEIPT_RETENTION_MS,
  RECEIPT_SCHEMA_VERSION,
  RECEIPTS_PER_WORKER,
  type ActivationState,
  type QueryClass,
} from './constants.js';
import type { ActivationManifest } from './manifest.js';
import type { ProjectFs } from './projectfs.js';
import { asInt, asObject, asString, fail, HEX64, oneOf, SAFE_ID, ShapeError } from './validate.js';

export const RECEIPTS_DIR = '.tree-ring/activation/receipts';
const RECEIPT_MAX_BYTES = 8 * 1024;
const MAX_RECEIPT_FILES_READ = 10_000;
export const RFC3339_UTC = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$/;
export const RECEIPT_ID = /^[A-Za-z0-9._-]+$/;
export const HARNESS_NAME = /^[a-z][a-z0-9-]*$/;

export interface ReceiptSession {
  readonly agent_profile: string;
  readonly workflow_id: string;
  readonly session_id: string;
}

export interface Receipt {
  readonly schema_version: number;
  readonly protocol_version: number;
  readonly receipt_id: string;
  readonly harness_id: string;
  readonly adapter_version: string;
  readonly bridge_fingerprint: string;
  readonly store_id: string;
  readonly project_root_fingerprint: string;
  readonly worker_key_fingerprint: string;
  readonly session: ReceiptSession;
  readonly state: ActivationState;
  readonly query_class: QueryClass;
  readonly result_count: number;
  readonly selected_memory_ids_sha256: string;
  readonly duration_ms: number;
  readonly status: 'success' | 'failure';
  readonly recorded_at: string;
}

/** What the JSON preflight response exposes: the receipt without session identity and state. */
export type ReceiptSummary = Omit<Receipt, 'session' | 'state'>;

export function receiptSummary(r: Receipt): ReceiptSummary {
  return {
    schema_version: r.schema_version,
    protocol_version: r.protocol_version,
    receipt_id: r.receipt_id,
    harness_id: r.harness_id,
    adapter_version: r.adapter_version,
    bridge_fingerprint: r.bridge_fingerprint,
    store_id: r.store_id,
    project_root_fingerprint: r.project_root_fingerprint,
    worker_key_fingerprint: r.worker_key_fingerprint,
    query_class: r.query_class,
    result_count: r.result_count,
    selected_memory_ids_sha256: r.selected_memory_ids_sha256,
    duration_ms: r.duration_ms,
    status: r.status,
    recorded_at: r.recorded_at,
  };
}

export function newReceiptId(now: Date): string {
  // toISOString without its "-" and ":" and its first ".": 20261130T054001123Z
  const t = now.toISOString().replace(/[-:]/g, '').replace('.', '');
  return `r-${t}-${randomBytes(6).toString('hex')}`;
}

export function rfc3339Seconds(d: Date): string {
  // The milliseconds dropped.
  return d.toISOString().replace(/\.[0-9]{3}Z$/, 'Z');
}

export function parseReceipt(bytes: Uint8Array | string): Receipt {
  const doc = parseStrictJson(bytes, { maxBytes: RECEIPT_MAX_BYTES, what: 'receipt' });
  const o = asObject(doc, 'receipt', [
    'schema_version', 'protocol_version', 'receipt_id', 'harness_id', 'adapter_version', 'bridge_fingerprint', 'store_id',
    'project_root_fingerprint', 'worker_key_fingerprint', 'session', 'state', 'query_class', 'result_count',
    'selected_memory_ids_sha256', 'duration_ms', 'status', 'recorded_at',
  ]);
  const s = asObject(o.session, 'session', ['agent_profile', 'workflow_id', 'session_id']);
  const recorded_at = asString(o.recorded_at, 'recorded_at', 32, RFC3339_UTC);
  if (Number.isNaN(Date.parse(recorded_at))) fail('recorded_at', 'is not a date');
  return {
    schema_version: asInt(o.schema_version, 'schema_version', 0, 65535),
    protocol_version: asInt(o.protocol_version, 'protocol_version', 0, 65535),
    receipt_id: asString(o.receipt_id, 'receipt_id', 64, RECEIPT_ID),
    harness_id: asString(o.harness_id, 'harness_id', 32, HARNESS_NAME),
    adapter_version: asString(o.adapter_version, 'adapter_version', 32),
    bridge_fingerprint: asString(o.bridge_fingerprint, 'bridge_fingerprint', 64, HEX64),
    store_id: asString(o.store_id, 'store_id', 128, SAFE_ID),
    project_root_fingerprint: asString(o.project_root_fingerprint, 'project_root_fingerprint', 64, HEX64),
    worker_key_fingerprint: asString(o.worker_key_fingerprint, 'worker_key_fingerprint', 64, HEX64),
    session: {
      agent_profile: asString(s.agent_profile, 'session.agent_profile', 128, SAFE_ID),
      workflow_id: asString(s.workflow_id, 'session.workflow_id', 128, SAFE_ID),
      session_id: asString(s.session_id, 'session.session_id', 128, SAFE_ID),
    },
    state: oneOf(o.state, 'state', ACTIVATION_STATES),
    query_class: oneOf(o.query_class, 'query_class', QUERY_CLASSES),
    result_count: asInt(o.result_count, 'result_count', 0, 1000),
    selected_memory_ids_sha256: asString(o.selected_memory_ids_sha256, 'selected_memory_ids_sha256', 64, HEX64),
    duration_ms: asInt(o.duration_ms, 'duration_ms', 0, 86_400_000),
    status: oneOf(o.status, 'status', ['success', 'failure'] as const),
    recorded_at,
  };
}

export function serializeReceipt(r: Receipt): string {
  return JSON.stringify(r, null, 2) + '\n';
}

export type Verdict = { ok: true; isolated: boolean } | { ok: false; rule: number; reason: string };

/**
 * The eight verification rules of the protocol, in order. `recomputedFingerprint` is the bridge
 * fingerprint recomputed from installed material (undefined when the material does not verify).
 */
export function verifyReceipt(r: Receipt, m: ActivationManifest, harness: string, recomputedFingerprint: string | undefined, now: Date): Verdict {
  const rec = m.harnesses[harness];
  if (r.schema_version !== RECEIPT_SCHEMA_VERSION || r.protocol_version !== m.protocol_version || m.protocol_version !== ACTIVATION_PROTOCOL_VERSION)
    return { ok: false, rule: 1, reason: 'schema or protocol version mismatch' };
  if (r.harness_id !== harness) return { ok: false, rule: 2, reason: 'harness mismatch' };
  if (!rec || r.adapter_version !== rec.adapter_version) return { ok: false, rule: 3, reason: 'adapter version mismatch' };
  const otherStore = r.store_id !== m.store_id;
  if (r.project_root_fingerprint !== m.project_root_fingerprint) return { ok: false, rule: 5, reason: 'project root mismatch' };
  if (recomputedFingerprint === undefined || r.bridge_fingerprint !== rec.bridge_fingerprint || recomputedFingerprint !== rec.bridge_fingerprint)
    return { ok: false, rule: 6, reason: 'bridge fingerprint mismatch' };
  if (r.status !== 'success' || (r.state !== 'active' && r.state !== 'active-isolated')) return { ok: false, rule: 7, reason: 'receipt is not a success' };
  const t = Date.parse(r.recorded_at);
  if (!(t <= now.getTime()) || !(t > now.getTime() - RECEIPT_RETENTION_MS)) return { ok: false, rule: 8, reason: 'receipt is in the future or expired' };
  // A receipt for another accessible store is never proof for this one; it can only show isolation.
  if (otherStore) return r.state === 'active-isolated' ? { ok: true, isolated: true } : { ok: false, rule: 4, reason: 'store mismatch' };
  // This store's own receipt from a preflight that named another canonical project store
  // (`preflight --canonical-project-root`): proof of an isolated store, never of the shared one.
  if (r.state === 'active-isolated') return { ok: true, isolated: true };
  return { ok: true, isolated: false };
}

export interface ReceiptFile {
  /** Project-relative path of the receipt file. */
  readonly rel: string;
  readonly receipt: Receipt | undefined;
}

export const HARNESS_DIR = /^[a-z][a-z0-9-]{0,31}$/;

function readdirOrEmpty(pfs: ProjectFs, rel: string): string[] {
  if (pfs.kind(rel) !== 'dir') return [];
  try {
    return fs.readdirSync(pfs.abs(rel));
  } catch {
    return [];
  }
}

/** Receipts live in receipts/<harness>/<worker key fingerprint>/<receipt id>.json. */
export function receiptRel(r: Pick<Receipt, 'harness_id' | 'worker_key_fingerprint' | 'receipt_id'>): string {
  return `${RECEIPTS_DIR}/${r.harness_id}/${r.worker_key_fingerprint}/${r.receipt_id}.json`;
}

/** Lists (bounded) and parses the receipts of one harness or all; a malformed one has receipt undefined. */
export function listReceipts(pfs: ProjectFs, harness?: string): ReceiptFile[] {
  const out: ReceiptFile[] = [];
  const harnesses = harness !== undefined ? [harness] : readdirOrEmpty(pfs, RECEIPTS_DIR).filter((h) => HARNESS_DIR.test(h));
  for (const h of harnesses) {
    for (const w of readdirOrEmpty(pfs, `${RECEIPTS_DIR}/${h}`).filter((x) => HEX64.test(x))) {
      const dir = `${RECEIPTS_DIR}/${h}/${w}`;
      for (const name of readdirOrEmpty(pfs, dir)) {
        if (!name.endsWith('.json') || name.startsWith('.')) continue;
        if (out.length >= MAX_RECEIPT_FILES_READ) return out;
        const rel = `${dir}/${name}`;
        let receipt: Receipt | undefined;
        try {
          const bytes = pfs.read(rel, RECEIPT_MAX_BYTES);
          receipt = bytes ? parseReceipt(bytes) : undefined;
        } catch (e) {
          if (!(e instanceof ShapeError) && !(e instanceof Error)) throw e;
          receipt = undefined;
        }
        out.push({ rel, receipt });
      }
    }
  }
  return out;
}

/** Newest first: by recorded_at, then by receipt id (which embeds milliseconds). */
export function newestFirst(a: Receipt, b: Receipt): number {
  return compareUtf8(b.recorded_at, a.recorded_at) || compareUtf8(b.receipt_id, a.receipt_id);
}

/**
 * The time a receipt id (and so its file name) carries, in ms; NaN for names that are not ours. A
 * RegExp here: it runs once per receipt of the directory (up to a hundred), where machine code beats a
 * loop in a cold process's interpreter.
 */
function idTime(name: string): number {
  const m = /^r-([0-9]{4})([0-9]{2})([0-9]{2})T([0-9]{2})([0-9]{2})([0-9]{2})([0-9]{3})Z-[0-9a-f]{12}\.json$/.exec(name);
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, +m[7]!) : NaN;
}

/**
 * Retention by file name alone (the hot path parses nothing here): in this worker's directory keep
 * the newest 100; in every worker directory of the harness remove receipts older than 30 days. Files
 * whose names are not receipt ids are left alone.
 */
export function pruneReceipts(pfs: ProjectFs, harness: string, workerKey: string, now: Date): number {
  const cutoff = now.getTime() - RECEIPT_RETENTION_MS;
  let removed = 0;
  const hdir = `${RECEIPTS_DIR}/${harness}`;
  for (const w of readdirOrEmpty(pfs, hdir).filter((x) => HEX64.test(x))) {
    const dir = `${hdir}/${w}`;
    const named = readdirOrEmpty(pfs, dir)
      .map((name) => ({ name, t: idTime(name) }))
      .filter((x) => !Number.isNaN(x.t))
      .sort((a, b) => b.t - a.t || compareUtf8(b.name, a.name));
    named.forEach((x, i) => {
      if ((w === workerKey && i >= RECEIPTS_PER_WORKER) || x.t <= cutoff) {
        try {
          fs.unlinkSync(path.join(pfs.abs(dir), x.name));
          removed++;
        } catch {
          /* a concurrent prune already removed it */
        }
      }
    });
  }
  return removed;
}
