// Recall: FTS5 candidates with every filter in SQL before the candidate limit, AND query first, then
// variants without one ring-intent word, then an OR fallback; candidates are ranked by textual match,
// salience, confidence, recency, source authority and ring boosts. Only the winners' raw_json is read
// and decoded, which keeps recall within a small factor of the bare FTS query (bench/).

import { asciiLowercase } from './text.js';
import { eventFromRawJson, type MemoryEvent } from './model.js';
import type { Db } from './store/schema.js';

const FAILURE_TERMS = ['error', 'failure', 'regression', 'bug', 'rejected', 'rollback', 'stale', 'conflict', 'security', 'privacy', 'mistake'];
const HEARTWOOD_TERMS = ['preference', 'rule', 'constraint', 'decision', 'durable'];
const SEED_TERMS = ['planning', 'roadmap', 'future', 'alternative', 'experiment', 'explore'];
const INTENT_TERMS = new Set([...FAILURE_TERMS, ...HEARTWOOD_TERMS, ...SEED_TERMS]);
const FILLER_TERMS = new Set(['a', 'an', 'and', 'about', 'are', 'for', 'in', 'is', 'not', 'of', 'on', 'or', 'the', 'to', 'what']);
const SHARED_SCOPES = "'global', 'project', 'tool', 'eval', 'manual', 'dox', 'revolve'";

// Unicode word characters, as Rust's regex `\w` (letters, marks, digits, connector punctuation). Made
// on first use: creating it builds its Unicode property sets, about 2 ms in a cold process, and the
// commands that load this module (the lifecycle hook among them) mostly see ASCII text or none.
let termRe: RegExp | undefined;
const unicodeTermRe = (): RegExp => (termRe ??= new RegExp('[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]+', 'gu'));



// On ASCII text the Unicode classes above are exactly letters, digits and '_' (no ASCII character is a
// mark or a join control). This one compiles far faster than the Unicode one, which matters in a cold process.
const ASCII_TERM_RE = /[A-Za-z0-9_]+/g;

/** Query terms: Unicode word runs, ASCII-lowercased (non-ASCII letters keep their case, as upstream). */
export function terms(text: string): string[] {
  if (text === '') return [];
  return (text.match(/[^\x00-\x7f]/.test(text) ? unicodeTermRe() : ASCII_TERM_RE) ?? []).map(asciiLowercase);
}

/** The query, then one variant per ring-intent word with that word removed. */
export function searchQueries(query: string): string[] {
  const qt = terms(query);
  const out = [query];
  qt.forEach((t, i) => {
    if (!INTENT_TERMS.has(t)) return;
    const rest = qt.filter((_, j) => j !== i);
    if (rest.length > 0) out.push(rest.join(' '));
  });
  return out;
}

/** FTS5 MATCH expression: each non-filler term quoted, joined with AND or OR; undefined when empty. */
export function ftsQuery(query: string, operator: 'AND' | 'OR' = 'AND'): string | undefined {
  const t = terms(query)
    .filter((x) => !FILLER_TERMS.has(x))
    .map((x) => `"${x.replaceAll('"', '""')}"`);
  return t.length === 0 ? undefined : t.join(` ${operator} `);
}

function sourceAuthority(type: string): number {
  switch (type) {
    case 'user':
      return 1.0;
    case 'contract':
      return 0.9;
    case 'eval':
      return 0.8;
    case 'file':
      return 0.7;
    case 'tool':
      return 0.6;
    case 'summary':
      return 0.5;
    case 'manual':
      return 0.4;
    default:
      return 0.3;
  }
}

function parseTimestamp(value: string): number | undefined {
  let t = Date.parse(value);
  if (Number.isNaN(t) && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?$/.test(value)) t = Date.parse(`${value}Z`);
  return Number.isNaN(t) ? undefined : t;
}

function recencyScore(createdAt: string, now: number): number {
  const t = parseTimestamp(createdAt) ?? now;
  const ageSeconds = Math.max(0, Math.floor((now - t) / 1000));
  return Math.exp(-ageSeconds / 86_400 / 30);
}

