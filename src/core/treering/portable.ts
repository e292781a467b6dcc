// Portable JSONL export/import (export schema version 1): a header line, then one envelope per event.
// Import also accepts bare event lines (older exports) and normalizes legacy private-scope events.

import { parseStrictJson } from '../canonical/json.js';
import { badInput } from '../errors.js';
import { TREE_RING_VERSION } from '../../version.js';
import { eventFromObject, eventToJson, isSanitizedRedaction, normalizeLegacyPrivateScopeIdentity, nowIso, redactEvent, validateEvent, type MemoryEvent } from './model.js';
import { detectEventSensitivity } from './sensitivity.js';

export const EXPORT_RECORD_TYPE = 'tree_ring_memory_export';
export const MEMORY_EVENT_RECORD_TYPE = 'memory_event';
export const EXPORT_SCHEMA_VERSION = 1;
/** Bound on one import line; a memory event is small, a line this large is not one. */
const MAX_LINE_BYTES = 4 << 20;

export interface ExportHeader {
  type: string;
  schema_version: number;
  plugin_version: string;
  created_at: string;
  memory_count: number;
  sensitive_included: boolean;
}

export function encodeJsonl(events: readonly MemoryEvent[], sensitiveIncluded: boolean): string {
  for (const e of events) validateEvent(e);
  const header = `{"type":"${EXPORT_RECORD_TYPE}","schema_version":${EXPORT_SCHEMA_VERSION},"plugin_version":${JSON.stringify(TREE_RING_VERSION)},"created_at":${JSON.stringify(nowIso())},"memory_count":${events.length},"sensitive_included":${sensitiveIncluded}}`;
  return [header, ...events.map((e) => `{"type":"${MEMORY_EVENT_RECORD_TYPE}","memory":${eventToJson(e)}}`)].join('\n') + '\n';
}

function toPlain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(toPlain);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toPlain(x)]));
  return v;
}

export interface DecodedJsonl {
  header: ExportHeader | undefined;
  events: MemoryEvent[];
}

/** Strict per-line decoding (duplicate keys fail); line numbers in every error. */
export function decodeJsonl(input: string): DecodedJsonl {
  let header: ExportHeader | undefined;
  const events: MemoryEvent[] = [];
  const lines = input.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const trimmed = lines[i]!.trim();
    if (trimmed === '') continue;
    let value: unknown;
    try {
      value = toPlain(parseStrictJson(trimmed, { maxBytes: MAX_LINE_BYTES, what: `line ${lineNo}` }));
    } catch (e) {
      throw badInput(`line ${lineNo}: invalid json: ${(e as Error).message}`, 'INVALID_IMPORT');
    }
    const type = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>).type : undefined;
    try {
      if (type === EXPORT_RECORD_TYPE) {
        const h = value as Record<string, unknown>;
        if (typeof h.schema_version !== 'number' || typeof h.plugin_version !== 'string' || typeof h.created_at !== 'string' || typeof h.memory_count !== 'number' || typeof h.sensitive_included !== 'boolean') {
          throw badInput('invalid export header', 'INVALID_IMPORT');
        }
        if (h.schema_version !== EXPORT_SCHEMA_VERSION) throw badInput(`unsupported export schema version ${h.schema_version}`, 'INVALID_IMPORT');
        header = h as unknown as ExportHeader;
        continue;
      }
      const raw = type === MEMORY_EVENT_RECORD_TYPE ? (value as Record<string, unknown>).memory : value;
      const e = eventFromObject(raw, 'memory event');
      normalizeLegacyPrivateScopeIdentity(e);
      validateEvent(e);
      events.push(e);
    } catch (e) {
      throw badInput(`line ${lineNo}: ${(e as Error).message}`, 'INVALID_IMPORT');
    }
  }
  return { header, events };
}

/** The summary a redaction leaves; migration tombstones every id whose summary is exactly this. */
export const REDACTED_SUMMARY = '[REDACTED]';

/**
 * Whether an imported event is a redaction whose id must be tombstoned. Export schema 1 (upstream's)
 * has no tombstone field, so the placeholder itself carries the fact, read by migration's rule.
 */
export function isImportedRedaction(e: MemoryEvent): boolean {
  return e.summary === REDACTED_SUMMARY;
}

/**
 * Import normalization: a `normal` event whose text is sensitive is reclassified; secrets fail. A
 * redaction that still carries anything besides the placeholder (an older or hand-made export) is
 * sanitized, since a tombstoned id may only hold the sanitized placeholder.
 */
export function normalizeImportEvent(e: MemoryEvent): MemoryEvent {
  normalizeLegacyPrivateScopeIdentity(e);
  const detected = detectEventSensitivity(e);
  if (e.sensitivity === 'normal' && detected !== 'normal') e.sensitivity = detected;
  if (isImportedRedaction(e) && !isSanitizedRedaction(e)) {
    const supersededBy = e.superseded_by;
    redactEvent(e);
    e.superseded_by = supersededBy;
  }
  validateEvent(e);
  return e;
}
