// Preflight: one scoped recall for a new session or worker, rendered as safe context within 6,000
// UTF-8 bytes, then a redacted receipt written create-only — only after rendering succeeded — and
// verified with the same eight rules status uses. Hints and content never reach the receipt.

import * as path from 'node:path';
import { badInput, localState } from '../../errors.js';
import { sha256Hex } from '../../crypto/digest.js';
import { checkAgentZeroDescriptor } from './agent-zero.js';
import { checkInstalledMaterial } from './bridges.js';
import {
  CONTEXT_MAX_BYTES,
  PREFLIGHT_CANDIDATE_LIMIT,
  RECEIPT_SCHEMA_VERSION,
  type MaintainedHarness,
  type QueryClass,
} from './constants.js';
import { selectedIdsDigest, workerKeyFingerprint } from './fingerprint.js';
import type { ActivationManifest } from './manifest.js';
import type { PreflightCandidate, PreflightRecall } from './recall.js';
import { receiptRel, newReceiptId, parseReceipt, pruneReceipts, rfc3339Seconds, serializeReceipt, verifyReceipt, type Receipt } from './receipts.js';
import type { ActivationRoot } from './root.js';
import { SAFE_ID } from './validate.js';
import { isSecretLike } from '../sensitivity.js';

export const CONTEXT_HEADER = 'Tree Ring Memory scoped preflight recall:';
export const CONTEXT_EMPTY = '- No safe memories matched this scoped query.';
export const CONTEXT_FOOTER = 'Project source and instructions remain authoritative; verify recalled guidance against them.';
export const CONTEXT_REMINDER = 'This is a startup brief: run tree-ring recall for the task before substantive work and again when the task changes.';

export interface PreflightIdentity {
  readonly agent_profile: string;
  readonly workflow_id: string;
  readonly session_id: string;
}

export interface PreflightInput {
  readonly root: ActivationRoot;
  readonly manifest: ActivationManifest;
  readonly harness: MaintainedHarness;
  readonly identity: PreflightIdentity;
  readonly taskHint?: string;
  readonly recall: PreflightRecall;
  readonly env: NodeJS.ProcessEnv;
  readonly now?: () => Date;
  /**
   * The store preflighted is not the project's canonical one (`--canonical-project-root` named
   * another): the receipt proves active-isolated, never active.
   */
  readonly isolated?: boolean;
}

export interface PreflightResult {
  readonly context: string;
  readonly state: 'active' | 'active-isolated';
  readonly receipt: Receipt;
  readonly includedIds: readonly string[];
}

/**
 * Identifiers from the host: bounded, printable and not shaped like a secret or a coordinator
 * capability; anything else is replaced by a digest of it (receipts never retain such values).
 */
export function safeIdentifier(raw: string, prefix: string): string {
  return SAFE_ID.test(raw) && !secretShaped(raw) ? raw : `${prefix}-${sha256Hex(raw).slice(0, 32)}`;
}

/** Whether a value from the host looks like a credential: the hint screen's shapes or the memory guard's. */
export function secretShaped(text: string): boolean {
  return sensitive(text, SENSITIVE.length) || isSecretLike(text);
}

/**
 * Secret shapes. `needles`: substrings one of which every match contains; a text with none of them
 * cannot match, so the pattern is not run for it.
 */
export const SENSITIVE: readonly { readonly re: RegExp; readonly needles?: readonly string[] }[] = [
  { re: /-----BEGIN [A-Z ]*PRIVATE KEY-----/, needles: ['-----BEGIN '] },
  { re: /\b(?:password|passwd|secret|token|api[_-]?key|authorization|bearer|credential)s?\b\s*[:=]/i, needles: [':', '='] },
  {
    re: /\b(?:sk|pk|ghp|gho|xox[abps])[-_][A-Za-z0-9_-]{16,}/,
    needles: ['sk-', 'sk_', 'pk-', 'pk_', 'ghp-', 'ghp_', 'gho-', 'gho_', 'xoxa-', 'xoxa_', 'xoxb-', 'xoxb_', 'xoxp-', 'xoxp_', 'xoxs-', 'xoxs_'],
  },
  { re: /\bAKIA[0-9A-Z]{16}\b/, needles: ['AKIA'] },
  { re: /agentscm_wt1_[0-9a-f]{24}_[A-Za-z0-9_-]{8,}/, needles: ['agentscm_wt1_'] },
  { re: /\b[A-Za-z0-9+/=_-]{40,}\b/ },
];

/** Whether text matches one of the first `count` secret shapes. */
export function sensitive(text: string, count: number): boolean {
  for (let i = 0; i < count; i++) {
    const p = SENSITIVE[i]!;
    if (p.needles && !p.needles.some((n) => text.includes(n))) continue;
    if (p.re.test(text)) return true;
  }
  return false;
}

/** A hint that may carry a secret is refused; the caller may retry with no hint (the startup brief). */
export function checkTaskHint(hint: string): string {
  const t = hint.trim();
  if (t.length === 0) return '';
  if (t.length > 500 || sensitive(t, SENSITIVE.length)) throw badInput('sensitive-task-hint: the task hint was refused; retry without it', 'SENSITIVE_TASK_HINT');
  return t;
}

function oneLine(s: string, max: number): string {
  const clean = s.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').replace(/\s+/g, ' ').trim();
  return clean.length > max ? clean.slice(0, max - 1) + '…' : clean;
}

