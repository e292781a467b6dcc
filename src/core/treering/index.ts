// The in-process Tree Ring API for other parts of agentscm (harness activation, preflight, hooks).
// Read-only: opening never creates or modifies a store. No zod and no heavy imports: safe on the hook path.

import { classifyText } from './sensitivity.js';
import { recallForSession, sessionBrief, type BriefResult, type SessionScope } from './recall.js';
import { openReadOnly, storePath, type Db } from './store/schema.js';

export type { MemoryEvent } from './model.js';
export type { SessionScope } from './recall.js';
export { storePath, STORE_FILE, SQLITE_SCHEMA_VERSION } from './store/schema.js';

/** A read-only handle on `<root>/memory.sqlite`. Close it when done. */
export interface TreeRingReader {
  readonly db: Db;
  close(): void;
}

/**
 * Opens an existing store read-only. Throws AgentscmError NOT_FOUND/NO_STORE when it does not exist
 * (nothing is created), LOCAL_STATE/STORE_TOO_NEW for a newer schema.
 */
export function openTreeRingReadOnly(root: string): TreeRingReader {
  const db = openReadOnly(root);
  return { db, close: () => db.close() };
}

/**
 * One memory of a startup brief or preflight: only what may enter an agent's context. Its id and summary
 * are normal-sensitivity text, the summary with control characters replaced by spaces; source_ref is ''
 * when there is none or when it is not safe to show.
 */
export type BriefMemory = BriefResult;

export interface SessionBriefOptions {
  /** A safe task hint selects scoped FTS recall; absent or blank selects the no-keyword startup brief. */
  taskHint?: string | undefined;
  /** How many memories to return (upstream preflight uses 8). */
  limit: number;
}

function safeLine(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
}

/**
 * Candidates for a session's startup brief or preflight, scoped as seed 003 "Recall visibility and
 * startup briefs" says: project (or its alias) must match; project/global/manual/dox/revolve/tool/eval
 * memories are visible to the whole project; agent memories only to the same agent profile; workflow
 * and session memories only to the same workflow or session id. Sensitivity, supersession, expiry and
 * redaction filters run in SQL before the candidate limit. A memory whose id or summary is not
 * normal-sensitivity text is dropped; an unsafe source_ref is blanked.
 */
export function recallSessionBrief(reader: TreeRingReader, scope: SessionScope, options: SessionBriefOptions): BriefMemory[] {
  const hint = options.taskHint?.trim();
  // With a hint, scoped full-text recall over the decoded events; without one, the startup brief
  // straight from the rows' columns.
  const found: BriefResult[] = hint
    ? recallForSession(reader.db, scope, hint, options.limit).map(({ memory: m, score }) => ({
        id: m.id, summary: m.summary, source_ref: m.source.ref, ring: m.ring, scope: m.scope, event_type: m.event_type, score,
      }))
    : sessionBrief(reader.db, scope, options.limit);
  const out: BriefMemory[] = [];
  for (const m of found) {
    if (classifyText(m.id) !== 'normal' || classifyText(m.summary) !== 'normal') continue;
    out.push({
      id: m.id,
      summary: safeLine(m.summary),
      source_ref: classifyText(m.source_ref) === 'normal' ? safeLine(m.source_ref) : '',
      ring: m.ring,
      scope: m.scope,
      event_type: m.event_type,
      score: m.score,
    });
  }
  return out;
}

/** Path helper for callers that only need to know whether a store exists (no open). */
export function treeRingStoreFile(root: string): string {
  return storePath(root);
}
