// Sensitivity guard: secret-like text is refused outright; health, financial, legal and personal
// identifier words reclassify a `normal` memory so that default recall hides it. The patterns follow
// the upstream guard so that the two implementations accept and refuse the same memories.

import { AgentscmError } from '../errors.js';
import type { MemoryEvent } from './model.js';

const SECRET_PATTERNS: ReadonlyArray<readonly [string, RegExp]> = [
  ['openai_key', /\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b/],
  ['tree_ring_coordinator_capability', /trcap_v1_[A-Fa-f0-9]{64}/],
  ['github_token', /\bgh[pousr]_[A-Za-z0-9_]{20,}\b/],
  ['github_fine_grained_token', /\bgithub_pat_[A-Za-z0-9_]{20,}\b/],
  ['aws_access_key', /\bAKIA[0-9A-Z]{16}\b/],
  ['bearer_token', /\bBearer\s+[A-Za-z0-9._~+/=-]{20,}\b/i],
  [
    'private_key',
    /-----BEGIN (?:(?:RSA|EC|OPENSSH|DSA|ENCRYPTED) )?PRIVATE KEY-----[\s\S]*?-----END (?:(?:RSA|EC|OPENSSH|DSA|ENCRYPTED) )?PRIVATE KEY-----/,
  ],
  [
    'secret_assignment',
    /\b(?:[A-Z0-9_]*(?:API[_-]?KEY|PRIVATE[_-]?KEY|SECRET(?:_ACCESS_KEY)?|TOKEN|PASSWORD|PASSWD|PWD)|DATABASE_URL)\s*=\s*(?:"[^"\n]*"|'[^'\n]*'|\S+)/i,
  ],
];

const CATEGORY_PATTERNS: ReadonlyArray<readonly [string, RegExp]> = [
  ['health', /\b(?:diagnosis|diagnosed|medical|medication|prescription|therapy|hospital)\b/i],
  ['financial', /\b(?:bank account|routing number|credit card|tax return|paystub|salary)\b/i],
  ['legal', /\b(?:lawsuit|attorney|legal advice|court order|subpoena|contract dispute)\b/i],
  ['personal_identifier', /\b(?:ssn|social security|passport|driver'?s license)\b/i],
];

/** The classification of one text: "secret", a category, or "normal". Never echoes the text. */
export function classifyText(text: string): string {
  for (const [, re] of SECRET_PATTERNS) if (re.test(text)) return 'secret';
  for (const [category, re] of CATEGORY_PATTERNS) if (re.test(text)) return category;
  return 'normal';
}

export function isSecretLike(text: string): boolean {
  return classifyText(text) === 'secret';
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
