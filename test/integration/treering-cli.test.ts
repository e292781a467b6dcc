// The tree-ring commands as their clients (Claude Code / Codex / Agent Zero plugins, shell scripts)
// call them: the built CLI in a child process, real SQLite stores in temp dirs.

import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TREE_RING_VERSION } from '../../src/version.js';
import { agentscm, json } from '../support/cli.js';
import { allBytes, buildUpstreamStore, insertUpstreamRow, snapshot, tempProject, tr, upstreamRawJson } from '../support/treering.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/treering');
const EVENT_KEYS = [
  'id', 'created_at', 'updated_at', 'project', 'agent_profile', 'workflow_id', 'session_id', 'operation_id', 'scope', 'ring',
  'event_type', 'summary', 'details', 'source', 'tags', 'salience', 'confidence', 'sensitivity', 'retention', 'expires_at',
  'supersedes', 'superseded_by', 'links', 'review',
];

interface Ev {
  id: string;
  created_at: string;
  scope: string;
  ring: string;
  event_type: string;
  summary: string;
  project: string | null;
  agent_profile: string | null;
  workflow_id: string | null;
  session_id: string | null;
  sensitivity: string;
  retention: string;
  salience: number;
  confidence: number;
  tags: string[];
  source: { type: string; ref: string; quote: string };
  links: Array<{ type: string; target: string }>;
  review: { needs_review: boolean; review_reason: string | null };
}
type Hit = { memory: Ev; score: number; ranking: Record<string, number> };

function ok(r: { code: number; stderr: string; stdout: string }): void {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

/** The upstream error convention: exit 2, one line on stderr, nothing on stdout. */
function fails(r: { code: number; stderr: string; stdout: string }, pattern?: RegExp): void {
  assert.equal(r.code, 2, `expected exit 2, got ${r.code}: ${r.stdout} ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr.trimEnd().split('\n').length, 1, `one stderr line: ${r.stderr}`);
  if (pattern) assert.match(r.stderr, pattern);
}

function count(dir: string, sql = 'SELECT count(*) AS n FROM memories'): number {
  const db = new Database(path.join(dir, '.tree-ring', 'memory.sqlite'), { readonly: true });
  try {
    return (db.prepare(sql).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

function initProject(): string {
  const dir = tempProject();
  ok(tr(dir, ['init']));
  return dir;
}

test('tree-ring --version names the upstream CLI surface', () => {
  const r = tr(tempProject(), ['--version']);
  ok(r);
  assert.equal(r.stdout, `tree-ring ${TREE_RING_VERSION}\n`);
  assert.match(TREE_RING_VERSION, /^0\.15\.\d+$/);
  // `agentscm tree-ring X` is `tree-ring X`, --version and the hook's error line included.
  const via = agentscm(['tree-ring', '--version']);
  ok(via);
  assert.equal(via.stdout, r.stdout);
  const other = agentscm(['authority', '--version']);
  assert.equal(other.code, 2, other.stdout);
  const hook = agentscm(['tree-ring', 'integrations', 'hook', '--harness', 'bogus', '--input-json-stdin'], { input: '{}' });
  assert.equal(hook.code, 1);
  assert.match(hook.stderr, /^tree-ring: hook error: /);
  // A command line that does not parse keeps tree-ring's convention under agentscm too, --json or not.
  for (const args of [['recall', '--json'], ['recall', 'q', '--bogus', '--json'], ['bogus', '--json'], ['recall']]) {
    const direct = tr(tempProject(), args);
    fails(direct, /^error: /);
    const under = agentscm(['tree-ring', ...args]);
    fails(under, /^error: /);
  }
});

test('messages never echo secret-shaped input', () => {
  const dir = initProject();
  const secret = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
  const cases = [
    ['remember', 'a', secret, '--event-type', 'note'],
    ['remember', 'a', '--event-type', 'note', `--token=${secret}`],
    [secret],
    ['export', '--output', `/nonexistent/${secret}`],
    ['recall', 'x', secret],
    ['forget', 'x', '--mode', secret, '--reason', 'r'],
  ];
  for (const args of cases) {
    const r = tr(dir, args);
    fails(r);
    assert.ok(!r.stderr.includes(secret.slice(4)), `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /\[REDACTED\]/, args.join(' '));
  }
  const viaAgentscm = agentscm(['tree-ring', 'remember', 'a', secret, '--event-type', 'note']);
  assert.equal(viaAgentscm.code, 2);
  assert.ok(!viaAgentscm.stderr.includes(secret.slice(4)), viaAgentscm.stderr);
  for (const args of [['forget', secret, '--reason', 'r'], ['forget', secret, '--reason', 'r', '--json']]) {
    const r = tr(dir, args);
    ok(r);
    assert.ok(!r.stdout.includes(secret.slice(4)), r.stdout);
  }
});

test('recall refuses a scope or ring that does not exist (it would match nothing)', () => {
  const dir = initProject();
  fails(tr(dir, ['recall', 'x', '--scope', 'bogus']), /invalid scope/);
  fails(tr(dir, ['recall', 'x', '--ring', 'outer', '--ring', 'bogus']), /invalid ring/);
  ok(tr(dir, ['recall', 'x', '--scope', 'project', '--ring', 'outer']));
});

