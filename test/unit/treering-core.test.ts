// In-process Tree Ring pieces: the session-brief API other parts use (scoping before the candidate
// limit), the recall query builder, the scorer, the sensitivity guard and the event serialization.

import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { openTreeRingReadOnly, recallSessionBrief } from '../../src/core/treering/index.js';
import { eventFromRawJson, eventToJson, formatF64, newEvent, type MemoryEvent } from '../../src/core/treering/model.js';
import { ftsQuery, scoreMemory, searchQueries, sessionBriefSql, terms } from '../../src/core/treering/recall.js';
import { CATEGORY_PATTERNS, classifyText, detectTextSensitivity, SECRET_PATTERNS } from '../../src/core/treering/sensitivity.js';
import { openWritable, writeTransaction } from '../../src/core/treering/store/schema.js';
import { putInTransaction, redactInTransaction } from '../../src/core/treering/store/write.js';
import { tempProject } from '../support/treering.js';

function memory(id: string, scope: string, patch: Partial<MemoryEvent> = {}): MemoryEvent {
  const e = newEvent('Use reversible database migrations', 'lesson');
  Object.assign(e, { id, project: 'project', scope, agent_profile: 'codex', workflow_id: 'old-workflow', session_id: 'old-session' }, patch);
  return e;
}

const SCOPE = { project: 'project', projectAlias: 'project-alias', agentProfile: 'codex', workflowId: 'new-workflow', sessionId: 'new-session' };

function store(events: MemoryEvent[], after?: (db: ReturnType<typeof openWritable>) => void): string {
  const root = path.join(tempProject(), '.tree-ring');
  const db = openWritable(root);
  writeTransaction(db, () => {
    for (const e of events) putInTransaction(db, e);
    after?.(db);
  });
  db.close();
  return root;
}

test('recallSessionBrief: shared scopes for the project, own agent, matching workflow/session only', () => {
  const events: MemoryEvent[] = [];
  for (const s of ['project', 'global', 'manual', 'dox', 'revolve', 'tool', 'eval']) events.push(memory(s, s, { agent_profile: 'other-agent' }));
  events.push(memory('durable-agent', 'agent'), memory('old-workflow', 'workflow'), memory('old-session', 'session'));
  events.push(memory('other-agent', 'agent', { agent_profile: 'other-agent' }));
  events.push(memory('current-workflow', 'workflow', { workflow_id: 'new-workflow', agent_profile: 'peer-worker' }));
  events.push(memory('current-session', 'session', { session_id: 'new-session' }));
  events.push(memory('safe-project-alias', 'agent', { project: 'project-alias' }));
  events.push(memory('no-project', 'global', { project: null }), memory('elsewhere', 'project', { project: 'other-project' }));
  const reader = openTreeRingReadOnly(store(events));
  try {
    const expected = ['current-session', 'current-workflow', 'dox', 'durable-agent', 'eval', 'global', 'manual', 'project', 'revolve', 'safe-project-alias', 'tool'];
    for (const taskHint of [undefined, 'database migrations']) {
      const ids = recallSessionBrief(reader, SCOPE, { taskHint, limit: 20 }).map((m) => m.id).sort();
      assert.deepEqual(ids, expected, `hint ${taskHint}`);
    }
  } finally {
    reader.close();
  }
});

test('recallSessionBrief: hidden memories cannot starve the brief before its candidate limit', () => {
  const events = [memory('visible', 'agent')];
  for (let i = 0; i < 300; i++) {
    const patch: Partial<MemoryEvent> = { salience: 1 };
    switch (i % 6) {
      case 0: patch.project = 'other-project'; break;
      case 1: patch.agent_profile = 'other-agent'; break;
      case 2: patch.sensitivity = 'health'; break;
      case 3: patch.expires_at = '2000-01-01T00:00:00Z'; break;
      case 4: patch.superseded_by = 'visible'; break;
      default: patch.scope = 'global'; patch.project = null;
    }
    events.push(memory(`hidden-${i}`, 'agent', patch));
  }
  events.push(memory('redacted-one', 'agent', { salience: 1 }));
  const root = store(events, (db) => redactInTransaction(db, 'redacted-one'));
  const reader = openTreeRingReadOnly(root);
  try {
    for (const taskHint of [undefined, 'database migrations']) {
      const brief = recallSessionBrief(reader, SCOPE, { taskHint, limit: 1 });
      assert.deepEqual(brief.map((m) => m.id), ['visible']);
      assert.equal(brief[0]!.summary, 'Use reversible database migrations');
    }
  } finally {
    reader.close();
  }
});

