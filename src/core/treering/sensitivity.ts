// Sensitivity guard: secret-like text is refused outright; health, financial, legal and personal
// identifier words reclassify a `normal` memory so that default recall hides it. The patterns follow
// the upstream guard so that the two implementations accept and refuse the same memories.

import { AgentscmError } from '../errors.js';
import type { MemoryEvent } from './model.js';

/**
 * A pattern, and substrings one of which every text it matches contains: in the text as it is, or, for
 * the case-insensitive patterns (`caseless`), in the text lowercased (a non-unicode /i pattern matches
 * an ASCII letter only with that letter in either case, and lowercasing keeps ASCII runs intact). A text
 * with none of them cannot match, so the pattern is neither compiled nor run for it: compiling these
 * regular expressions was most of the first classification's cost in a cold process (the hook's).
 */
export interface SensitivityPattern {
  readonly name: string;
  readonly re: RegExp;
  readonly needles: readonly string[];
  readonly caseless: boolean;
}

export const SECRET_PATTERNS: readonly SensitivityPattern[] = [
  { name: 'openai_key', re: /\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b/, needles: ['sk-'], caseless: false },
  { name: 'tree_ring_coordinator_capability', re: /trcap_v1_[A-Fa-f0-9]{64}/, needles: ['trcap_v1_'], caseless: false },
  { name: 'github_token', re: /\bgh[pousr]_[A-Za-z0-9_]{20,}\b/, needles: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], caseless: false },
  { name: 'github_fine_grained_token', re: /\bgithub_pat_[A-Za-z0-9_]{20,}\b/, needles: ['github_pat_'], caseless: false },
  { name: 'aws_access_key', re: /\bAKIA[0-9A-Z]{16}\b/, needles: ['AKIA'], caseless: false },
  // agentscm's own workspace token (authority/store.ts: agentscm_wt1_<24 hex id>_<43 base64url>), also
  // in part: the id alone is not secret, but an id with a secret tail of any length is refused.
  { name: 'agentscm_workspace_token', re: /agentscm_wt1_[0-9a-f]{24}_[A-Za-z0-9_-]{8,}/, needles: ['agentscm_wt1_'], caseless: false },
  { name: 'bearer_token', re: /\bBearer\s+[A-Za-z0-9._~+/=-]{20,}\b/i, needles: ['bearer'], caseless: true },
  {
    name: 'private_key',
    re: /-----BEGIN (?:(?:RSA|EC|OPENSSH|DSA|ENCRYPTED) )?PRIVATE KEY-----[\s\S]*?-----END (?:(?:RSA|EC|OPENSSH|DSA|ENCRYPTED) )?PRIVATE KEY-----/,
    needles: ['-----BEGIN '],
    caseless: false,
  },
  {
    name: 'secret_assignment',
    re: /\b(?:[A-Z0-9_]*(?:API[_-]?KEY|PRIVATE[_-]?KEY|SECRET(?:_ACCESS_KEY)?|TOKEN|PASSWORD|PASSWD|PWD)|DATABASE_URL)\s*=\s*(?:"[^"\n]*"|'[^'\n]*'|\S+)/i,
    needles: ['='],
    caseless: false,
  },
];

export const CATEGORY_PATTERNS: readonly SensitivityPattern[] = [
  { name: 'health', re: /\b(?:diagnosis|diagnosed|medical|medication|prescription|therapy|hospital)\b/i, needles: ['diagnos', 'medica', 'prescription', 'therapy', 'hospital'], caseless: true },
  { name: 'financial', re: /\b(?:bank account|routing number|credit card|tax return|paystub|salary)\b/i, needles: ['bank account', 'routing number', 'credit card', 'tax return', 'paystub', 'salary'], caseless: true },
  { name: 'legal', re: /\b(?:lawsuit|attorney|legal advice|court order|subpoena|contract dispute)\b/i, needles: ['lawsuit', 'attorney', 'legal advice', 'court order', 'subpoena', 'contract dispute'], caseless: true },
  { name: 'personal_identifier', re: /\b(?:ssn|social security|passport|driver'?s license)\b/i, needles: ['ssn', 'social security', 'passport', 'driver'], caseless: true },
];

/** The classification of one text: "secret", a category, or "normal". Never echoes the text. */
export function classifyText(text: string): string {
  let lower: string | undefined;
  const mayMatch = (p: SensitivityPattern) => {
    const t = p.caseless ? (lower ??= text.toLowerCase()) : text;
    return p.needles.some((n) => t.includes(n));
  };
  for (const p of SECRET_PATTERNS) if (mayMatch(p) && p.re.test(text)) return 'secret';
  for (const p of CATEGORY_PATTERNS) if (mayMatch(p) && p.re.test(text)) return p.name;
  return 'normal';
}

export function isSecretLike(text: string): boolean {
  return classifyText(text) === 'secret';
}

/**
 * text with every secret-shaped run replaced by [REDACTED]: what a message that quotes its input (an
 * unexpected argument, an unknown option, a missing id) prints instead of the input itself.
 */
export function redactSecrets(text: string): string {
  let out = text;
  let lower: string | undefined;
  for (const p of SECRET_PATTERNS) {
    const t = p.caseless ? (lower ??= out.toLowerCase()) : out;
    if (!p.needles.some((n) => t.includes(n)) || !p.re.test(out)) continue;
    out = out.replace(new RegExp(p.re.source, `${p.re.flags}g`), '[REDACTED]');
    lower = undefined;
  }
  return out;
}

/** The error for a secret-like value: one fixed line that never contains the value. */
export function secretBlocked(): AgentscmError {
  return new AgentscmError('BAD_INPUT', 'SECRET_BLOCKED', 'secret-like memory is blocked by policy');
}

/** First non-normal category over the values; throws SECRET_BLOCKED for any secret-like value. */
export function detectTextSensitivity(values: Iterable<string | null | undefined>): string {
  let detected = 'normal';
  for (const v of values) {
    if (v === null || v === undefined) continue;
    const c = classifyText(v);
    if (c === 'secret') throw secretBlocked();
    if (detected === 'normal' && c !== 'normal') detected = c;
  }
  return detected;
}

/** Every string field of the event, in upstream's inspection order. */
export function eventStrings(e: MemoryEvent): Array<string | null> {
  const out: Array<string | null> = [e.id, e.created_at, e.updated_at, e.project, e.agent_profile, e.workflow_id, e.session_id, e.operation_id, e.scope, e.ring, e.event_type, e.summary, e.details, e.source.type, e.source.ref, e.source.quote];
  out.push(...e.tags, e.sensitivity, e.retention, e.expires_at, ...e.supersedes, e.superseded_by);
  for (const l of e.links) out.push(l.type, l.target);
  out.push(e.review.review_reason, e.review.reviewed_at, e.review.reviewed_by);
  return out;
}

export function detectEventSensitivity(e: MemoryEvent): string {
  return detectTextSensitivity(eventStrings(e));
}