/** What the scorer reads of a memory (a candidate row or a whole event). */
export interface ScoreInput {
  summary: string;
  details: string;
  tags: readonly string[];
  salience: number;
  confidence: number;
  created_at: string;
  /** Age in seconds when already known (candidate rows); otherwise derived from created_at. */
  ageSeconds?: number | undefined;
  ring: string;
  sourceType: string;
}

/** Factors in key order (upstream's BTreeMap order), as `ranking` prints them. */
export interface Ranking {
  confidence: number;
  recency: number;
  ring_boost: number;
  salience: number;
  source_authority: number;
  textual_match: number;
}

/** `queryTerms` is terms(query), when the caller scores many memories against one query. */
export function scoreMemory(m: ScoreInput, query: string, now = Date.now(), queryTerms: readonly string[] = terms(query)): { score: number; ranking: Ranking } {
  const qt = queryTerms;
  let textual = 0.1;
  if (qt.length > 0) {
    const text = asciiLowercase(`${m.summary} ${m.details} ${m.tags.join(' ')}`);
    textual = qt.filter((t) => text.includes(t)).length / qt.length;
  }
  const recency = m.ageSeconds !== undefined ? Math.exp(-Math.max(0, m.ageSeconds) / 86_400 / 30) : recencyScore(m.created_at, now);
  const authority = sourceAuthority(m.sourceType);
  const qs = new Set(qt);
  let ringBoost = 0;
  if (m.ring === 'scar' && FAILURE_TERMS.some((t) => qs.has(t))) ringBoost = 0.2;
  else if (m.ring === 'heartwood' && HEARTWOOD_TERMS.some((t) => qs.has(t))) ringBoost = 0.15;
  else if (m.ring === 'seed' && SEED_TERMS.some((t) => qs.has(t))) ringBoost = 0.12;
  const score = 0.25 * textual + 0.25 * m.salience + 0.25 * m.confidence + 0.2 * recency + 0.05 * authority + ringBoost;
  return { score, ranking: { confidence: m.confidence, recency, ring_boost: ringBoost, salience: m.salience, source_authority: authority, textual_match: textual } };
}

export interface RecallOptions {
  project?: string | undefined;
  agentProfile?: string | undefined;
  workflowId?: string | undefined;
  sessionId?: string | undefined;
  scope?: string | undefined;
  rings?: readonly string[] | undefined;
  eventTypes?: readonly string[] | undefined;
  includeSensitive?: boolean | undefined;
  includeSuperseded?: boolean | undefined;
  /** Expired memories are left out unless this is set. */
  includeExpired?: boolean | undefined;
  limit: number;
}

export interface RecallResult {
  memory: MemoryEvent;
  score: number;
  ranking: Ranking;
}

/** Upstream's candidate cap: 128 per requested result, clamped to 256..2048. */
export function candidateLimit(limit: number): number {
  return Math.min(2048, Math.max(256, limit * 128));
}

/**
 * Candidates for a startup brief (no keywords). They arrive pre-ordered by the same signals the ranking
 * weighs (ring preference, salience, confidence, recency), so a far smaller bound than keyword recall's
 * keeps the brief's choice while sparing the ranking of hundreds of memories that cannot make the cut.
 */
export function briefCandidateLimit(limit: number): number {
  return Math.min(candidateLimit(limit), Math.max(64, limit * 8));
}

/** What the scorer reads of a row, computed in SQLite where that is cheaper than in JS. */
interface RankedRow {
  rid: number;
  id: string;
  summary: string;
  salience: number;
  confidence: number;
  created_at: string;
  /** Seconds since created_at as SQLite computes it (NULL when unparsable: treated as now). */
  age_s: number | null;
  ring: string;
  source_type: string | null;
}

const RANKED_COLUMNS =
  "m.rowid AS rid, m.id AS id, m.summary AS summary, m.salience AS salience, m.confidence AS confidence, m.created_at AS created_at, CAST((julianday('now') - julianday(m.created_at)) * 86400 AS INTEGER) AS age_s, m.ring AS ring, json_extract(m.source_json, '$.type') AS source_type";

