// Recall quality (upstream tree-ring-memory-cli recall_quality.rs, 0.15): the query set
// `default-fixture-v1` run through this build's own writer and recall over a fresh store of five
// fixture memories (one per ring plus a health-sensitive one that must stay hidden). Each query passes,
// fails (expected memory missing, or a forbidden one returned) or needs review (expected memory ranked
// too low). The report is written to EVIDENCE_DIR/recall-quality/default-fixture-v1.json and recorded in
// EVIDENCE_DIR/evidence-index.json, as upstream's certification evidence expects.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { localState } from '../errors.js';
import { newEvent, validateEvent, type MemoryEvent } from './model.js';
import { recall } from './recall.js';
import { openWritable, writeTransaction } from './store/schema.js';
import { putInTransaction } from './store/write.js';

export const RECALL_QUALITY_QUERY_SET_ID = 'default-fixture-v1';

interface QueryCase {
  query_id: string;
  query: string;
  expected_top_id: string | null;
  max_expected_rank: number | null;
  forbidden_ids: readonly string[];
}

const CASES: readonly QueryCase[] = [
  { query_id: 'scar-stale-cache', query: 'failure stale cache', expected_top_id: 'rq_scar_stale_cache', max_expected_rank: 1, forbidden_ids: [] },
  { query_id: 'heartwood-sqlite-decision', query: 'durable local sqlite decision', expected_top_id: 'rq_heartwood_sqlite_decision', max_expected_rank: 1, forbidden_ids: [] },
  { query_id: 'seed-harness-experiment', query: 'planning experiment agent harness', expected_top_id: 'rq_seed_harness_experiment', max_expected_rank: 1, forbidden_ids: [] },
  { query_id: 'sensitive-filter', query: 'health private payload', expected_top_id: null, max_expected_rank: null, forbidden_ids: ['rq_sensitive_health_note'] },
];

// [id, ring, event type, summary, details, source ref, sensitivity]
const FIXTURES: ReadonlyArray<readonly [string, string, string, string, string, string, string]> = [
  ['rq_scar_stale_cache', 'scar', 'warning', 'Failure stale cache regression after deploy.', 'The cache stayed stale until invalidation was added to the failure path.', 'fixture://recall-quality/scar-stale-cache', 'normal'],
  ['rq_heartwood_sqlite_decision', 'heartwood', 'decision', 'Durable local sqlite decision for recall storage.', 'Choose local sqlite as the durable storage decision for offline recall.', 'fixture://recall-quality/heartwood-sqlite-decision', 'normal'],
  ['rq_seed_harness_experiment', 'seed', 'hypothesis', 'Planning experiment for agent harness diagnostics.', 'Run a planning experiment around the agent harness diagnostic runner.', 'fixture://recall-quality/seed-harness-experiment', 'normal'],
  ['rq_outer_release_guardrail', 'outer', 'lesson', 'Release guardrail for evidence output before shipping.', 'Keep release guardrail checks separate from recall-quality diagnostics.', 'fixture://recall-quality/outer-release-guardrail', 'normal'],
  ['rq_sensitive_health_note', 'cambium', 'lesson', 'Health private payload stays filtered from safe recall evidence.', 'This fixture proves sensitive health payload filtering without exposing details.', 'fixture://recall-quality/sensitive-health-note', 'health'],
];

function fixtureMemories(): MemoryEvent[] {
  return FIXTURES.map(([id, ring, eventType, summary, details, ref, sensitivity]) => {
    const e = newEvent(summary, eventType);
    e.id = id;
    e.project = 'recall-quality-fixture';
    e.scope = 'project';
    e.ring = ring;
    e.details = details;
    e.source = { type: 'fixture', ref, quote: '' };
    e.tags = ['recall-quality', RECALL_QUALITY_QUERY_SET_ID];
    e.salience = 0.92;
    e.confidence = 0.91;
    e.retention = 'durable';
    e.sensitivity = sensitivity;
    validateEvent(e);
    return e;
  });
}