test('recallSessionBrief: the no-hint brief prefers scars, then heartwood; a hint with no match is empty', () => {
  const root = store([memory('a-recent', 'project'), memory('z-scar', 'project', { ring: 'scar' }), memory('y-heartwood', 'project', { ring: 'heartwood' })]);
  const reader = openTreeRingReadOnly(root);
  try {
    assert.deepEqual(recallSessionBrief(reader, SCOPE, { limit: 2 }).map((m) => m.id), ['z-scar', 'y-heartwood']);
    assert.deepEqual(recallSessionBrief(reader, SCOPE, { taskHint: 'nonexistent zebras', limit: 8 }), []);
  } finally {
    reader.close();
  }
});

test('recallSessionBrief: the startup brief shows exactly the stored events\' fields, read from their rows', () => {
  const withRef = (e: MemoryEvent, ref: string) => ((e.source = { ...e.source, ref }), e);
  const events = [
    withRef(memory('b-plain', 'project'), 'docs/MIGRATIONS.md'),
    withRef(memory('c-scar', 'project', { ring: 'scar', summary: 'Line one\u0007 and\ttwo' }), 'https://example.com/runbook'),
    withRef(memory('d-secret-ref', 'global', { ring: 'heartwood' }), 'notes/plain.md'),
    memory('e-agent', 'agent', { event_type: 'decision', salience: 0.9 }),
  ];
  const root = store(events);
  // A store written by another writer may hold a normal-sensitivity memory whose source reference is
  // not safe to show (ours classifies the reference at write time): the brief blanks it.
  const raw = new Database(path.join(root, 'memory.sqlite'));
  raw.function('tree_ring_writer_protocol', () => 3);
  const unsafe = 'notes from the lawsuit';
  const d = eventFromRawJson((raw.prepare("SELECT raw_json FROM memories WHERE id = 'd-secret-ref'").get() as { raw_json: string }).raw_json);
  d.source.ref = unsafe;
  raw.prepare("UPDATE memories SET source_json = json_set(source_json, '$.ref', ?), raw_json = ? WHERE id = 'd-secret-ref'").run(unsafe, eventToJson(d));
  raw.close();
  const reader = openTreeRingReadOnly(root);
  try {
    const brief = recallSessionBrief(reader, SCOPE, { limit: 8 });
    assert.deepEqual(brief.map((m) => m.id).sort(), ['b-plain', 'c-scar', 'd-secret-ref', 'e-agent']);
    assert.deepEqual(brief.slice(0, 2).map((m) => m.id), ['c-scar', 'd-secret-ref'], 'scar, then heartwood');
    for (const m of brief) {
      const row = reader.db.prepare('SELECT raw_json FROM memories WHERE id = ?').get(m.id) as { raw_json: string };
      const e = eventFromRawJson(row.raw_json);
      assert.equal(m.summary, e.summary.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim());
      assert.equal(m.ring, e.ring);
      assert.equal(m.scope, e.scope);
      assert.equal(m.event_type, e.event_type);
      assert.equal(m.source_ref, classifyText(e.source.ref) === 'normal' ? e.source.ref : '', m.id);
    }
    assert.equal(brief.find((m) => m.id === 'c-scar')!.summary, 'Line one  and two', 'control characters become spaces');
    assert.equal(classifyText(unsafe), 'legal');
    assert.equal(brief.find((m) => m.id === 'd-secret-ref')!.source_ref, '', 'an unsafe reference is blanked');
    assert.equal(brief.find((m) => m.id === 'b-plain')!.source_ref, 'docs/MIGRATIONS.md');
  } finally {
    reader.close();
  }
});