test('init creates a schema-3 store, the guidance files, and is repeatable', () => {
  const dir = tempProject();
  const r = tr(dir, ['--root', '.tree-ring', '--json', 'init']);
  ok(r);
  const doc = json<{ ok: boolean; root: string; sqlite_path: string; agent_awareness: { created: string[] } }>(r);
  assert.equal(doc.ok, true);
  assert.equal(doc.root, '.tree-ring');
  assert.equal(doc.agent_awareness.created.length, 3);
  const db = new Database(path.join(dir, '.tree-ring', 'memory.sqlite'), { readonly: true });
  assert.equal(db.pragma('user_version', { simple: true }), 3);
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  const names = (db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table','trigger')").all() as Array<{ name: string }>).map((x) => x.name);
  for (const t of ['memories', 'memory_fts', 'operation_claims', 'redaction_tombstones', 'consolidations', 'store_policy', 'authorization_audit']) assert.ok(names.includes(t), t);
  assert.equal(names.filter((n) => n.startsWith('memories_writer_protocol_')).length, 3);
  const cols = (db.prepare('PRAGMA table_info(memory_fts)').all() as Array<{ name: string }>).map((c) => c.name);
  assert.deepEqual(cols, ['id', 'summary', 'details', 'tags', 'source_ref']);
  db.close();
  fs.writeFileSync(path.join(dir, '.tree-ring', 'AGENTS.md'), 'project-owned text\n');
  const again = tr(dir, ['init', '--json']);
  ok(again);
  assert.deepEqual(json<{ agent_awareness: { existing: string[] } }>(again).agent_awareness.existing.length, 3);
  assert.equal(fs.readFileSync(path.join(dir, '.tree-ring', 'AGENTS.md'), 'utf8'), 'project-owned text\n');
});

test('a writing connection needs tree_ring_writer_protocol(); plain SQLite sessions are fenced off', () => {
  const dir = initProject();
  ok(tr(dir, ['remember', 'Fence check memory.', '--event-type', 'lesson']));
  const plain = new Database(path.join(dir, '.tree-ring', 'memory.sqlite'));
  assert.throws(() => plain.prepare('DELETE FROM memories').run(), /tree_ring_writer_protocol/);
  plain.function('tree_ring_writer_protocol', () => 2);
  assert.throws(() => plain.prepare('DELETE FROM memories').run(), /writer protocol 3 required/);
  plain.close();
  assert.equal(count(dir), 1);
});

test('remember prints the event in upstream field order; recall --json is a bare ranked array', () => {
  const dir = initProject();
  const r = tr(dir, ['remember', 'Use reversible database migrations.', '--event-type', 'decision', '--scope', 'project', '--project', 'shop', '--tag', 'db', '--json']);
  ok(r);
  const ev = json<Ev>(r);
  assert.deepEqual(Object.keys(ev), EVENT_KEYS);
  assert.match(ev.id, /^mem_\d{8}_\d{6}_[0-9a-f]{12}$/);
  assert.equal(r.stdout.includes('"salience":0.5'), true);
  ok(tr(dir, ['remember', 'Unrelated note about fonts.', '--event-type', 'lesson', '--project', 'shop']));
  // --root and --json after the subcommand, --limit above 100 accepted
  const hits = tr(dir, ['recall', 'database migrations', '--project', 'shop', '--limit', '100', '--json', '--root', '.tree-ring']);
  ok(hits);
  const arr = json<Hit[]>(hits);
  assert.ok(Array.isArray(arr));
  assert.equal(arr.length, 1);
  assert.equal(arr[0]!.memory.id, ev.id);
  assert.deepEqual(Object.keys(arr[0]!), ['memory', 'score', 'ranking']);
  assert.deepEqual(Object.keys(arr[0]!.ranking), ['confidence', 'recency', 'ring_boost', 'salience', 'source_authority', 'textual_match']);
  assert.equal(arr[0]!.ranking.textual_match, 1);
  const plain = tr(dir, ['recall', 'database migrations']);
  ok(plain);
  assert.match(plain.stdout, new RegExp(ev.id));
  fails(tr(dir, ['recall', 'x', '--limit', 'lots']), /--limit/);
  fails(tr(dir, ['remember', 'x']), /--event-type/);
});

test('recall: intent-word variants, OR fallback, ring boosts, and filters before the candidate limit', () => {
  const dir = initProject();
  const scar = json<Ev>(tr(dir, ['remember', 'Cache invalidation broke checkout totals.', '--event-type', 'warning', '--ring', 'scar', '--project', 'p', '--json']));
  ok(tr(dir, ['remember', 'Cache warmup speeds up checkout.', '--event-type', 'lesson', '--project', 'p']));
  // "failure" is not in any memory: the variant without it still finds both; the scar gets the boost.
  const hits = json<Hit[]>(tr(dir, ['recall', 'checkout cache failure', '--project', 'p', '--json']));
  assert.equal(hits.length, 2);
  assert.equal(hits[0]!.memory.id, scar.id);
  assert.equal(hits[0]!.ranking.ring_boost, 0.2);
  // No memory has both words: the OR fallback still answers.
  const or = json<Hit[]>(tr(dir, ['recall', 'warmup totals', '--json']));
  assert.equal(or.length, 2);
  // Many decoys that would fill the candidate limit are filtered out in SQL first.
  const db = new Database(path.join(dir, '.tree-ring', 'memory.sqlite'));
  db.function('tree_ring_writer_protocol', () => 3);
  const seedRows = db.transaction(() => {
    for (let i = 0; i < 600; i++) {
      insertUpstreamRow(db, upstreamRawJson({ id: `mem_decoy_${i}`, created_at: '2026-01-01T00:00:00Z', project: 'other', scope: 'project', ring: 'cambium', event_type: 'lesson', summary: 'checkout cache checkout cache decoy', salience: '1.0', confidence: '1.0' }));
    }
  });
  seedRows();
  db.close();
  const filtered = json<Hit[]>(tr(dir, ['recall', 'checkout cache', '--project', 'p', '--limit', '1', '--json']));
  assert.equal(filtered.length, 1);
  assert.equal(filtered[0]!.memory.project, 'p');
  const rings = json<Hit[]>(tr(dir, ['recall', 'checkout cache', '--ring', 'scar', '--ring', 'heartwood', '--json']));
  assert.deepEqual(rings.map((h) => h.memory.id), [scar.id]);
});

test('secret-like content is refused: exit 2, one line, nothing written, nothing echoed', () => {
  const dir = tempProject();
  const secrets = [
    'sk-proj-abcdefghijklmnopqrstuvwxyz1234567890',
    'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
    'AKIAABCDEFGHIJKLMNOP',
    'Authorization: Bearer abcdefghijklmnopqrstuvwxyz.0123456789',
    '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----',
    'DATABASE_PASSWORD=hunter2hunter2',
    `trcap_v1_${'ab'.repeat(32)}`,
  ];
  for (const s of secrets) {
    const r = tr(dir, ['remember', `Remember this: ${s}`, '--event-type', 'lesson']);
    fails(r, /secret-like memory is blocked/);
    assert.ok(!r.stderr.includes(s));
    // The guard covers every field, not only the summary.
    fails(tr(dir, ['remember', 'harmless', '--event-type', 'lesson', '--tag', s]), /blocked/);
    fails(tr(dir, ['remember', 'harmless', '--event-type', 'lesson', '--project', s]), /blocked/);
  }
  assert.equal(fs.existsSync(path.join(dir, '.tree-ring')), false, 'a refused write creates no store');
  ok(tr(dir, ['init']));
  fails(tr(dir, ['evidence', 'run passed', '--evidence-ref', 'PASSWORD=abc123456', '--outcome', 'promoted']), /blocked/);
  fails(tr(dir, ['capture', secrets[0]!, '--event-type', 'lesson', '--ring', 'cambium', '--project', 'p', '--agent-profile', 'a', '--workflow-id', 'w', '--session-id', 's', '--operation-id', 'o', '--source-ref', 'agent-checkpoint:c']), /blocked/);
  assert.equal(count(dir), 0);
});

test('sensitive words reclassify a memory; default recall hides it, --include-sensitive shows it', () => {
  const dir = initProject();
  const ev = json<Ev>(tr(dir, ['remember', 'The user mentioned a medical diagnosis during setup.', '--event-type', 'lesson', '--json']));
  assert.equal(ev.sensitivity, 'health');
  assert.equal(json<Ev>(tr(dir, ['remember', 'Quarterly salary review notes.', '--event-type', 'lesson', '--json'])).sensitivity, 'financial');
  assert.deepEqual(json<Hit[]>(tr(dir, ['recall', 'diagnosis setup', '--json'])), []);
  assert.equal(json<Hit[]>(tr(dir, ['recall', 'diagnosis setup', '--include-sensitive', '--json'])).length, 1);
});

test('validation: private scopes need identity; identity fields bounded and control-free; scores in [0,1]', () => {
  const dir = initProject();
  fails(tr(dir, ['remember', 'x', '--event-type', 'lesson', '--scope', 'agent']), /scope agent requires agent_profile/);
  fails(tr(dir, ['remember', 'x', '--event-type', 'lesson', '--scope', 'workflow']), /workflow_id/);
  fails(tr(dir, ['remember', 'x', '--event-type', 'lesson', '--scope', 'session']), /session_id/);
  fails(tr(dir, ['remember', 'x', '--event-type', 'lesson', '--project', 'a\u0007b']), /control characters/);
  fails(tr(dir, ['remember', 'x', '--event-type', 'lesson', '--project', 'p'.repeat(257)]), /at most 256/);
  fails(tr(dir, ['remember', 'x', '--event-type', 'lesson', '--salience', '1.5']), /salience/);
  fails(tr(dir, ['remember', 'x', '--event-type', 'lesson', '--confidence', 'NaN']), /confidence/);
  fails(tr(dir, ['remember', 'x', '--event-type', 'lesson', '--ring', 'bark']), /invalid ring/);
  fails(tr(dir, ['remember', '  ', '--event-type', 'lesson']), /summary is required/);
  // Identity from the environment satisfies the private scope.
  const ev = json<Ev>(tr(dir, ['remember', 'Env identity note.', '--event-type', 'lesson', '--scope', 'session', '--json'], { TREE_RING_SESSION_ID: 's-1', TREE_RING_AGENT_PROFILE: 'worker' }));
  assert.equal(ev.session_id, 's-1');
  assert.equal(ev.agent_profile, 'worker');
  assert.equal(count(dir), 1);
});

test('--operation-id: a retry returns the same memory; another write under the id is refused', () => {
  const dir = initProject();
  const args = ['remember', 'Storage validation completed.', '--event-type', 'lesson', '--scope', 'agent', '--operation-id', 'op-1', '--source-ref', 'runs/1.json', '--json'];
  const env = { TREE_RING_AGENT_PROFILE: 'worker-a', TREE_RING_WORKFLOW_ID: 'wf' };
  const first = json<Ev>(tr(dir, args, env));
  const retry = json<Ev>(tr(dir, args, env));
  assert.equal(retry.id, first.id);
  assert.equal(count(dir), 1);
  fails(tr(dir, ['remember', 'Conflicting retry.', '--event-type', 'lesson', '--scope', 'agent', '--operation-id', 'op-1', '--source-ref', 'runs/1.json'], env), /operation_id op-1 is already bound to a different memory write/);
  // The same key in another agent's namespace is a different write.
  ok(tr(dir, args, { ...env, TREE_RING_AGENT_PROFILE: 'worker-b' }));
  assert.equal(count(dir), 2);
});

test('evidence maps outcomes to rings, event types, retention and provenance', () => {
  const dir = initProject();
  const cases: Array<[string, string, string, string]> = [
    ['promoted', 'heartwood', 'evaluation_promotion', 'durable'],
    ['rejected', 'scar', 'evaluation_rejection', 'durable'],
    ['deferred', 'seed', 'evaluation_hypothesis', 'normal'],
    ['observed', 'outer', 'evaluation_result', 'normal'],
  ];
  for (const [outcome, ring, type, retention] of cases) {
    const ev = json<Ev>(tr(dir, ['evidence', `Outcome ${outcome} for the cache change.`, '--outcome', outcome, '--evidence-ref', 'evals/run-42', '--score', '0.91', '--project', 'p', '--json']));
    assert.equal(ev.ring, ring);
    assert.equal(ev.event_type, type);
    assert.equal(ev.retention, retention);
    assert.equal(ev.scope, 'eval');
    assert.deepEqual(ev.source, { type: 'evidence', ref: 'evals/run-42', quote: '' });
    assert.ok(ev.tags.includes(`outcome:${outcome}`) && ev.tags.includes('improvement-loop'));
    assert.deepEqual(ev.links, [{ type: 'evidence', target: 'evals/run-42' }]);
    assert.equal(ev.confidence, 0.91);
  }
  fails(tr(dir, ['evidence', 'x', '--evidence-ref', 'r', '--score', '2']), /between 0 and 1/);
  fails(tr(dir, ['evidence', 'x', '--evidence-ref', 'r', '--outcome', 'maybe']), /outcome/);
});

test('capture: agent scope, approved pairs, normal sensitivity, all flags required, retry-safe', () => {
  const dir = initProject();
  const base = (summary: string, type: string, ring: string, op = 'auto-c1-1') => [
    'capture', summary, '--event-type', type, '--ring', ring, '--project', 'p', '--agent-profile', 'codex', '--workflow-id', 'thread-1',
    '--session-id', 'thread-1', '--operation-id', op, '--source-ref', 'agent-checkpoint:c1', '--json',
  ];
  const ev = json<Ev>(tr(dir, base('Run focused tests before the full suite.', 'lesson', 'cambium')));
  assert.equal(ev.scope, 'agent');
  assert.equal(ev.agent_profile, 'codex');
  assert.equal(ev.source.ref, 'agent-checkpoint:c1');
  assert.equal(json<Ev>(tr(dir, base('Run focused tests before the full suite.', 'lesson', 'cambium'))).id, ev.id);
  assert.equal(json<Ev>(tr(dir, base('Stale lockfile broke CI twice.', 'warning', 'scar', 'auto-c1-2'))).ring, 'scar');
  fails(tr(dir, base('Wrong ring.', 'lesson', 'heartwood', 'auto-c1-3')), /cambium/);
  fails(tr(dir, base('Unknown type.', 'rumor', 'cambium', 'auto-c1-3')), /event type/);
  fails(tr(dir, base('Patient diagnosis noted.', 'lesson', 'cambium', 'auto-c1-3')), /normal-sensitivity/);
  const noRef = base('x', 'lesson', 'cambium', 'auto-c1-3');
  noRef[noRef.indexOf('--source-ref') + 1] = 'runs/1';
  fails(tr(dir, noRef), /agent-checkpoint/);
  // No environment fallback for capture's identity flags.
  fails(tr(dir, ['capture', 'x', '--event-type', 'lesson', '--ring', 'cambium', '--project', 'p', '--workflow-id', 'w', '--session-id', 's', '--operation-id', 'o', '--source-ref', 'agent-checkpoint:c'], { TREE_RING_AGENT_PROFILE: 'codex' }), /--agent-profile/);
  assert.equal(count(dir), 2);
});

test('forget: delete removes everything; redact leaves a tombstoned placeholder whose id and operation cannot be reused', () => {
  const dir = initProject();
  const env = { TREE_RING_AGENT_PROFILE: 'w' };
  const a = json<Ev>(tr(dir, ['remember', 'Deploy keys live in the vault team folder.', '--event-type', 'lesson', '--project', 'p', '--operation-id', 'op-r', '--json'], env));
  const b = json<Ev>(tr(dir, ['remember', 'Temporary note to delete.', '--event-type', 'lesson', '--json']));
  fails(tr(dir, ['forget', a.id, '--mode', 'redact', '--reason', '  ']), /reason is required/);
  fails(tr(dir, ['forget', a.id, '--mode', 'shred', '--reason', 'x']), /--mode/);
  ok(tr(dir, ['forget', a.id, '--mode', 'redact', '--reason', 'remove detail']));
  assert.equal(count(dir, 'SELECT count(*) AS n FROM redaction_tombstones'), 1);
  const raw = (() => {
    const db = new Database(path.join(dir, '.tree-ring', 'memory.sqlite'), { readonly: true });
    const row = db.prepare('SELECT raw_json FROM memories WHERE id = ?').get(a.id) as { raw_json: string };
    db.close();
    return row.raw_json;
  })();
  assert.ok(!raw.includes('vault') && raw.includes('[REDACTED]') && !raw.includes('"p"'));
  assert.deepEqual(json<Hit[]>(tr(dir, ['recall', 'vault deploy keys', '--include-sensitive', '--json'])), []);
  // A retry of the redacted write cannot bring the payload back.
  fails(tr(dir, ['remember', 'Deploy keys live in the vault team folder.', '--event-type', 'lesson', '--project', 'p', '--operation-id', 'op-r'], env), /operation_id/);
  // Import cannot overwrite a tombstoned id with content.
  const line = JSON.stringify({ id: a.id, created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', event_type: 'lesson', summary: 'resurrected' });
  fs.writeFileSync(path.join(dir, 'back.jsonl'), `${line}\n`);
  fails(tr(dir, ['import', 'back.jsonl', '--replace-existing']), /redacted/);
  ok(tr(dir, ['forget', b.id, '--reason', 'cleanup']));
  const gone = json<{ changed: boolean }>(tr(dir, ['forget', b.id, '--reason', 'again', '--json']));
  assert.equal(gone.changed, false);
  ok(tr(dir, ['forget', a.id, '--mode', 'delete', '--reason', 'hard delete releases the id']));
  assert.equal(count(dir), 0);
  assert.equal(count(dir, 'SELECT count(*) AS n FROM redaction_tombstones'), 0);
  assert.equal(count(dir, 'SELECT count(*) AS n FROM operation_claims'), 0);
  fails(tr(tempProject(), ['forget', a.id, '--reason', 'x']), /no Tree Ring store/);
});

test('export and import round-trip; dry run writes nothing; duplicates skipped or replaced', () => {
  const src = initProject();
  ok(tr(src, ['remember', 'Exported decision about queues.', '--event-type', 'decision', '--scope', 'project', '--project', 'p']));
  ok(tr(src, ['remember', 'Sensitive: a lawsuit was mentioned.', '--event-type', 'lesson']));
  const out = tr(src, ['export']);
  ok(out);
  const lines = out.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(Object.keys(lines[0]!), ['type', 'schema_version', 'plugin_version', 'created_at', 'memory_count', 'sensitive_included']);
  assert.equal(lines[0]!.type, 'tree_ring_memory_export');
  assert.equal(lines[0]!.memory_count, 1);
  assert.equal(lines[1]!.type, 'memory_event');
  const file = tr(src, ['export', '--output', 'all.jsonl', '--include-sensitive', '--json']);
  ok(file);
  assert.equal(json<{ memory_count: number }>(file).memory_count, 2);
  const dst = tempProject();
  fs.copyFileSync(path.join(src, 'all.jsonl'), path.join(dst, 'all.jsonl'));
  const dry = tr(dst, ['import', 'all.jsonl', '--dry-run', '--json']);
  ok(dry);
  assert.equal(json<{ valid_count: number; dry_run: boolean }>(dry).valid_count, 2);
  assert.equal(fs.existsSync(path.join(dst, '.tree-ring')), false);
  const imp = json<{ inserted_count: number }>(tr(dst, ['import', 'all.jsonl', '--json']));
  assert.equal(imp.inserted_count, 2);
  assert.equal(json<{ skipped_duplicate_count: number }>(tr(dst, ['import', 'all.jsonl', '--json'])).skipped_duplicate_count, 2);
  assert.equal(json<{ replaced_count: number }>(tr(dst, ['import', 'all.jsonl', '--replace-existing', '--json'])).replaced_count, 2);
  assert.equal(json<Hit[]>(tr(dst, ['recall', 'queues', '--json'])).length, 1);
  // "-" is stdin, as the help says, wherever it stands.
  const stdin = tempProject();
  const piped = tr(stdin, ['import', '-', '--json'], {}, { input: fs.readFileSync(path.join(src, 'all.jsonl')) });
  ok(piped);
  assert.equal(json<{ inserted_count: number }>(piped).inserted_count, 2);
  assert.equal(json<{ skipped_duplicate_count: number }>(tr(stdin, ['--root', '.tree-ring', 'import', '-', '--json'], {}, { input: fs.readFileSync(path.join(src, 'all.jsonl')) })).skipped_duplicate_count, 2);
  // One bad line: nothing is written.
  fs.writeFileSync(path.join(dst, 'bad.jsonl'), `${JSON.stringify({ id: 'mem_ok_1', created_at: 'x', updated_at: 'x', event_type: 'lesson', summary: 'fine' })}\n{"id":"mem_bad","summary":"token ghp_abcdefghijklmnopqrstuvwxyz0123456789","event_type":"lesson","created_at":"x","updated_at":"x"}\n`);
  fails(tr(dst, ['import', 'bad.jsonl']), /blocked/);
  fs.writeFileSync(path.join(dst, 'dup.jsonl'), '{"id":"a","id":"b"}\n');
  fails(tr(dst, ['import', 'dup.jsonl']), /line 1/);
  assert.equal(count(dst), 2);
});

test('import of a legacy (0.11) export: private scopes get a synthetic identity and a review flag', () => {
  const dir = initProject();
  fs.copyFileSync(path.join(FIXTURES, 'legacy-export-0.11.jsonl'), path.join(dir, 'legacy.jsonl'));
  const r = json<{ valid_count: number; inserted_count: number }>(tr(dir, ['import', 'legacy.jsonl', '--json']));
  assert.equal(r.valid_count, 4);
  assert.equal(r.inserted_count, 4);
  const agent = json<Hit[]>(tr(dir, ['recall', 'flaky release tests', '--scope', 'agent', '--json']));
  assert.equal(agent.length, 1);
  assert.match(agent[0]!.memory.agent_profile!, /^legacy-agent-[0-9a-f]{32}$/);
  assert.equal(agent[0]!.memory.review.needs_review, true);
  assert.match(agent[0]!.memory.review.review_reason!, /legacy private-scope identity/);
  const wf = json<Hit[]>(tr(dir, ['recall', 'release branches', '--json']));
  assert.match(wf[0]!.memory.workflow_id!, /^legacy-workflow-[0-9a-f]{32}$/);
  // Defaults of absent fields, and a bare (envelope-less) line with a naive timestamp.
  const scar = json<Hit[]>(tr(dir, ['recall', 'stale tags release script', '--project', 'legacy-app', '--json']));
  assert.equal(scar[0]!.memory.ring, 'scar');
  assert.equal(scar[0]!.memory.source.ref, 'scripts/release.sh');
  assert.equal(scar[0]!.ranking.ring_boost, 0.2);
  const heart = json<Hit[]>(tr(dir, ['recall', 'changelog release notes', '--json']));
  assert.equal(heart[0]!.memory.retention, 'normal');
  assert.deepEqual(heart[0]!.memory.links, []);
});

test('a store built with the upstream DDL opens and recalls; ours has the same tables and indexes', () => {
  const dir = tempProject();
  const root = path.join(dir, '.tree-ring');
  const db = buildUpstreamStore(root);
  insertUpstreamRow(db, upstreamRawJson({ id: 'mem_20260101_000000_aaaaaaaaaaaa', created_at: '2026-01-01T00:00:00.123456Z', project: 'shop', scope: 'project', ring: 'heartwood', event_type: 'decision', summary: 'Payments retries use idempotency keys.', tags: ['payments'], salience: '1.0', confidence: '0.9' }));
  insertUpstreamRow(db, upstreamRawJson({ id: 'mem_20260101_000001_bbbbbbbbbbbb', created_at: '2026-01-01T00:00:01Z', project: 'shop', agent_profile: 'codex', workflow_id: 'w1', session_id: 's1', operation_id: 'op-up', scope: 'agent', ring: 'cambium', event_type: 'lesson', summary: 'Payments sandbox needs the test clock.', salience: '0.5', confidence: '0.5' }));
  db.close();
  const before = snapshot(root);
  const hits = json<Hit[]>(tr(dir, ['recall', 'payments', '--project', 'shop', '--json']));
  assert.equal(hits.length, 2);
  assert.equal(hits[0]!.memory.salience, 1);
  assert.equal(hits[0]!.memory.created_at, '2026-01-01T00:00:00.123456Z');
  assert.deepEqual(snapshot(root), before, 'recall leaves an upstream store byte-for-byte unchanged');
  // A retry of the upstream-written operation is recognised by our writer.
  const retry = json<Ev>(tr(dir, ['remember', 'Payments sandbox needs the test clock.', '--event-type', 'lesson', '--scope', 'agent', '--project', 'shop', '--agent-profile', 'codex', '--workflow-id', 'w1', '--session-id', 's1', '--operation-id', 'op-up', '--json']));
  assert.equal(retry.id, 'mem_20260101_000001_bbbbbbbbbbbb');
  // Schema equivalence: every upstream table and index exists here with the same columns, and the only
  // other object is our own covering index of the startup brief (named agentscm_*; store/schema.ts).
  const ours = tempProject();
  ok(tr(ours, ['init']));
  const oursFile = path.join(ours, '.tree-ring', 'memory.sqlite');
  const own = new Database(oursFile, { readonly: true });
  assert.deepEqual(own.prepare("SELECT type, name, tbl_name FROM sqlite_master WHERE name GLOB 'agentscm_*'").all(), [
    { type: 'index', name: 'agentscm_memories_session_brief', tbl_name: 'memories' },
  ]);
  own.close();
  const shape = (file: string) => {
    const d = new Database(file, { readonly: true });
    const objs = d.prepare("SELECT type, name, tbl_name FROM sqlite_master WHERE type IN ('table','index') AND name NOT LIKE 'sqlite_%' AND name NOT GLOB 'agentscm_*' ORDER BY name").all() as Array<{ name: string }>;
    const cols = Object.fromEntries(objs.map((o) => [o.name, (d.prepare(`PRAGMA index_xinfo("${o.name}")`).all().length ? d.prepare(`PRAGMA index_xinfo("${o.name}")`).all() : d.prepare(`PRAGMA table_xinfo("${o.name}")`).all()).map((c) => JSON.stringify(c))]));
    const v = d.pragma('user_version', { simple: true });
    d.close();
    return { objs, cols, v };
  };
  assert.deepEqual(shape(oursFile), shape(path.join(root, 'memory.sqlite')));
});

test('a pre-0.12 store (schema before version 3) is migrated: new columns, legacy identities, tombstones', () => {
  const dir = tempProject();
  const root = path.join(dir, '.tree-ring');
  fs.mkdirSync(root);
  const db = new Database(path.join(root, 'memory.sqlite'));
  db.exec(`CREATE TABLE memories (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, project TEXT, agent_profile TEXT, scope TEXT NOT NULL,
    ring TEXT NOT NULL, event_type TEXT NOT NULL, summary TEXT NOT NULL, details TEXT NOT NULL, source_json TEXT NOT NULL, tags_json TEXT NOT NULL,
    salience REAL NOT NULL, confidence REAL NOT NULL, sensitivity TEXT NOT NULL, retention TEXT NOT NULL, expires_at TEXT, supersedes_json TEXT NOT NULL,
    superseded_by TEXT, links_json TEXT NOT NULL, review_json TEXT NOT NULL, raw_json TEXT NOT NULL);
    CREATE VIRTUAL TABLE memory_fts USING fts5(id UNINDEXED, summary, details, tags, source_ref);`);
  const legacy = (id: string, scope: string, summary: string) => {
    const raw = JSON.stringify({ id, created_at: '2025-06-01T00:00:00Z', updated_at: '2025-06-01T00:00:00Z', project: 'old', agent_profile: null, scope, ring: 'cambium', event_type: 'lesson', summary, details: '', source: { type: 'manual', ref: '', quote: '' }, tags: [], salience: 0.5, confidence: 0.5, sensitivity: summary === '[REDACTED]' ? 'private' : 'normal', retention: 'normal', expires_at: null, supersedes: [], superseded_by: null, links: [], review: { needs_review: false, review_reason: null, reviewed_at: null, reviewed_by: null } });
    db.prepare('INSERT INTO memories VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, NULL, ?, ?, ?)').run(id, '2025-06-01T00:00:00Z', '2025-06-01T00:00:00Z', 'old', scope, 'cambium', 'lesson', summary, '', '{}', '[]', 0.5, 0.5, summary === '[REDACTED]' ? 'private' : 'normal', 'normal', '[]', '[]', '{}', raw);
    db.prepare('INSERT INTO memory_fts VALUES (?, ?, ?, ?, ?)').run(id, summary, '', '', '');
  };
  legacy('mem_old_agent', 'agent', 'Old agent memory about migrations.');
  legacy('mem_old_redacted', 'manual', '[REDACTED]');
  db.close();
  const hits = json<Hit[]>(tr(dir, ['recall', 'migrations', '--json']));
  assert.equal(hits.length, 1);
  assert.match(hits[0]!.memory.agent_profile!, /^legacy-agent-/);
  const after = new Database(path.join(root, 'memory.sqlite'), { readonly: true });
  assert.equal(after.pragma('user_version', { simple: true }), 3);
  assert.equal((after.prepare('SELECT agent_profile FROM memories WHERE id = ?').get('mem_old_agent') as { agent_profile: string }).agent_profile, hits[0]!.memory.agent_profile);
  assert.equal((after.prepare('SELECT count(*) AS n FROM redaction_tombstones').get() as { n: number }).n, 1);
  after.close();
});

test('a newer schema version is refused by every command, and left alone', () => {
  const dir = initProject();
  const file = path.join(dir, '.tree-ring', 'memory.sqlite');
  const db = new Database(file);
  db.pragma('user_version = 4');
  db.close();
  const before = snapshot(path.join(dir, '.tree-ring'));
  for (const args of [['recall', 'x'], ['remember', 'x', '--event-type', 'lesson'], ['policy', 'status'], ['export'], ['init']]) {
    fails(tr(dir, args), /unsupported SQLite schema version 4/);
  }
  assert.deepEqual(snapshot(path.join(dir, '.tree-ring')), before);
});

test('read-only commands never create a store and leave an existing one byte-for-byte unchanged', () => {
  const dir = tempProject();
  const missing = path.join(dir, 'missing-store');
  fails(tr(dir, ['--root', missing, 'policy', 'status']), /no Tree Ring store/);
  fails(tr(dir, ['--root', missing, 'policy', 'audit', '--limit', '100']));
  fails(tr(dir, ['--root', missing, 'recall', 'anything']));
  fails(tr(dir, ['--root', missing, 'export']));
  assert.equal(fs.existsSync(missing), false);
  // A foreign schema-2 database is neither migrated nor given sidecars.
  const legacyRoot = path.join(dir, 'legacy-v2');
  fs.mkdirSync(legacyRoot);
  const l = new Database(path.join(legacyRoot, 'memory.sqlite'));
  l.exec("CREATE TABLE sentinel (value TEXT NOT NULL); INSERT INTO sentinel VALUES ('unchanged'); PRAGMA user_version = 2;");
  l.close();
  const legacyBefore = snapshot(legacyRoot);
  tr(dir, ['--root', legacyRoot, 'policy', 'status']);
  tr(dir, ['--root', legacyRoot, 'policy', 'audit', '--limit', '100']);
  assert.deepEqual(snapshot(legacyRoot), legacyBefore);
  // A current store: inspection leaves every file as it was.
  ok(tr(dir, ['init']));
  ok(tr(dir, ['remember', 'Snapshot me.', '--event-type', 'lesson']));
  const root = path.join(dir, '.tree-ring');
  const before = snapshot(root);
  ok(tr(dir, ['policy', 'status']));
  ok(tr(dir, ['policy', 'audit', '--limit', '100']));
  ok(tr(dir, ['recall', 'snapshot']));
  ok(tr(dir, ['export']));
  assert.deepEqual(snapshot(root), before);
});

test('a write waits out another writer\'s lock instead of failing', async () => {
  const dir = initProject();
  const holder = new Database(path.join(dir, '.tree-ring', 'memory.sqlite'));
  holder.function('tree_ring_writer_protocol', () => 3);
  holder.exec('BEGIN IMMEDIATE');
  const { spawn } = await import('node:child_process');
  const { TREE_RING_BIN } = await import('../support/cli.js');
  const child = spawn(process.execPath, [TREE_RING_BIN, 'remember', 'Written after the lock is released.', '--event-type', 'lesson'], { cwd: dir });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(count(dir), 0);
  holder.exec('COMMIT');
  holder.close();
  const code = await new Promise<number>((r) => child.on('close', (c) => r(c ?? -1)));
  assert.equal(code, 0);
  assert.match(out, /^mem_/);
  assert.equal(count(dir), 1);
});

test('coordinated mode: worker retries, worker refused for shared scope, coordinator allowed, capability never shown again', () => {
  const dir = tempProject();
  const root = path.join(dir, 'coordinated', '.tree-ring');
  const outputs: string[] = [];
  const run = (args: string[], env: Record<string, string | undefined> = {}) => {
    const r = tr(dir, ['--root', root, ...args], env);
    outputs.push(r.stdout, r.stderr);
    return r;
  };
  ok(run(['init']));
  const grantRun = tr(dir, ['--root', root, '--json', 'policy', 'enable', '--coordinator', 'smoke-coordinator']);
  ok(grantRun);
  const grant = json<{ capability: string; status: { mode: string; coordinator_label: string } }>(grantRun);
  const cap = grant.capability;
  assert.match(cap, /^trcap_v1_[0-9a-f]{64}$/);
  assert.equal(grant.status.mode, 'coordinated');
  assert.equal(grant.status.coordinator_label, 'smoke-coordinator');
  fails(run(['policy', 'enable']), /already enabled/);

  const worker = { TREE_RING_AGENT_PROFILE: 'worker-storage', TREE_RING_WORKFLOW_ID: 'release-smoke', TREE_RING_SESSION_ID: 'attempt-1' };
  const write = ['--json', 'remember', 'Storage validation completed.', '--event-type', 'lesson', '--scope', 'agent', '--operation-id', 'validate-storage-v1', '--source-ref', 'runs/release-smoke/worker-storage.json'];
  const first = run(write, worker);
  ok(first);
  const retry = run(write, worker);
  ok(retry);
  assert.equal(json<Ev>(retry).id, json<Ev>(first).id);
  fails(run(['remember', 'Conflicting retry.', '--event-type', 'lesson', '--scope', 'agent', '--operation-id', 'validate-storage-v1', '--source-ref', 'runs/x.json'], worker));
  fails(run(['remember', 'Unauthorized shared result.', '--event-type', 'lesson', '--scope', 'project', '--operation-id', 'worker-shared-v1'], worker), /authorization denied/);
  fails(run(['remember', 'Worker heartwood.', '--event-type', 'lesson', '--scope', 'agent', '--ring', 'heartwood'], worker), /authorization denied/);
  fails(run(['remember', 'Posing as another worker.', '--event-type', 'lesson', '--scope', 'agent', '--agent-profile', 'other'], worker), /authorization denied/);
  fails(run(['evidence', 'Eval passed.', '--evidence-ref', 'evals/1'], worker), /authorization denied/);
  fails(run(['forget', json<Ev>(first).id, '--reason', 'x'], worker), /authorization denied/);
  fails(run(['remember', 'Wrong capability.', '--event-type', 'lesson', '--scope', 'project'], { ...worker, TREE_RING_COORDINATOR_TOKEN: `trcap_v1_${'0'.repeat(64)}` }), /authorization denied/);
  const fanIn = run(['--json', 'recall', 'storage validation', '--scope', 'agent'], { TREE_RING_WORKFLOW_ID: 'release-smoke', TREE_RING_SESSION_ID: 'attempt-1' });
  ok(fanIn);
  assert.equal(json<Hit[]>(fanIn).length, 1);

  const coordinator = { TREE_RING_COORDINATOR_TOKEN: cap, TREE_RING_AGENT_PROFILE: 'coordinator', TREE_RING_WORKFLOW_ID: 'release-smoke', TREE_RING_SESSION_ID: 'attempt-1' };
  ok(run(['remember', 'Coordinator-approved shared result.', '--event-type', 'lesson', '--scope', 'project', '--operation-id', 'coordinator-shared-v1', '--source-ref', 'runs/release-smoke/coordinator.json'], coordinator));
  const status = run(['--json', 'policy', 'status']);
  ok(status);
  assert.deepEqual(Object.keys(json(status)), ['mode', 'coordinator_label', 'enabled_at', 'updated_at']);
  const audit = run(['policy', 'audit', '--limit', '100', '--json']);
  ok(audit);
  const events = json<Array<{ action: string; decision: string; reason: string; actor_profile: string }>>(audit);
  assert.ok(events.some((e) => e.decision === 'denied' && e.reason === 'missing_coordinator_capability' && e.actor_profile === 'worker-storage'));
  assert.ok(events.some((e) => e.decision === 'denied' && e.reason === 'invalid_coordinator_capability'));
  assert.ok(events.some((e) => e.decision === 'allowed' && e.reason === 'valid_coordinator_capability' && e.action === 'remember'));
  ok(run(['policy', 'audit']));
  ok(run(['policy', 'status']));

  // The capability appears in no output but enable's, and in no file of the store.
  for (const o of outputs) assert.ok(!o.includes(cap), 'capability leaked into an output');
  assert.equal(allBytes(path.dirname(root)).includes(Buffer.from(cap)), false, 'capability stored in a file');
  assert.equal(allBytes(path.dirname(root)).includes(Buffer.from(cap.slice(9))), false);

  // Rotation invalidates the old capability; disable needs the new one.
  const rotated = json<{ capability: string }>(tr(dir, ['--root', root, '--json', 'policy', 'rotate'], { TREE_RING_COORDINATOR_TOKEN: cap }));
  assert.notEqual(rotated.capability, cap);
  fails(run(['policy', 'disable'], { TREE_RING_COORDINATOR_TOKEN: cap }), /authorization denied/);
  const disabled = run(['--json', 'policy', 'disable'], { TREE_RING_COORDINATOR_TOKEN: rotated.capability });
  ok(disabled);
  assert.equal(json<{ mode: string }>(disabled).mode, 'open');
  ok(run(['remember', 'Open mode again.', '--event-type', 'lesson', '--scope', 'project']));
  assert.equal(allBytes(path.dirname(root)).includes(Buffer.from(rotated.capability)), false);
});
