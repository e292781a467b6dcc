// `tree-ring recall-quality` (upstream 0.15 recall_quality.rs): the default-fixture-v1 query set
// through this build's writer and recall, its figures printed and recorded as evidence.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { evaluateQuery } from '../../src/core/treering/recall-quality.js';
import { json } from '../support/cli.js';
import { tempProject, tr } from '../support/treering.js';

test('recall-quality passes the upstream query set and records the evidence, touching no store', () => {
  const dir = tempProject();
  const r = tr(dir, ['recall-quality', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const report = json<Record<string, any>>(r);
  assert.deepEqual(Object.keys(report), ['schema_version', 'generated_at', 'query_set_id', 'status', 'source_root', 'evidence_dir', 'record_path', 'summary', 'queries']);
  assert.equal(report.query_set_id, 'default-fixture-v1');
  assert.equal(report.status, 'pass');
  assert.deepEqual(
    { ...report.summary, avg_latency_ms: 0, max_latency_ms: 0 },
    { query_count: 4, pass_count: 4, fail_count: 0, needs_review_count: 0, avg_latency_ms: 0, max_latency_ms: 0, fixture_memory_count: 5, private_payloads_used: true },
  );
  const byId = Object.fromEntries((report.queries as Array<{ query_id: string; returned: Array<{ id: string; rank: number; ranking: Record<string, number> }> }>).map((q) => [q.query_id, q]));
  assert.equal(byId['scar-stale-cache']!.returned[0]!.id, 'rq_scar_stale_cache');
  assert.equal(byId['scar-stale-cache']!.returned[0]!.ranking.ring_boost, 0.2);
  assert.equal(byId['heartwood-sqlite-decision']!.returned[0]!.id, 'rq_heartwood_sqlite_decision');
  assert.equal(byId['seed-harness-experiment']!.returned[0]!.id, 'rq_seed_harness_experiment');
  assert.deepEqual(byId['sensitive-filter']!.returned, [], 'the health-sensitive fixture stays hidden');
  assert.equal(report.record_path, 'target/tree-ring-certification/recall-quality/default-fixture-v1.json');

  const record = JSON.parse(fs.readFileSync(path.join(dir, report.record_path), 'utf8'));
  assert.equal(record.status, 'pass');
  assert.ok(!JSON.stringify(record).includes('Health private payload stays filtered'), 'no sensitive fixture text in the evidence');
  const index = JSON.parse(fs.readFileSync(path.join(dir, 'target/tree-ring-certification/evidence-index.json'), 'utf8'));
  assert.equal(index.recall_quality.status, 'pass');
  assert.equal(index.recall_quality.path, 'recall-quality/default-fixture-v1.json');
  assert.deepEqual(index.missing, ['harness']);
  assert.equal(fs.existsSync(path.join(dir, '.tree-ring')), false);

  const text = tr(dir, ['recall-quality', '--evidence-dir', 'ev']);
  assert.equal(text.code, 0);
  assert.match(text.stdout, /^Tree Ring Memory recall quality: query_set=default-fixture-v1 status=pass queries=4 pass=4 fail=0 needs_review=0\n/);
  assert.match(text.stdout, /\nrecord: ev\/recall-quality\/default-fixture-v1\.json\n$/);
  assert.ok(fs.existsSync(path.join(dir, 'ev', 'evidence-index.json')));
});

test('recall-quality grading: a missing expected memory fails, a low rank needs review, a forbidden hit fails', () => {
  const item = (id: string, rank: number) => ({ id, rank, ring: 'cambium', source_ref: '', score: 0.5, ranking: {} });
  assert.equal(evaluateQuery({ expected_top_id: 'e', max_expected_rank: 3, forbidden_ids: [] }, [item('o', 1), item('e', 2)]).status, 'pass');
  const review = evaluateQuery({ expected_top_id: 'e', max_expected_rank: 1, forbidden_ids: [] }, [item('o', 1), item('e', 2)]);
  assert.deepEqual(review, { status: 'needs_review', notes: ['expected memory e returned at rank 2 which is worse than allowed rank 1'] });
  assert.deepEqual(evaluateQuery({ expected_top_id: 'e', max_expected_rank: 1, forbidden_ids: [] }, []), { status: 'fail', notes: ['missing expected memory e'] });
  assert.equal(evaluateQuery({ expected_top_id: null, max_expected_rank: null, forbidden_ids: ['s'] }, [item('s', 1)]).status, 'fail');
});