test('recallSessionBrief: the same brief from our covering index and from a store without it (upstream-made)', () => {
  const events: MemoryEvent[] = [];
  const rings = ['cambium', 'outer', 'inner', 'heartwood', 'scar', 'seed'];
  const scopes = ['project', 'global', 'agent', 'workflow', 'session', 'tool'];
  for (let i = 0; i < 600; i++) {
    // Deterministic variety, with ties in every sort key so that the id tie-break matters too.
    events.push(
      memory(`m-${String((i * 7919) % 600).padStart(3, '0')}`, scopes[i % 6]!, {
        ring: rings[(i * 5) % 6]!,
        salience: ((i * 37) % 5) / 4,
        confidence: ((i * 11) % 3) / 2,
        created_at: `2026-0${1 + (i % 9)}-01T00:00:00Z`,
        project: i % 10 === 0 ? 'other-project' : i % 13 === 0 ? 'project-alias' : 'project',
        agent_profile: i % 4 === 0 ? 'codex' : 'other-agent',
        workflow_id: i % 8 === 0 ? 'new-workflow' : 'old-workflow',
        session_id: i % 9 === 0 ? 'new-session' : 'old-session',
        sensitivity: i % 17 === 0 ? 'health' : 'normal',
        superseded_by: i % 19 === 0 ? 'm-000' : null,
        expires_at: i % 23 === 0 ? '2000-01-01T00:00:00Z' : null,
      }),
    );
  }
  const withIndex = store(events, (db) => redactInTransaction(db, 'm-042'));
  const withoutIndex = path.join(tempProject(), '.tree-ring');
  fs.mkdirSync(withoutIndex);
  fs.copyFileSync(path.join(withIndex, 'memory.sqlite'), path.join(withoutIndex, 'memory.sqlite'));
  const raw = new Database(path.join(withoutIndex, 'memory.sqlite'));
  raw.exec('DROP INDEX agentscm_memories_session_brief');
  raw.close();
  const plan = (root: string) => {
    const reader = openTreeRingReadOnly(root);
    try {
      const q = sessionBriefSql(SCOPE, 8);
      return (reader.db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.params) as Array<{ detail: string }>).map((r) => r.detail).join('\n');
    } finally {
      reader.close();
    }
  };
  assert.match(plan(withIndex), /USING COVERING INDEX agentscm_memories_session_brief/);
  assert.doesNotMatch(plan(withoutIndex), /agentscm_/);
  const brief = (root: string, limit: number) => {
    const reader = openTreeRingReadOnly(root);
    try {
      return recallSessionBrief(reader, SCOPE, { limit }).map((m) => [m.id, m.score]);
    } finally {
      reader.close();
    }
  };
  for (const limit of [1, 8, 20, 100]) {
    const a = brief(withIndex, limit);
    const b = brief(withoutIndex, limit);
    assert.ok(a.length > 0);
    // Ages come from SQLite's clock in whole seconds: the two reads may fall on either side of a second,
    // which moves every recency term by the same tiny factor. Same memories, same order, same scores to 1e-6.
    assert.deepEqual(a.map(([id]) => id), b.map(([id]) => id), `limit ${limit}`);
    a.forEach(([, score], i) => assert.ok(Math.abs((score as number) - (b[i]![1] as number)) < 1e-6, `limit ${limit}, rank ${i}`));
  }
});

