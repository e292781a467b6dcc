// The store lifecycle commands of upstream 0.15 (audit, maintain, consolidate) and `evidence
// --operation-id`, as the plugins call them: the built CLI, real SQLite stores in temp dirs.

import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { json } from '../support/cli.js';
import { buildUpstreamStore, insertUpstreamRow, snapshot, tempProject, tr, upstreamRawJson } from '../support/treering.js';

type R = { code: number; stdout: string; stderr: string };

function ok(r: R): void {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

function fails(r: R, pattern: RegExp): void {
  assert.equal(r.code, 2, `expected exit 2, got ${r.code}: ${r.stdout} ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, pattern);
}

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** An upstream-serialized event with the lifecycle fields a test needs. */
function event(id: string, o: Partial<Record<string, unknown>> & { summary: string }): string {
  const base = JSON.parse(
    upstreamRawJson({ id, created_at: iso(Date.now() - 1000), project: 'p', scope: 'project', ring: 'cambium', event_type: 'lesson', summary: o.summary, salience: '0.5', confidence: '0.5' }),
  ) as Record<string, unknown>;
  return JSON.stringify({ ...base, ...o });
}

function store(dir: string, rows: string[]): void {
  const db = buildUpstreamStore(path.join(dir, '.tree-ring'));
  try {
    for (const r of rows) insertUpstreamRow(db, r);
  } finally {
    db.close();
  }
}

function rows(dir: string, sql: string): Array<Record<string, unknown>> {
  const db = new Database(path.join(dir, '.tree-ring', 'memory.sqlite'), { readonly: true });
  try {
    return db.prepare(sql).all() as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
}

test('audit: a missing store is audited as empty and not created; unknown types exit 2', () => {
  const dir = tempProject();
  const r = tr(dir, ['--json', 'audit', '--audit-type', 'sensitive']);
  ok(r);
  const report = json(r);
  assert.deepEqual(Object.keys(report), ['generated_at', 'audit_type', 'memory_count', 'finding_count', 'findings']);
  assert.equal(report.audit_type, 'sensitive');
  assert.equal(report.memory_count, 0);
  assert.deepEqual(report.findings, []);
  assert.equal(fs.existsSync(path.join(dir, '.tree-ring')), false);
  fails(tr(dir, ['audit', '--audit-type', 'bogus']), /^error: unsupported audit_type: bogus$/m);
  const text = tr(dir, ['audit']);
  ok(text);
  assert.equal(text.stdout, 'Tree Ring Memory audit: type=all memories=0 findings=0\n');
});

test('audit: every upstream audit type finds its cases, read-only', () => {
  const dir = tempProject();
  const past = iso(Date.now() - DAY);
  store(dir, [
    event('mem_a_health', { summary: 'Private diagnosis should be reviewed.', sensitivity: 'health', retention: 'durable' }),
    event('mem_b_secret', { summary: 'A redacted secret', sensitivity: 'secret', expires_at: iso(Date.now() + DAY) }),
    event('mem_c_stale', { summary: 'Old temporary note.', expires_at: past }),
    event('mem_d_badexp', { summary: 'Bad expiry.', expires_at: 'not-a-date' }),
    event('mem_e_heart', { summary: 'Weak durable truth.', ring: 'heartwood', confidence: 0.4 }),
    event('mem_f_super', { summary: 'Replacement decision.', supersedes: ['mem_missing'] }),
    event('mem_g_use', { summary: 'Use polling for the cache.', tags: ['cache'] }),
    event('mem_h_avoid', { summary: 'Avoid polling for the cache!', tags: ['cache'] }),
  ]);
  const before = snapshot(dir);
  const all = json<{ memory_count: number; finding_count: number; findings: Array<Record<string, unknown>> }>(tr(dir, ['audit', '--json']));
  assert.equal(all.memory_count, 8);
  assert.equal(all.finding_count, all.findings.length);
  const has = (t: string, sev: string, id: string, related: string | null = null) =>
    assert.ok(
      all.findings.some((f) => f.audit_type === t && f.severity === sev && f.memory_id === id && f.related_memory_id === related),
      `${t}/${sev}/${id} in ${JSON.stringify(all.findings)}`,
    );
  has('stale', 'medium', 'mem_c_stale');
  has('stale', 'medium', 'mem_d_badexp');
  has('sensitive', 'critical', 'mem_b_secret');
  has('sensitive', 'high', 'mem_a_health');
  has('sensitive', 'medium', 'mem_a_health');
  has('low_confidence', 'high', 'mem_e_heart');
  has('supersession', 'medium', 'mem_f_super', 'mem_missing');
  has('contradictions', 'medium', 'mem_g_use', 'mem_h_avoid');
  assert.deepEqual(Object.keys(all.findings[0]!), ['audit_type', 'severity', 'memory_id', 'related_memory_id', 'finding', 'recommended_action', 'tags']);

  const sensitive = json<{ findings: Array<{ audit_type: string; finding: string }> }>(tr(dir, ['audit', '--audit-type', 'SENSITIVE', '--json']));
  assert.ok(sensitive.findings.length === 3 && sensitive.findings.every((f) => f.audit_type === 'sensitive'));
  assert.ok(sensitive.findings.some((f) => f.finding === 'Secret-like memory is retained.'));
  const text = tr(dir, ['audit', '--audit-type', 'low_confidence']);
  assert.match(text.stdout, /^Tree Ring Memory audit: type=low_confidence memories=8 findings=1\nlow_confidence \[high\] memory=mem_e_heart related=- Heartwood memory has low confidence\. -> Review evidence/);
  assert.deepEqual(snapshot(dir), before, 'audit leaves the store byte-for-byte unchanged');
});

test('maintain: a dry run plans without writing; apply flags delete, redact and rebuild the index', () => {
  const dir = tempProject();
  const past = iso(Date.now() - DAY);
  store(dir, [
    event('mem_1_ephemeral', { summary: 'Temporary cache note.', retention: 'ephemeral', expires_at: past }),
    event('mem_2_scar', { summary: 'Expired scar.', ring: 'scar', retention: 'ephemeral', expires_at: past }),
    event('mem_3_secret', { summary: 'Leaked note', details: 'configure with sk-proj-abcdefghijklmnopqrstuvwxyz1234567890' }),
    event('mem_4_fine', { summary: 'Nothing to do.' }),
  ]);
  const before = snapshot(dir);
  const plan = json<Record<string, any>>(tr(dir, ['maintain', '--json']));
  assert.deepEqual(Object.keys(plan), ['id', 'generated_at', 'memory_count', 'planned_action_count', 'applied_action_count', 'dry_run', 'status', 'actions', 'fts']);
  assert.match(plan.id, /^maint_\d{8}_\d{6}_[0-9a-f]{12}$/);
  assert.equal(plan.dry_run, true);
  assert.equal(plan.status, 'planned');
  assert.equal(plan.memory_count, 4);
  const kinds = Object.fromEntries((plan.actions as Array<{ memory_id: string; action_type: string }>).map((a) => [a.memory_id, a.action_type]));
  assert.deepEqual(kinds, { mem_1_ephemeral: 'delete_expired', mem_2_scar: 'review_expired_protected', mem_3_secret: 'redact_secret' });
  assert.ok(!JSON.stringify(plan).includes('sk-proj-'), 'the plan never echoes the secret');
  assert.deepEqual(plan.fts, { memory_rows: 4, fts_rows: 4, missing_fts_rows: 0, orphan_fts_rows: 0, repaired: false });
  assert.deepEqual(snapshot(dir), before, 'a dry run leaves the store unchanged');
  const text = tr(dir, ['maintain']);
  assert.match(text.stdout, /^Tree Ring Memory maintenance: memories=4 planned=3 applied=0 dry_run=true status=planned\nFTS: memories=4 index=4 missing=0 orphan=0 repaired=false\n/);
  assert.match(text.stdout, /\nReport-only: use --apply-expired, --apply-secret-redactions, or --repair-fts to apply eligible maintenance\.\n$/);

  const applied = json<Record<string, any>>(tr(dir, ['maintain', '--apply-expired', '--apply-secret-redactions', '--json']));
  assert.equal(applied.dry_run, false);
  assert.equal(applied.applied_action_count, 2);
  assert.equal(applied.status, 'planned', 'the protected review stays unapplied');
  assert.deepEqual(rows(dir, 'SELECT id, summary FROM memories ORDER BY id'), [
    { id: 'mem_2_scar', summary: 'Expired scar.' },
    { id: 'mem_3_secret', summary: '[REDACTED]' },
    { id: 'mem_4_fine', summary: 'Nothing to do.' },
  ]);

  // An orphan index row is drift; --repair-fts rebuilds the index.
  const db = new Database(path.join(dir, '.tree-ring', 'memory.sqlite'));
  db.prepare("INSERT INTO memory_fts (id, summary, details, tags, source_ref) VALUES ('mem_gone', 'x', '', '', '')").run();
  db.close();
  assert.equal(json<Record<string, any>>(tr(dir, ['maintain', '--json'])).fts.orphan_fts_rows, 1);
  const repaired = json<Record<string, any>>(tr(dir, ['maintain', '--repair-fts', '--json']));
  assert.deepEqual(repaired.fts, { memory_rows: 3, fts_rows: 3, missing_fts_rows: 0, orphan_fts_rows: 0, repaired: true });
});

test('maintain: a missing store is not created; apply on a coordinated store needs the capability', () => {
  const dir = tempProject();
  const r = json<Record<string, any>>(tr(dir, ['maintain', '--json']));
  assert.equal(r.memory_count, 0);
  assert.equal(r.status, 'clean');
  assert.equal(fs.existsSync(path.join(dir, '.tree-ring')), false);

  ok(tr(dir, ['init']));
  const grant = json<{ capability: string }>(tr(dir, ['policy', 'enable', '--json']));
  fails(tr(dir, ['maintain', '--repair-fts']), /coordinator capability required/);
  ok(tr(dir, ['maintain', '--repair-fts'], { TREE_RING_COORDINATOR_TOKEN: grant.capability }));
  const audit = json<Array<{ action: string; decision: string }>>(tr(dir, ['policy', 'audit', '--json']));
  assert.deepEqual(audit.slice(0, 2).map((a) => `${a.action}:${a.decision}`), ['maintain:allowed', 'maintain:denied']);
});

test('consolidate: dry run, created summary, unchanged repeat, --force supersedes, bad period exits 2', () => {
  const dir = tempProject();
  fails(tr(dir, ['consolidate', '--period-type', 'hourly']), /^error: unsupported period_type: hourly$/m);
  const empty = json<Record<string, any>>(tr(dir, ['consolidate', '--dry-run', '--json']));
  assert.equal(empty.status, 'dry_run');
  assert.equal(empty.notes, 'No memories matched consolidation criteria.');
  assert.equal(fs.existsSync(path.join(dir, '.tree-ring')), false, 'a dry run never creates the store');

  for (const s of ['Use snapshot invalidation for the cache.', 'Avoid stale cache entries.']) {
    ok(tr(dir, ['remember', s, '--event-type', 'decision', '--scope', 'project', '--project', 'ui', '--tag', 'cache']));
  }
  ok(tr(dir, ['remember', 'Low salience note.', '--event-type', 'decision', '--scope', 'project', '--project', 'ui', '--salience', '0.1']));
  const before = snapshot(dir);
  const plan = json<Record<string, any>>(tr(dir, ['consolidate', '--project', 'ui', '--dry-run', '--json']));
  assert.deepEqual(Object.keys(plan), ['id', 'created_at', 'period_type', 'period_key', 'candidate_count', 'source_memory_ids', 'output_memory_ids', 'dry_run', 'force', 'status', 'notes', 'outputs']);
  assert.equal(plan.period_key, new Date().toISOString().slice(0, 10));
  assert.equal(plan.candidate_count, 2);
  assert.equal(plan.status, 'dry_run');
  assert.equal(plan.outputs.length, 1);
  assert.deepEqual(snapshot(dir), before, 'a dry run writes nothing');

  const created = json<Record<string, any>>(tr(dir, ['consolidate', '--project', 'ui', '--json']));
  assert.equal(created.status, 'created');
  assert.equal(created.notes, 'Consolidation summaries stored.');
  const summary = created.outputs[0].memory;
  assert.equal(summary.summary, 'Consolidated 2 decision memory group for project ui in cambium ring.');
  assert.equal(summary.event_type, 'summary');
  assert.equal(summary.ring, 'outer');
  assert.deepEqual(summary.source, { type: 'consolidation', ref: `daily:${created.period_key}`, quote: '' });
  assert.deepEqual(summary.tags, ['cache', 'consolidation']);
  assert.deepEqual(summary.links.map((l: { target: string }) => l.target), created.source_memory_ids);
  assert.match(tr(dir, ['consolidate', '--project', 'ui', '--dry-run', '--json']).stdout, /"salience":0\.5,"confidence":0\.5,/, 'floats as serde writes them');

  const repeat = json<Record<string, any>>(tr(dir, ['consolidate', '--project', 'ui', '--json']));
  assert.equal(repeat.status, 'unchanged');
  assert.equal(repeat.id, created.id);
  assert.deepEqual(repeat.output_memory_ids, created.output_memory_ids);
  assert.match(tr(dir, ['consolidate', '--project', 'ui']).stdout, /^Tree Ring Memory consolidation: type=daily key=\S+ candidates=2 outputs=1 status=unchanged\nMatching consolidation already exists\.\n$/);

  const forced = json<Record<string, any>>(tr(dir, ['consolidate', '--project', 'ui', '--force', '--json']));
  assert.equal(forced.status, 'created');
  assert.notEqual(forced.id, created.id);
  assert.deepEqual(rows(dir, `SELECT superseded_by FROM memories WHERE id = '${created.output_memory_ids[0]}'`), [{ superseded_by: forced.output_memory_ids[0] }]);
  assert.equal(rows(dir, 'SELECT count(*) AS n FROM consolidations')[0]!.n, 2);
});

test('consolidate: identity filters and partitions follow upstream 0.15', () => {
  const dir = tempProject();
  for (const agent of ['a1', 'a2']) {
    ok(tr(dir, ['remember', `Worker ${agent} found the boundary.`, '--event-type', 'lesson', '--scope', 'agent', '--project', 'p', '--agent-profile', agent]));
  }
  const both = json<Record<string, any>>(tr(dir, ['consolidate', '--dry-run', '--json']));
  assert.equal(both.outputs.length, 2, 'agent-scoped memories are consolidated per agent profile');
  assert.deepEqual(both.outputs.map((o: { memory: { agent_profile: string } }) => o.memory.agent_profile).sort(), ['a1', 'a2']);
  const one = json<Record<string, any>>(tr(dir, ['consolidate', '--dry-run', '--agent-profile', 'a1', '--json']));
  assert.equal(one.candidate_count, 1);
});

test('evidence --operation-id: a retry returns the first memory, a different write under the id exits 2', () => {
  const dir = tempProject();
  const args = ['evidence', 'Snapshot invalidation fixed stale state.', '--outcome', 'promoted', '--evidence-ref', 'evals/run-42', '--project', 'ui', '--workflow-id', 'w1', '--operation-id', 'eval-42'];
  const first = json<{ id: string; operation_id: string }>(tr(dir, [...args, '--json']));
  assert.equal(first.operation_id, 'eval-42');
  const retry = json<{ id: string }>(tr(dir, [...args, '--json']));
  assert.equal(retry.id, first.id);
  assert.equal(rows(dir, 'SELECT count(*) AS n FROM memories')[0]!.n, 1);
  const text = tr(dir, args);
  ok(text);
  assert.equal(text.stdout, `${first.id} [heartwood] Snapshot invalidation fixed stale state. evidence=evals/run-42\n`);
  const conflict = [...args];
  conflict[1] = 'A different result.';
  const r = tr(dir, conflict);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '');
  assert.equal(rows(dir, 'SELECT count(*) AS n FROM memories')[0]!.n, 1);
  // Another workflow is another namespace: the same operation id stores a new memory.
  const other = json<{ id: string }>(tr(dir, [...args.slice(0, -4), '--workflow-id', 'w2', '--operation-id', 'eval-42', '--json']));
  assert.notEqual(other.id, first.id);
});