/** A recall candidate: its text too, for the query's terms; raw_json is only decoded for the winners. */
interface CandidateRow extends RankedRow {
  details: string;
  tags_json: string;
}

const CANDIDATE_COLUMNS = `${RANKED_COLUMNS}, m.details AS details, m.tags_json AS tags_json`;

/**
 * A startup brief's candidate: its ranking uses no text (there is no query), and what it shows (summary,
 * source reference, ring, scope, event type) is read from the row itself, so no stored event is decoded.
 */
interface BriefRow extends RankedRow {
  source_ref: unknown;
  scope: string;
  event_type: string;
}

const BRIEF_COLUMNS = `${RANKED_COLUMNS}, json_extract(m.source_json, '$.ref') AS source_ref, m.scope AS scope, m.event_type AS event_type`;

/** A startup brief's memory as its row holds it (see BRIEF_COLUMNS). */
export interface BriefResult {
  id: string;
  summary: string;
  /** The source reference ('' when there is none). */
  source_ref: string;
  ring: string;
  scope: string;
  event_type: string;
  score: number;
}

/** The WHERE clause of explicit recall (exact conjunctive filters) and its parameters. */
export function explicitFilterSql(o: RecallOptions): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  if (!o.includeSuperseded) parts.push('m.superseded_by IS NULL');
  const eq = (col: string, v: string | undefined) => {
    if (v !== undefined) {
      parts.push(`m.${col} = ?`);
      params.push(v);
    }
  };
  eq('project', o.project);
  eq('agent_profile', o.agentProfile);
  eq('workflow_id', o.workflowId);
  eq('session_id', o.sessionId);
  eq('scope', o.scope);
  const inList = (col: string, vs: readonly string[] | undefined) => {
    if (vs !== undefined) {
      parts.push(`m.${col} IN (${vs.map(() => '?').join(', ')})`);
      params.push(...vs);
    }
  };
  inList('ring', o.rings);
  inList('event_type', o.eventTypes);
  if (!o.includeSensitive) parts.push("m.sensitivity = 'normal'");
  if (!o.includeExpired) parts.push("(m.expires_at IS NULL OR julianday(m.expires_at) > julianday('now'))");
  parts.push('NOT EXISTS (SELECT 1 FROM redaction_tombstones t WHERE t.memory_id = m.id)');
  return { sql: parts.join(' AND '), params };
}

/**
 * Up to `cap` matching memories that pass every filter, newest index entries first. The final score
 * does not use bm25, so the candidates are not ordered by it: ranking every match by bm25 costs time
 * proportional to all matches (hundreds of ms for common words in a large store), while a descending
 * rowid walk stops at the cap and favours recent memories, which the score also favours.
 */
function candidates(db: Db, match: string, where: { sql: string; params: unknown[] }, cap: number): CandidateRow[] {
  const sql = `SELECT ${CANDIDATE_COLUMNS} FROM memory_fts JOIN memories m ON m.id = memory_fts.id WHERE memory_fts MATCH ? AND ${where.sql} ORDER BY memory_fts.rowid DESC LIMIT ?`;
  return db.prepare(sql).all(match, ...where.params, cap) as CandidateRow[];
}

function scoreInputOf(r: RankedRow, details = '', tags: string[] = []): ScoreInput {
  return { summary: r.summary, details, tags, salience: r.salience, confidence: r.confidence, created_at: r.created_at, ageSeconds: r.age_s ?? 0, ring: r.ring, sourceType: r.source_type ?? 'manual' };
}

function toScoreInput(r: CandidateRow): ScoreInput {
  let tags: string[] = [];
  try {
    const t = JSON.parse(r.tags_json) as unknown;
    if (Array.isArray(t)) tags = t.filter((x): x is string => typeof x === 'string');
  } catch {
    tags = [];
  }
  return scoreInputOf(r, r.details, tags);
}