test('sessionBriefSql: one ordered index walk per project name, the same candidates as one filter over both names', () => {
  const events: MemoryEvent[] = [];
  for (let i = 0; i < 400; i++) {
    events.push(
      memory(`n-${String(i).padStart(3, '0')}`, ['project', 'global', 'agent', 'session'][i % 4]!, {
        ring: ['cambium', 'scar', 'heartwood', 'outer'][(i * 3) % 4]!,
        salience: ((i * 13) % 7) / 6,
        confidence: ((i * 5) % 4) / 3,
        created_at: `2026-0${1 + (i % 9)}-0${1 + (i % 7)}T00:00:00Z`,
        project: i % 3 === 0 ? 'project-alias' : i % 11 === 0 ? 'other-project' : 'project',
        agent_profile: i % 2 === 0 ? 'codex' : 'other-agent',
        session_id: i % 5 === 0 ? 'new-session' : 'old-session',
        superseded_by: i % 17 === 0 ? 'n-000' : null,
      }),
    );
  }
  const root = store(events);
  const reader = openTreeRingReadOnly(root);
  try {
    // The reference: every visibility filter over both names at once, sorted whole (written out here).
    const reference = (scope: typeof SCOPE, cap: number) =>
      (
        reader.db
          .prepare(
            `SELECT m.id FROM memories m WHERE m.project IN (?, ?) AND m.sensitivity = 'normal' AND m.superseded_by IS NULL
               AND (m.expires_at IS NULL OR julianday(m.expires_at) > julianday('now'))
               AND NOT EXISTS (SELECT 1 FROM redaction_tombstones t WHERE t.memory_id = m.id)
               AND (m.scope IN ('global', 'project', 'tool', 'eval', 'manual', 'dox', 'revolve') OR (m.scope = 'agent' AND m.agent_profile = ?)
                 OR (m.scope = 'workflow' AND m.workflow_id = ?) OR (m.scope = 'session' AND m.session_id = ?))
             ORDER BY CASE m.ring WHEN 'scar' THEN 0 WHEN 'heartwood' THEN 1 ELSE 2 END, m.salience DESC, m.confidence DESC, m.created_at DESC, m.id LIMIT ?`,
          )
          .all(scope.project, scope.projectAlias, scope.agentProfile, scope.workflowId, scope.sessionId, cap) as { id: string }[]
      )
        .map((r) => r.id)
        .sort();
    for (const scope of [SCOPE, { ...SCOPE, projectAlias: SCOPE.project }]) {
      for (const limit of [1, 8, 40]) {
        const q = sessionBriefSql(scope, limit);
        const cap = q.params[q.params.length - 1] as number;
        const got = (reader.db.prepare(q.sql).all(...q.params) as { id: string }[]).map((r) => r.id).sort();
        assert.deepEqual(got, reference(scope, cap), `${scope.projectAlias}, limit ${limit}`);
        const plan = (reader.db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.params) as Array<{ detail: string }>).map((r) => r.detail).join('\n');
        // One name: the index walk is in order and stops at the cap, with no sort of every visible row.
        if (scope.projectAlias === scope.project) assert.doesNotMatch(plan, /TEMP B-TREE/, plan);
      }
    }
  } finally {
    reader.close();
  }
});

test('openTreeRingReadOnly never creates a store', () => {
  const root = path.join(tempProject(), '.tree-ring');
  assert.throws(() => openTreeRingReadOnly(root), (e: Error & { code?: string }) => e.code === 'NO_STORE');
});

test('query building: terms, filler words, quoting, intent-word variants', () => {
  assert.deepEqual(terms('Fix the Cache-Layer, ÉTAGE 2!'), ['fix', 'the', 'cache', 'layer', 'Étage', '2']);
  assert.equal(ftsQuery('what is the "cache" for'), '"cache"');
  assert.equal(ftsQuery('the a of'), undefined);
  assert.equal(ftsQuery('stale cache', 'OR'), '"stale" OR "cache"');
  assert.deepEqual(searchQueries('failure stale cache'), ['failure stale cache', 'stale cache', 'failure cache']);
});

test('scoring: weights and ring boosts', () => {
  const base = { summary: 'Avoid stale frontend cache.', details: '', tags: [], salience: 0.5, confidence: 0.5, created_at: new Date().toISOString(), ring: 'scar', sourceType: 'manual' };
  const s = scoreMemory(base, 'failure stale cache');
  assert.equal(s.ranking.ring_boost, 0.2);
  assert.ok(Math.abs(s.ranking.textual_match - 2 / 3) < 1e-12);
  assert.ok(Math.abs(s.score - (0.25 * (2 / 3) + 0.25 * 0.5 + 0.25 * 0.5 + 0.2 * s.ranking.recency + 0.05 * 0.4 + 0.2)) < 1e-12);
  assert.equal(scoreMemory({ ...base, ring: 'heartwood' }, 'rule for cache').ranking.ring_boost, 0.15);
  assert.equal(scoreMemory({ ...base, ring: 'seed' }, 'roadmap cache').ranking.ring_boost, 0.12);
  assert.equal(scoreMemory({ ...base, ring: 'cambium' }, 'failure').ranking.ring_boost, 0);
  const old = scoreMemory({ ...base, created_at: new Date(Date.now() - 30 * 86_400_000).toISOString() }, 'cache');
  assert.ok(Math.abs(old.ranking.recency - Math.exp(-1)) < 1e-3);
});

test('sensitivity: secrets, categories, and no false positive on ordinary text', () => {
  assert.equal(classifyText('password = hunter2'), 'secret');
  assert.equal(classifyText(`worker_trcap_v1_${'a'.repeat(64)}_suffix`), 'secret');
  assert.equal(classifyText('User mentioned a private diagnosis.'), 'health');
  assert.equal(classifyText('Check the passport scanner flow'), 'personal_identifier');
  assert.equal(classifyText('Use SQLite WAL mode for the token bucket limiter'), 'normal');
  assert.equal(detectTextSensitivity(['normal summary', 'a court order arrived', 'tag']), 'legal');
  assert.throws(() => detectTextSensitivity(['ok', 'AKIAABCDEFGHIJKLMNOP']), /blocked/);
});

