// The memory event model of the upstream Tree Ring CLI (schema version 3): field order, defaults,
// validation and redaction. raw_json in the store is this event serialized in declared field order, so
// a store written here reads back in an upstream binary and vice versa. No zod: this module is on the
// recall path, whose whole-process start-up is budgeted (see bench/treering-recall.bench.ts).

import * as crypto from 'node:crypto';
import { DOMAINS } from '../crypto/digest.js';
import { badInput } from '../errors.js';

export const RINGS = ['cambium', 'outer', 'inner', 'heartwood', 'scar', 'seed'] as const;
export const SCOPES = ['global', 'project', 'agent', 'session', 'workflow', 'tool', 'eval', 'manual', 'dox', 'revolve'] as const;
export const SENSITIVITIES = ['normal', 'private', 'secret', 'health', 'financial', 'legal', 'personal_identifier'] as const;
export const RETENTIONS = ['ephemeral', 'normal', 'durable', 'user_pinned', 'forget_after_date'] as const;
/** Scopes whose events must carry the matching identity field. */
export const PRIVATE_SCOPE_FIELD = { agent: 'agent_profile', workflow: 'workflow_id', session: 'session_id' } as const;
export const MAX_CONTEXT_METADATA_LENGTH = 256;

export interface MemorySource {
  type: string;
  ref: string;
  quote: string;
}

export interface MemoryLink {
  type: string;
  target: string;
}

export interface MemoryReview {
  needs_review: boolean;
  review_reason: string | null;
  reviewed_at: string | null;
  reviewed_by: string | null;
}

/** Field order here is the serialization order (upstream's struct order). */
export interface MemoryEvent {
  id: string;
  created_at: string;
  updated_at: string;
  project: string | null;
  agent_profile: string | null;
  workflow_id: string | null;
  session_id: string | null;
  operation_id: string | null;
  scope: string;
  ring: string;
  event_type: string;
  summary: string;
  details: string;
  source: MemorySource;
  tags: string[];
  salience: number;
  confidence: number;
  sensitivity: string;
  retention: string;
  expires_at: string | null;
  supersedes: string[];
  superseded_by: string | null;
  links: MemoryLink[];
  review: MemoryReview;
}

/** RFC 3339 UTC with microseconds, as upstream writes timestamps. */
export function nowIso(date = new Date()): string {
  const iso = date.toISOString(); // 2026-01-01T00:00:00.000Z
  return `${iso.slice(0, 23)}000Z`;
}

/** `mem_YYYYMMDD_HHMMSS_<12 hex>` from the current UTC time and 48 random bits. */
export function generatedMemoryId(date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const stamp = `${date.getUTCFullYear()}${p(date.getUTCMonth() + 1)}${p(date.getUTCDate())}_${p(date.getUTCHours())}${p(date.getUTCMinutes())}${p(date.getUTCSeconds())}`;
  return `mem_${stamp}_${crypto.randomBytes(6).toString('hex')}`;
}

export function newEvent(summary: string, eventType: string): MemoryEvent {
  const now = nowIso();
  return {
    id: generatedMemoryId(),
    created_at: now,
    updated_at: now,
    project: null,
    agent_profile: null,
    workflow_id: null,
    session_id: null,
    operation_id: null,
    scope: 'global',
    ring: 'cambium',
    event_type: eventType,
    summary,
    details: '',
    source: { type: 'manual', ref: '', quote: '' },
    tags: [],
    salience: 0.5,
    confidence: 0.5,
    sensitivity: 'normal',
    retention: 'normal',
    expires_at: null,
    supersedes: [],
    superseded_by: null,
    links: [],
    review: { needs_review: false, review_reason: null, reviewed_at: null, reviewed_by: null },
  };
}

function isControl(ch: number): boolean {
  return ch <= 0x1f || (ch >= 0x7f && ch <= 0x9f);
}

export function hasControlChars(value: string): boolean {
  for (const ch of value) if (isControl(ch.codePointAt(0)!)) return true;
  return false;
}