function loadEvents(db: Db, rowids: readonly number[]): Map<number, MemoryEvent> {
  const out = new Map<number, MemoryEvent>();
  if (rowids.length === 0) return out;
  const rows = db.prepare(`SELECT rowid AS rid, raw_json FROM memories WHERE rowid IN (${rowids.map(() => '?').join(',')})`).all(...rowids) as Array<{ rid: number; raw_json: string }>;
  for (const r of rows) out.set(r.rid, eventFromRawJson(r.raw_json));
  return out;
}

function rankCandidates(db: Db, rows: CandidateRow[], query: string, limit: number, bonus?: (ring: string) => number, idTieBreak = false): RecallResult[] {
  const now = Date.now();
  const qt = terms(query);
  const scored = rows.map((r) => {
    const s = scoreMemory(toScoreInput(r), query, now, qt);
    return { r, score: s.score + (bonus ? bonus(r.ring) : 0), ranking: s.ranking };
  });
  // Explicit recall keeps FTS rank order among equal scores (a stable sort); briefs break ties by id.
  scored.sort((a, b) => b.score - a.score || (idTieBreak ? (a.r.id < b.r.id ? -1 : a.r.id > b.r.id ? 1 : 0) : 0));
  const top = scored.slice(0, limit);
  const events = loadEvents(
    db,
    top.map((t) => t.r.rid),
  );
  return top.flatMap((t) => {
    const memory = events.get(t.r.rid);
    return memory ? [{ memory, score: t.score, ranking: t.ranking }] : [];
  });
}

/** Explicit recall (the `recall` command). */
export function recall(db: Db, query: string, o: RecallOptions): RecallResult[] {
  if (query.trim() === '' || o.limit === 0) return [];
  if (o.rings?.length === 0 || o.eventTypes?.length === 0) return [];
  const where = explicitFilterSql(o);
  const cap = candidateLimit(o.limit);
  let rows: CandidateRow[] = [];
  const seen = new Set<string>();
  for (const q of searchQueries(query)) {
    if (seen.has(q)) continue;
    seen.add(q);
    const match = ftsQuery(q, 'AND');
    if (match === undefined) continue;
    rows = candidates(db, match, where, cap);
    if (rows.length > 0) break;
  }
  if (rows.length === 0) {
    const match = ftsQuery(query, 'OR');
    if (match !== undefined) rows = candidates(db, match, where, cap);
  }
  return rankCandidates(db, rows, query, o.limit);
}

// ---- scoped session recall (startup briefs and preflight) -------------------------------------------

/** The live identity a session brief is for. Project and alias both match `memories.project`. */
export interface SessionScope {
  project: string;
  /** The safe lifecycle alias of the project name (e.g. for names with spaces); defaults to project. */
  projectAlias?: string | undefined;
  agentProfile: string;
  workflowId: string;
  sessionId: string;
}

/** The visibility filters of a session, after the project condition (`projects`: its SQL and params). */
function sessionWhereFor(scope: SessionScope, projects: { sql: string; params: unknown[] }): { sql: string; params: unknown[] } {
  return {
    sql: `${projects.sql} AND m.sensitivity = 'normal' AND m.superseded_by IS NULL
      AND (m.expires_at IS NULL OR julianday(m.expires_at) > julianday('now'))
      AND NOT EXISTS (SELECT 1 FROM redaction_tombstones t WHERE t.memory_id = m.id)
      AND (m.scope IN (${SHARED_SCOPES})
        OR (m.scope = 'agent' AND m.agent_profile = ?)
        OR (m.scope = 'workflow' AND m.workflow_id = ?)
        OR (m.scope = 'session' AND m.session_id = ?))`,
    params: [...projects.params, scope.agentProfile, scope.workflowId, scope.sessionId],
  };
}

function sessionWhere(scope: SessionScope): { sql: string; params: unknown[] } {
  return sessionWhereFor(scope, { sql: 'm.project IN (?, ?)', params: [scope.project, scope.projectAlias ?? scope.project] });
}

const BRIEF_ORDER = `CASE m.ring WHEN 'scar' THEN 0 WHEN 'heartwood' THEN 1 ELSE 2 END,
           m.salience DESC, m.confidence DESC, m.created_at DESC, m.id`;