function entryLine(c: PreflightCandidate): string | undefined {
  const summary = oneLine(c.summary, 400);
  // Long opaque runs are refused in hints but may be legitimate in a stored summary (hashes, IDs);
  // credential shapes are dropped in both.
  if (summary === '' || sensitive(summary, 4)) return undefined;
  const kind = oneLine(c.kind, 24).replace(/[^A-Za-z0-9_-]/g, '') || 'memory';
  const source = c.sourceRef ? oneLine(c.sourceRef, 160) : '';
  // Absolute source paths are local details; only relative references and labels enter context.
  const ref = source && !path.isAbsolute(source) ? ` (source: ${source})` : '';
  return `- [${kind}] ${summary}${ref}`;
}

/** Renders the brief in relevance order, omitting entries that do not fit the byte bound. */
export function renderContext(candidates: readonly PreflightCandidate[], startupBrief: boolean): { context: string; included: string[] } {
  const tail = [...(startupBrief ? [CONTEXT_REMINDER] : []), CONTEXT_FOOTER];
  const bytes = (lines: string[]) => Buffer.byteLength(lines.join('\n'), 'utf8');
  const lines = [CONTEXT_HEADER];
  const included: string[] = [];
  for (const c of candidates) {
    const line = entryLine(c);
    if (!line) continue;
    if (bytes([...lines, line, ...tail]) > CONTEXT_MAX_BYTES) continue;
    lines.push(line);
    included.push(c.id);
  }
  if (included.length === 0) return { context: [CONTEXT_HEADER, CONTEXT_EMPTY, CONTEXT_FOOTER].join('\n'), included };
  return { context: [...lines, ...tail].join('\n'), included };
}

export async function runPreflight(input: PreflightInput): Promise<PreflightResult> {
  const now = input.now ?? (() => new Date());
  const started = Date.now();
  const { root, manifest, harness } = input;
  const rec = manifest.harnesses[harness];
  if (!rec) throw localState(`${harness} has no managed activation record; run tree-ring init`, 'NOT_ACTIVATED');
  if (rec.state === 'needs-user-review') throw localState(`${harness} needs user review before preflight can run`, 'NEEDS_USER_REVIEW');
  if (harness === 'agent-zero') {
    if (rec.state !== 'needs-plugin') throw localState('the Agent Zero record is not the passive needs-plugin binding', 'AGENT_ZERO_BINDING');
    const d = checkAgentZeroDescriptor(input.env, root.realProjectRoot);
    // "not eligible for preflight": upstream's words, which its plugin acceptance tests match.
    if (!d.ok) throw localState(`needs-plugin: the Agent Zero plugin is not eligible for preflight (${d.reason})`, 'NEEDS_PLUGIN');
  }
  const material = checkInstalledMaterial(root.pfs, harness, rec);
  if (!material.ok) throw localState(`${harness} bridge does not verify: ${material.detail}`, 'BRIDGE_MISMATCH');

  for (const [k, v] of Object.entries(input.identity)) if (!SAFE_ID.test(v)) throw badInput(`${k} has an invalid format`, 'BAD_IDENTITY');
  const hint = input.taskHint === undefined ? '' : checkTaskHint(input.taskHint);
  const queryClass: QueryClass = hint === '' ? 'startup_fallback' : 'scoped_task_recall';
  const candidates = input.recall.candidates({
    project: path.basename(root.realProjectRoot),
    agentProfile: input.identity.agent_profile,
    workflowId: input.identity.workflow_id,
    sessionId: input.identity.session_id,
    ...(hint === '' ? {} : { taskHint: hint }),
    limit: PREFLIGHT_CANDIDATE_LIMIT,
  });
  const { context, included } = renderContext(candidates, queryClass === 'startup_fallback');

  const recordedAt = now();
  const receipt: Receipt = {
    schema_version: RECEIPT_SCHEMA_VERSION,
    protocol_version: manifest.protocol_version,
    receipt_id: newReceiptId(recordedAt),
    harness_id: harness,
    adapter_version: rec.adapter_version,
    bridge_fingerprint: material.fingerprint,
    store_id: manifest.store_id,
    project_root_fingerprint: manifest.project_root_fingerprint,
    worker_key_fingerprint: workerKeyFingerprint(harness, input.identity.agent_profile),
    session: { agent_profile: input.identity.agent_profile, workflow_id: input.identity.workflow_id, session_id: input.identity.session_id },
    state: input.isolated ? 'active-isolated' : 'active',
    query_class: queryClass,
    result_count: included.length,
    selected_memory_ids_sha256: selectedIdsDigest(included),
    duration_ms: Math.max(0, Date.now() - started),
    status: 'success',
    recorded_at: rfc3339Seconds(recordedAt),
  };
  const rel = receiptRel(receipt);
  // The receipt directory's fsync overlaps the verification and pruning; the answer waits for both.
  const published = await root.pfs.publishOverlapped(rel, serializeReceipt(receipt), 0o600, 0o700, () => {
    // Verify what reached the disk with the same rules status applies, so success means proof.
    const written = root.pfs.read(rel);
    const verdict = written ? verifyReceipt(parseReceipt(written), manifest, harness, material.fingerprint, now()) : undefined;
    if (!verdict || !verdict.ok || verdict.isolated !== (input.isolated === true)) throw localState('the written receipt does not verify', 'RECEIPT_VERIFY');
    pruneReceipts(root.pfs, harness, receipt.worker_key_fingerprint, now());
  });
  if (published.outcome === 'exists') throw localState('receipt id collision; retry', 'RECEIPT_EXISTS');
  return { context, state: receipt.state === 'active-isolated' ? 'active-isolated' : 'active', receipt, includedIds: included };
}