export interface ReturnedMemory {
  id: string;
  rank: number;
  ring: string;
  source_ref: string;
  score: number;
  ranking: Record<string, number>;
}

export interface QueryRecord {
  query_id: string;
  query: string;
  status: 'pass' | 'fail' | 'needs_review';
  expected_top_id: string | null;
  expected_rank: number | null;
  latency_ms: number;
  returned: ReturnedMemory[];
  notes: string[];
}

export interface RecallQualityReport {
  schema_version: 1;
  generated_at: string;
  query_set_id: string;
  status: 'pass' | 'fail' | 'needs_review';
  source_root: string;
  evidence_dir: string;
  record_path: string;
  summary: {
    query_count: number;
    pass_count: number;
    fail_count: number;
    needs_review_count: number;
    avg_latency_ms: number;
    max_latency_ms: number;
    fixture_memory_count: number;
    private_payloads_used: boolean;
  };
  queries: QueryRecord[];
}

/** Upstream's evaluation of one query's returned list. */
export function evaluateQuery(c: Pick<QueryCase, 'expected_top_id' | 'max_expected_rank' | 'forbidden_ids'>, returned: readonly ReturnedMemory[]): { status: QueryRecord['status']; notes: string[] } {
  let status: QueryRecord['status'] = 'pass';
  const notes: string[] = [];
  if (c.expected_top_id !== null) {
    const hit = returned.find((r) => r.id === c.expected_top_id);
    if (!hit) {
      status = 'fail';
      notes.push(`missing expected memory ${c.expected_top_id}`);
    } else if (c.max_expected_rank !== null && hit.rank > c.max_expected_rank) {
      status = 'needs_review';
      notes.push(`expected memory ${c.expected_top_id} returned at rank ${hit.rank} which is worse than allowed rank ${c.max_expected_rank}`);
    }
  }
  const forbidden = returned.filter((r) => c.forbidden_ids.includes(r.id)).map((r) => r.id);
  if (forbidden.length > 0) {
    status = 'fail';
    notes.push(`forbidden memories returned: ${forbidden.join(', ')}`);
  }
  return { status, notes };
}