function charCount(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

function validateContextMetadata(field: string, value: string | null): void {
  if (value === null) return;
  if (value.trim() === '') throw badInput(`${field} must not be blank`, 'INVALID_MEMORY');
  if (hasControlChars(value)) throw badInput(`${field} must not contain control characters`, 'INVALID_MEMORY');
  if (charCount(value) > MAX_CONTEXT_METADATA_LENGTH) {
    throw badInput(`${field} must be at most ${MAX_CONTEXT_METADATA_LENGTH} characters`, 'INVALID_MEMORY');
  }
}

function validateMember(field: string, value: string, allowed: readonly string[]): void {
  if (!allowed.includes(value)) throw badInput(`invalid ${field}`, 'INVALID_MEMORY');
}

function validateScore(field: string, value: number): void {
  if (!(typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1)) {
    throw badInput(`${field} must be a finite number between 0 and 1`, 'INVALID_MEMORY');
  }
}

/** Upstream's MemoryEvent::validate, same order of checks and same messages. */
export function validateEvent(e: MemoryEvent): void {
  if (e.summary.trim() === '') throw badInput('summary is required', 'INVALID_MEMORY');
  if (e.event_type.trim() === '') throw badInput('event_type is required', 'INVALID_MEMORY');
  validateMember('scope', e.scope, SCOPES);
  validateContextMetadata('project', e.project);
  validateContextMetadata('agent_profile', e.agent_profile);
  validateContextMetadata('workflow_id', e.workflow_id);
  validateContextMetadata('session_id', e.session_id);
  validateContextMetadata('operation_id', e.operation_id);
  if (e.scope === 'agent' && e.agent_profile === null) throw badInput('scope agent requires agent_profile', 'INVALID_MEMORY');
  if (e.scope === 'workflow' && e.workflow_id === null) throw badInput('scope workflow requires workflow_id', 'INVALID_MEMORY');
  if (e.scope === 'session' && e.session_id === null) throw badInput('scope session requires session_id', 'INVALID_MEMORY');
  validateMember('ring', e.ring, RINGS);
  validateMember('sensitivity', e.sensitivity, SENSITIVITIES);
  validateMember('retention', e.retention, RETENTIONS);
  validateScore('salience', e.salience);
  validateScore('confidence', e.confidence);
}

/** Replaces the payload with a placeholder that keeps no identifying metadata (upstream redact()). */
export function redactEvent(e: MemoryEvent): void {
  e.summary = '[REDACTED]';
  e.details = '';
  e.project = null;
  e.agent_profile = null;
  e.workflow_id = null;
  e.session_id = null;
  e.operation_id = null;
  if (e.scope === 'agent' || e.scope === 'workflow' || e.scope === 'session') e.scope = 'manual';
  e.event_type = 'redacted';
  e.tags = [];
  e.source = { type: 'manual', ref: '', quote: '' };
  e.supersedes = [];
  e.superseded_by = null;
  e.links = [];
  e.review = { needs_review: false, review_reason: null, reviewed_at: null, reviewed_by: null };
  e.sensitivity = 'private';
  e.updated_at = nowIso();
}

/** True when e is exactly what redactEvent produces (a tombstoned id may only hold this). */
export function isSanitizedRedaction(e: MemoryEvent): boolean {
  return (
    e.summary === '[REDACTED]' &&
    e.details === '' &&
    e.project === null &&
    e.agent_profile === null &&
    e.workflow_id === null &&
    e.session_id === null &&
    e.operation_id === null &&
    e.event_type === 'redacted' &&
    e.tags.length === 0 &&
    e.source.type === 'manual' &&
    e.source.ref === '' &&
    e.source.quote === '' &&
    e.supersedes.length === 0 &&
    e.links.length === 0 &&
    !e.review.needs_review &&
    e.review.review_reason === null &&
    e.review.reviewed_at === null &&
    e.review.reviewed_by === null &&
    e.sensitivity === 'private'
  );
}

// ---- serialization ---------------------------------------------------------------------------------

/** serde_json's f64 form: integral values keep one decimal ("1.0"), others the shortest round-trip. */
export function formatF64(x: number): string {
  if (!Number.isFinite(x)) return 'null';
  if (Number.isInteger(x) && Math.abs(x) < 1e16) return `${x}.0`;
  const s = String(x);
  // JS writes 1e-7, serde (ryu) writes 1e-7 as well; JS's "1e+21" is "1e21" in ryu.
  return s.replace('e+', 'e');
}

const str = JSON.stringify;
const optStr = (v: string | null): string => (v === null ? 'null' : str(v));

/** The event as compact JSON in upstream field order (what raw_json and --json hold). */
export function eventToJson(e: MemoryEvent): string {
  return (
    `{"id":${str(e.id)},"created_at":${str(e.created_at)},"updated_at":${str(e.updated_at)},` +
    `"project":${optStr(e.project)},"agent_profile":${optStr(e.agent_profile)},"workflow_id":${optStr(e.workflow_id)},` +
    `"session_id":${optStr(e.session_id)},"operation_id":${optStr(e.operation_id)},"scope":${str(e.scope)},` +
    `"ring":${str(e.ring)},"event_type":${str(e.event_type)},"summary":${str(e.summary)},"details":${str(e.details)},` +
    `"source":${sourceToJson(e.source)},"tags":${str(e.tags)},"salience":${formatF64(e.salience)},` +
    `"confidence":${formatF64(e.confidence)},"sensitivity":${str(e.sensitivity)},"retention":${str(e.retention)},` +
    `"expires_at":${optStr(e.expires_at)},"supersedes":${str(e.supersedes)},"superseded_by":${optStr(e.superseded_by)},` +
    `"links":${linksToJson(e.links)},"review":${reviewToJson(e.review)}}`
  );
}

export function sourceToJson(s: MemorySource): string {
  return `{"type":${str(s.type)},"ref":${str(s.ref)},"quote":${str(s.quote)}}`;
}

export function linksToJson(links: readonly MemoryLink[]): string {
  return `[${links.map((l) => `{"type":${str(l.type)},"target":${str(l.target)}}`).join(',')}]`;
}

export function reviewToJson(r: MemoryReview): string {
  return `{"needs_review":${r.needs_review},"review_reason":${optStr(r.review_reason)},"reviewed_at":${optStr(r.reviewed_at)},"reviewed_by":${optStr(r.reviewed_by)}}`;
}

// ---- decoding ---------------------------------------------------------------------------------------

type Obj = Record<string, unknown>;

function field<T>(o: Obj, key: string, kind: 'string' | 'number' | 'boolean', dflt: T, where: string): T | string | number | boolean {
  const v = o[key];
  if (v === undefined) return dflt as T;
  if (typeof v !== kind) throw badInput(`${where}: ${key} must be a ${kind}`, 'INVALID_MEMORY');
  return v as string | number | boolean;
}

function optField(o: Obj, key: string, where: string): string | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw badInput(`${where}: ${key} must be a string or null`, 'INVALID_MEMORY');
  return v;
}

