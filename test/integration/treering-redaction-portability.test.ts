// A redacted memory stays redacted through export and import. Export schema 1 has no tombstone field,
// so the placeholder carries it: import tombstones every id whose summary is `[REDACTED]` (migration's
// rule), and a tombstoned id then refuses content, in the same file or in a later import.

import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { json } from '../support/cli.js';
import { tempProject, tr } from '../support/treering.js';

type Ev = { id: string; summary: string; details: string; project: string | null; sensitivity: string; event_type: string };
type Hit = { memory: Ev };
type ImportReport = { valid_count: number; inserted_count: number; replaced_count: number; skipped_duplicate_count: number };

function ok(r: { code: number; stdout: string; stderr: string }): void {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

function refused(r: { code: number; stdout: string; stderr: string }, pattern: RegExp): void {
  assert.equal(r.code, 2, `expected exit 2, got ${r.code}: ${r.stdout} ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, pattern);
}

function query<T>(dir: string, sql: string, ...args: unknown[]): T[] {
  const db = new Database(path.join(dir, '.tree-ring', 'memory.sqlite'), { readonly: true });
  try {
    return db.prepare(sql).all(...args) as T[];
  } finally {
    db.close();
  }
}

const tombstoned = (dir: string, id: string): boolean => query(dir, 'SELECT 1 FROM redaction_tombstones WHERE memory_id = ?', id).length === 1;
const rawJson = (dir: string, id: string): string => query<{ raw_json: string }>(dir, 'SELECT raw_json FROM memories WHERE id = ?', id)[0]!.raw_json;
const memoryLines = (jsonl: string): string[] => jsonl.trim().split('\n').slice(1);

function copy(from: string, to: string, name: string): void {
  fs.copyFileSync(path.join(from, name), path.join(to, name));
}

/** A store with one memory exported live (before.jsonl), then redacted and exported again (after.jsonl). */
function redactedSource(): { src: string; id: string } {
  const src = tempProject();
  const live = json<Ev>(tr(src, ['--json', 'remember', 'The staging database lives on host orchid.', '--event-type', 'lesson', '--project', 'p', '--details', 'orchid is behind the bastion']));
  ok(tr(src, ['export', '--include-sensitive', '--output', 'before.jsonl']));
  ok(tr(src, ['forget', live.id, '--mode', 'redact', '--reason', 'remove detail']));
  ok(tr(src, ['export', '--include-sensitive', '--output', 'after.jsonl']));
  return { src, id: live.id };
}

test('export then import into a fresh store keeps a redacted memory tombstoned, and its content cannot come back', () => {
  const { src, id } = redactedSource();
  const dst = tempProject();
  copy(src, dst, 'after.jsonl');
  copy(src, dst, 'before.jsonl');
  assert.equal(json<ImportReport>(tr(dst, ['--json', 'import', 'after.jsonl'])).inserted_count, 1);
  assert.ok(tombstoned(dst, id), 'the imported redaction is tombstoned');
  // Recall leaves tombstoned memories out, as in the source store.
  for (const dir of [src, dst]) assert.deepEqual(json<Hit[]>(tr(dir, ['--json', 'recall', 'REDACTED', '--include-sensitive'])), []);
  assert.equal(tr(dst, ['recall', 'REDACTED', '--include-sensitive']).stdout, 'No memories matched.\n');
  // The placeholder travels unchanged: a second export carries the same memory line.
  assert.deepEqual(memoryLines(tr(dst, ['export', '--include-sensitive']).stdout), memoryLines(fs.readFileSync(path.join(src, 'after.jsonl'), 'utf8')));
  const placeholder = rawJson(dst, id);

  // The pre-redaction export cannot put the content back: refused with --replace-existing, skipped without.
  refused(tr(dst, ['import', 'before.jsonl', '--replace-existing']), /redacted/);
  assert.equal(json<ImportReport>(tr(dst, ['--json', 'import', 'before.jsonl'])).skipped_duplicate_count, 1);
  assert.equal(rawJson(dst, id), placeholder);
  assert.ok(tombstoned(dst, id));
  assert.deepEqual(json<Hit[]>(tr(dst, ['--json', 'recall', 'staging database orchid', '--include-sensitive'])), []);
});

test('a redaction imported with --replace-existing over a live copy replaces and tombstones it', () => {
  const { src, id } = redactedSource();
  const dst = tempProject();
  copy(src, dst, 'before.jsonl');
  copy(src, dst, 'after.jsonl');
  ok(tr(dst, ['import', 'before.jsonl']));
  assert.equal(json<Hit[]>(tr(dst, ['--json', 'recall', 'staging database orchid'])).length, 1);
  assert.equal(json<ImportReport>(tr(dst, ['--json', 'import', 'after.jsonl', '--replace-existing'])).replaced_count, 1);
  assert.ok(tombstoned(dst, id));
  const raw = rawJson(dst, id);
  assert.ok(raw.includes('[REDACTED]') && !raw.includes('orchid') && !raw.includes('"p"'), raw);
  assert.deepEqual(json<Hit[]>(tr(dst, ['--json', 'recall', 'staging database orchid', '--include-sensitive'])), []);
  assert.equal(query(dst, "SELECT 1 FROM memory_fts WHERE memory_fts MATCH 'orchid'").length, 0);
  refused(tr(dst, ['import', 'before.jsonl', '--replace-existing']), /redacted/);
  assert.equal(rawJson(dst, id), raw);
});

test('one import file with a redaction and then content under the same id is refused as a whole', () => {
  const { src } = redactedSource();
  const dst = tempProject();
  const after = memoryLines(fs.readFileSync(path.join(src, 'after.jsonl'), 'utf8'));
  const before = memoryLines(fs.readFileSync(path.join(src, 'before.jsonl'), 'utf8'));
  fs.writeFileSync(path.join(dst, 'both.jsonl'), `${after[0]}\n${before[0]}\n`);
  refused(tr(dst, ['import', 'both.jsonl', '--replace-existing']), /redacted/);
  assert.equal(query(dst, 'SELECT 1 FROM memories').length, 0);
  assert.equal(query(dst, 'SELECT 1 FROM redaction_tombstones').length, 0);
});

test('a legacy bare event with a [REDACTED] summary is tombstoned and kept only as the sanitized placeholder', () => {
  const dst = tempProject();
  const legacy = {
    id: 'mem_legacy_redacted_1',
    created_at: '2025-01-01T00:00:00Z',
    updated_at: '2025-01-01T00:00:00Z',
    project: 'p',
    event_type: 'lesson',
    summary: '[REDACTED]',
    details: 'leftover text about orchid',
    tags: ['infra'],
  };
  fs.writeFileSync(path.join(dst, 'legacy.jsonl'), `${JSON.stringify(legacy)}\n`);
  assert.equal(json<ImportReport>(tr(dst, ['--json', 'import', 'legacy.jsonl'])).inserted_count, 1);
  assert.ok(tombstoned(dst, legacy.id));
  const e = JSON.parse(rawJson(dst, legacy.id)) as Ev & { tags: string[] };
  assert.deepEqual([e.summary, e.details, e.project, e.event_type, e.sensitivity, e.tags], ['[REDACTED]', '', null, 'redacted', 'private', []]);
  assert.deepEqual(json<Hit[]>(tr(dst, ['--json', 'recall', 'orchid', '--include-sensitive'])), []);
  // A live memory with other text is untouched and not tombstoned.
  ok(tr(dst, ['remember', 'Ordinary note about orchid.', '--event-type', 'lesson']));
  assert.equal(query(dst, 'SELECT 1 FROM redaction_tombstones').length, 1);
});