function runCases(): { queries: QueryRecord[]; fixtures: MemoryEvent[] } {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tree-ring-recall-quality-'));
  try {
    const db = openWritable(tmp);
    try {
      const fixtures = fixtureMemories();
      writeTransaction(db, () => fixtures.forEach((e) => putInTransaction(db, e)));
      const queries = CASES.map((c): QueryRecord => {
        const started = performance.now();
        const results = recall(db, c.query, { limit: 5 });
        const latency = performance.now() - started;
        const returned = results.map((r, i) => ({ id: r.memory.id, rank: i + 1, ring: r.memory.ring, source_ref: r.memory.source.ref, score: r.score, ranking: { ...r.ranking } }));
        const ev = evaluateQuery(c, returned);
        return { query_id: c.query_id, query: c.query, status: ev.status, expected_top_id: c.expected_top_id, expected_rank: c.max_expected_rank, latency_ms: latency, returned, notes: ev.notes };
      });
      return { queries, fixtures };
    } finally {
      db.close();
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function writeEvidence(evidenceDir: string, report: RecallQualityReport, recordAbs: string): void {
  try {
    fs.mkdirSync(path.dirname(recordAbs), { recursive: true });
    fs.writeFileSync(recordAbs, JSON.stringify(report, null, 2));
    const indexPath = path.join(evidenceDir, 'evidence-index.json');
    let index: Record<string, unknown>;
    if (fs.existsSync(indexPath)) {
      index = JSON.parse(fs.readFileSync(indexPath, 'utf8')) as Record<string, unknown>;
    } else {
      index = { generated_at: report.generated_at, overall_status: 'missing', certification: null, harness: {}, recall_quality: null, missing: ['harness', 'recall_quality'], stale: [] };
    }
    index.generated_at = report.generated_at;
    index.recall_quality = {
      category: 'recall_quality',
      status: report.status,
      label: 'Recall quality',
      path: `recall-quality/${RECALL_QUALITY_QUERY_SET_ID}.json`,
      summary_path: null,
      generated_at: report.generated_at,
    };
    const harness = (index.harness ?? {}) as Record<string, { status?: string }>;
    const missing = new Set(((index.missing as string[] | undefined) ?? []).filter((m) => m !== 'recall_quality'));
    if (Object.keys(harness).length === 0) missing.add('harness');
    else missing.delete('harness');
    index.missing = [...missing].sort();
    index.overall_status = rollup(index, harness, report.status);
    fs.writeFileSync(indexPath, JSON.stringify(index, null, 2));
  } catch (e) {
    throw localState(`cannot write recall quality evidence under ${evidenceDir}: ${(e as Error).message}`, 'EVIDENCE_WRITE');
  }
}

/** Upstream's `rollup_index_status`. */
function rollup(index: Record<string, unknown>, harness: Record<string, { status?: string }>, recallStatus: string): string {
  const states = Object.values(harness).map((h) => h.status);
  if (states.includes('fail') || recallStatus === 'fail') return 'fail';
  if (states.includes('error') || recallStatus === 'error') return 'error';
  if (recallStatus === 'needs_review') return 'needs_review';
  const cert = index.certification as { status?: string } | null | undefined;
  if (cert && typeof cert.status === 'string') return cert.status;
  return 'skip';
}

/** Runs the query set and records the evidence; `sourceRoot`/`evidenceDir` as given (printed back). */
export function runRecallQuality(sourceRoot: string, evidenceDir: string, cwd: string, now = new Date()): RecallQualityReport {
  const { queries, fixtures } = runCases();
  const count = (s: QueryRecord['status']) => queries.filter((q) => q.status === s).length;
  const latencies = queries.map((q) => q.latency_ms);
  const summary = {
    query_count: queries.length,
    pass_count: count('pass'),
    fail_count: count('fail'),
    needs_review_count: count('needs_review'),
    avg_latency_ms: latencies.length === 0 ? 0 : latencies.reduce((a, b) => a + b, 0) / latencies.length,
    max_latency_ms: latencies.reduce((a, b) => Math.max(a, b), 0),
    fixture_memory_count: fixtures.length,
    private_payloads_used: fixtures.some((f) => f.sensitivity !== 'normal'),
  };
  const recordPath = path.join(evidenceDir, 'recall-quality', `${RECALL_QUALITY_QUERY_SET_ID}.json`);
  const report: RecallQualityReport = {
    schema_version: 1,
    generated_at: `${now.toISOString().slice(0, 19)}Z`,
    query_set_id: RECALL_QUALITY_QUERY_SET_ID,
    status: summary.fail_count > 0 ? 'fail' : summary.needs_review_count > 0 ? 'needs_review' : 'pass',
    source_root: sourceRoot,
    evidence_dir: evidenceDir,
    record_path: recordPath,
    summary,
    queries,
  };
  const evidenceAbs = path.resolve(cwd, evidenceDir);
  writeEvidence(evidenceAbs, report, path.join(evidenceAbs, 'recall-quality', `${RECALL_QUALITY_QUERY_SET_ID}.json`));
  return report;
}

export function recallQualityText(r: RecallQualityReport): string {
  const s = r.summary;
  const lines = [
    `Tree Ring Memory recall quality: query_set=${r.query_set_id} status=${r.status} queries=${s.query_count} pass=${s.pass_count} fail=${s.fail_count} needs_review=${s.needs_review_count}`,
    `latency: avg_ms=${s.avg_latency_ms.toFixed(3)} max_ms=${s.max_latency_ms.toFixed(3)} fixtures=${s.fixture_memory_count}`,
  ];
  for (const q of r.queries) {
    const top = q.returned[0];
    lines.push(`${q.query_id} [${q.status}] top=${top ? top.id : '-'} returned=${q.returned.length}${q.notes.length ? ` ${q.notes.join('; ')}` : ''}`);
  }
  lines.push(`record: ${r.record_path}`);
  return `${lines.join('\n')}\n`;
}