function required(o: Obj, key: string, where: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw badInput(`${where}: missing field \`${key}\``, 'INVALID_MEMORY');
  return v;
}

function stringArray(o: Obj, key: string, where: string): string[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw badInput(`${where}: ${key} must be an array of strings`, 'INVALID_MEMORY');
  return v as string[];
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Builds an event from decoded JSON with upstream's serde defaults (absent optional fields take their
 * defaults; unknown fields are ignored as serde does). Types are checked; validation is separate.
 */
export function eventFromObject(o: unknown, where = 'memory'): MemoryEvent {
  if (!isObj(o)) throw badInput(`${where}: a memory event must be a JSON object`, 'INVALID_MEMORY');
  const src = o.source;
  let source: MemorySource = { type: 'manual', ref: '', quote: '' };
  if (src !== undefined && src !== null) {
    if (!isObj(src)) throw badInput(`${where}: source must be an object`, 'INVALID_MEMORY');
    source = {
      type: field(src, 'type', 'string', 'manual', where) as string,
      ref: field(src, 'ref', 'string', '', where) as string,
      quote: field(src, 'quote', 'string', '', where) as string,
    };
  }
  const linksRaw = o.links;
  const links: MemoryLink[] = [];
  if (linksRaw !== undefined && linksRaw !== null) {
    if (!Array.isArray(linksRaw)) throw badInput(`${where}: links must be an array`, 'INVALID_MEMORY');
    for (const l of linksRaw) {
      if (!isObj(l) || typeof l.type !== 'string' || typeof l.target !== 'string') throw badInput(`${where}: invalid link`, 'INVALID_MEMORY');
      links.push({ type: l.type, target: l.target });
    }
  }
  const rv = o.review;
  let review: MemoryReview = { needs_review: false, review_reason: null, reviewed_at: null, reviewed_by: null };
  if (rv !== undefined && rv !== null) {
    if (!isObj(rv)) throw badInput(`${where}: review must be an object`, 'INVALID_MEMORY');
    review = {
      needs_review: field(rv, 'needs_review', 'boolean', false, where) as boolean,
      review_reason: optField(rv, 'review_reason', where),
      reviewed_at: optField(rv, 'reviewed_at', where),
      reviewed_by: optField(rv, 'reviewed_by', where),
    };
  }
  return {
    id: required(o, 'id', where),
    created_at: required(o, 'created_at', where),
    updated_at: required(o, 'updated_at', where),
    project: optField(o, 'project', where),
    agent_profile: optField(o, 'agent_profile', where),
    workflow_id: optField(o, 'workflow_id', where),
    session_id: optField(o, 'session_id', where),
    operation_id: optField(o, 'operation_id', where),
    scope: field(o, 'scope', 'string', 'global', where) as string,
    ring: field(o, 'ring', 'string', 'cambium', where) as string,
    event_type: required(o, 'event_type', where),
    summary: required(o, 'summary', where),
    details: field(o, 'details', 'string', '', where) as string,
    source,
    tags: stringArray(o, 'tags', where),
    salience: field(o, 'salience', 'number', 0.5, where) as number,
    confidence: field(o, 'confidence', 'number', 0.5, where) as number,
    sensitivity: field(o, 'sensitivity', 'string', 'normal', where) as string,
    retention: field(o, 'retention', 'string', 'normal', where) as string,
    expires_at: optField(o, 'expires_at', where),
    supersedes: stringArray(o, 'supersedes', where),
    superseded_by: optField(o, 'superseded_by', where),
    links,
    review,
  };
}