/**
 * The startup brief's candidate query: scars, then heartwood, then the rest, each by salience,
 * confidence and recency. The inner query sorts only narrow keys and row ids, so the candidate columns
 * (details, tags, age) are built for the bounded candidates alone, not for every visible memory. Its
 * WHERE and ORDER BY match the covering index agentscm_memories_session_brief (store/schema.ts, whose
 * BRIEF_RING_ORDER is the CASE below), whose leading column is the project: SQLite walks it in order and
 * stops at the limit only under one project name (`m.project = ?`); `m.project IN (?, ?)` would read and
 * sort every visible row (1 ms for 10,000 memories here, against a few rows' worth). So each project name
 * has its own ordered walk: one when the alias is the name itself (the usual case), else one per name,
 * each bounded, and the best of both by the same order.
 */
export function sessionBriefSql(scope: SessionScope, limit: number): { sql: string; params: unknown[] } {
  const cap = briefCandidateLimit(limit);
  const alias = scope.projectAlias ?? scope.project;
  const arm = (project: string) => {
    const where = sessionWhereFor(scope, { sql: 'm.project = ?', params: [project] });
    return { sql: `SELECT m.rowid FROM memories m WHERE ${where.sql} ORDER BY ${BRIEF_ORDER} LIMIT ?`, params: [...where.params, cap] };
  };
  const columns = `SELECT ${BRIEF_COLUMNS} FROM memories m WHERE m.rowid IN`;
  if (alias === scope.project) {
    const one = arm(scope.project);
    return { sql: `${columns} (\n         ${one.sql})`, params: one.params };
  }
  const [a, b] = [arm(scope.project), arm(alias)];
  return {
    sql: `${columns} (
         SELECT m.rowid FROM memories m WHERE m.rowid IN (${a.sql}) OR m.rowid IN (${b.sql})
         ORDER BY ${BRIEF_ORDER} LIMIT ?)`,
    params: [...a.params, ...b.params, cap],
  };
}

/**
 * Scoped task recall for one live session: shared scopes of the project, this agent's own memories,
 * and only the matching workflow/session partitions. Every visibility and lifecycle filter runs in SQL
 * before the candidate cap; the (trimmed, non-blank) hint is searched with AND, intent variants, then OR.
 * Without a hint a session gets the startup brief instead (sessionBrief).
 */
export function recallForSession(db: Db, scope: SessionScope, hint: string, limit: number): RecallResult[] {
  if (limit <= 0) return [];
  const where = sessionWhere(scope);
  const cap = candidateLimit(limit);
  for (const q of searchQueries(hint)) {
    const match = ftsQuery(q, 'AND');
    if (match === undefined) continue;
    const rows = candidates(db, match, where, cap);
    if (rows.length > 0) return rankCandidates(db, rows, hint, limit, undefined, true);
  }
  const match = ftsQuery(hint, 'OR');
  return match === undefined ? [] : rankCandidates(db, candidates(db, match, where, cap), hint, limit, undefined, true);
}

/**
 * The no-keyword startup brief of a live session: the bounded candidates of sessionBriefSql, ranked by
 * the same score as recall with an empty query (salience, confidence, recency, source authority; no
 * text term) plus the scar/heartwood preference, ties broken by id.
 */
export function sessionBrief(db: Db, scope: SessionScope, limit: number): BriefResult[] {
  if (limit <= 0) return [];
  const brief = sessionBriefSql(scope, limit);
  const rows = db.prepare(brief.sql).all(...brief.params) as BriefRow[];
  const now = Date.now();
  const scored = rows.map((r) => ({ r, score: scoreMemory(scoreInputOf(r), '', now, []).score + (r.ring === 'scar' ? 0.2 : r.ring === 'heartwood' ? 0.15 : 0) }));
  scored.sort((a, b) => b.score - a.score || (a.r.id < b.r.id ? -1 : a.r.id > b.r.id ? 1 : 0));
  return scored.slice(0, limit).map(({ r, score }) => ({
    id: r.id,
    summary: r.summary,
    source_ref: typeof r.source_ref === 'string' ? r.source_ref : '',
    ring: r.ring,
    scope: r.scope,
    event_type: r.event_type,
    score,
  }));
}