test('serialization: upstream field order, serde-style floats, round trip through raw_json', () => {
  assert.equal(formatF64(1), '1.0');
  assert.equal(formatF64(0), '0.0');
  assert.equal(formatF64(0.91), '0.91');
  const e = newEvent('Round trip "quotes" and ünïcode', 'lesson');
  e.salience = 1;
  e.tags = ['a', 'b'];
  e.links = [{ type: 'evidence', target: 'evals/1' }];
  const raw = eventToJson(e);
  assert.match(raw, /"salience":1\.0,"confidence":0\.5,/);
  assert.deepEqual(eventFromRawJson(raw), e);
  assert.deepEqual(Object.keys(JSON.parse(raw) as object).slice(0, 9), ['id', 'created_at', 'updated_at', 'project', 'agent_profile', 'workflow_id', 'session_id', 'operation_id', 'scope']);
});

test('query terms: the ASCII fast path splits exactly as the Unicode word classes do', () => {
  const unicodeWords = /[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]+/gu;
  const ascii = Array.from({ length: 128 }, (_, i) => String.fromCharCode(i));
  const samples = [ascii.join(''), ascii.join(' '), ascii.map((c) => `a${c}b`).join(''), 'Fix the Cache-Layer 2x_y', ''];
  for (const s of samples) assert.deepEqual(terms(s), (s.match(unicodeWords) ?? []).map((t) => t.toLowerCase()), JSON.stringify(s));
});

test('sensitivity: skipping patterns by their needles never changes a classification', () => {
  const reference = (text: string) => {
    for (const p of SECRET_PATTERNS) if (p.re.test(text)) return 'secret';
    for (const p of CATEGORY_PATTERNS) if (p.re.test(text)) return p.name;
    return 'normal';
  };
  const samples = [
    'sk-proj-abcdefghijklmnopqrstuvwxyz012345', `trcap_v1_${'ab'.repeat(32)}`, 'ghp_abcdefghijklmnopqrstuvwxyz', 'GHP_abcdefghijklmnopqrstuvwxyz',
    'github_pat_abcdefghijklmnopqrstuvwxyz', 'AKIAABCDEFGHIJKLMNOP', 'akiaABCDEFGHIJKLMNOP', 'Authorization: BEARER abcdefghijklmnopqrstuvwxyz0123',
    '-----BEGIN RSA PRIVATE KEY-----\nMIIx\n-----END RSA PRIVATE KEY-----', 'db_password = "hunter2"', 'DATABASE_URL=postgres://x', 'Api-Key=abc', 'x = y',
    'Diagnosed last week', 'MEDICATION list', 'Bank Account 12', 'SALARY review', 'Court Order filed', 'SSN 123', "Driver's License", 'drivers license',
    'passport renewal', 'K\u212Aelvin bearer', '\u0130bank account', 'ſalary', 'medi\u0441al', 'Use reversible migrations', '', 'mem_20260101_000000_abcdef012345',
  ];
  const alphabet = 'abcdeghiklmnoprstuvwyABDEGHIKLMPRSTY_-=:/ .\'"\n\u0130\u212A\u017F';
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) % 1000) / 1000;
  const words = ['sk-', 'ghp_', 'github_pat_', 'AKIA', 'bearer ', 'Bearer ', 'TOKEN=', 'diagnos', 'medical', 'salary', 'ssn', 'passport', 'lawsuit', 'tax return'];
  for (let i = 0; i < 3000; i++) {
    let s = '';
    const n = 1 + Math.floor(rnd() * 12);
    for (let k = 0; k < n; k++) s += rnd() < 0.3 ? words[Math.floor(rnd() * words.length)] : alphabet[Math.floor(rnd() * alphabet.length)]!.repeat(1 + Math.floor(rnd() * 24));
    samples.push(s);
  }
  const seen = new Set<string>();
  for (const s of samples) {
    const want = reference(s);
    seen.add(want);
    assert.equal(classifyText(s), want, JSON.stringify(s));
  }
  assert.deepEqual([...seen].sort(), ['financial', 'health', 'legal', 'normal', 'personal_identifier', 'secret']);
});