/** Decodes a stored raw_json (trusted bytes of our own or upstream's writer). */
export function eventFromRawJson(raw: string): MemoryEvent {
  const e = eventFromObject(JSON.parse(raw) as unknown, 'stored memory');
  normalizeLegacyPrivateScopeIdentity(e);
  return e;
}

// ---- legacy private scopes -------------------------------------------------------------------------

export const LEGACY_PRIVATE_SCOPE_REVIEW_REASON = 'legacy private-scope identity synthesized during portability normalization';

/**
 * Stores before upstream 0.12 allowed agent/workflow/session events without their identity. Such an
 * event gets a deterministic `legacy-<scope>-<32 hex>` identity (upstream's derivation) and is flagged
 * for review, instead of silently widening to a shared scope. Returns true when it changed the event.
 */
export function normalizeLegacyPrivateScopeIdentity(e: MemoryEvent): boolean {
  const key = (PRIVATE_SCOPE_FIELD as Record<string, 'agent_profile' | 'workflow_id' | 'session_id' | undefined>)[e.scope];
  if (!key) return false;
  const cur = e[key];
  if (cur !== null && cur.trim() !== '') return false;
  if (e.id.trim() === '') throw badInput('legacy private-scope normalization requires a non-blank memory id', 'INVALID_MEMORY');
  const digest = crypto.createHash('sha256')
    .update(DOMAINS.treeRingLegacyIdentity)
    .update(Buffer.from([0]))
    .update(e.scope)
    .update(Buffer.from([0]))
    .update(e.id)
    .digest('hex')
    .slice(0, 32);
  e[key] = `legacy-${e.scope}-${digest}`;
  e.review.needs_review = true;
  e.review.reviewed_at = null;
  e.review.reviewed_by = null;
  const reason = e.review.review_reason;
  if (reason === null) e.review.review_reason = LEGACY_PRIVATE_SCOPE_REVIEW_REASON;
  else if (!reason.includes(LEGACY_PRIVATE_SCOPE_REVIEW_REASON)) e.review.review_reason = `${reason}; ${LEGACY_PRIVATE_SCOPE_REVIEW_REASON}`;
  return true;
}
