// Upgrades of existing data dirs on real SQLite files: an authority of schema version 2 gains the
// targets, approvals and integrations tables when a writer opens it (its rows kept), and the Stop
// hooks' read-only reader still reads it unmigrated; a journal of version 3 gains the forge outbox on
// its first write and is read as it is before; approval's journal reader reads both.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { readCurrentSubjectUnchecked } from '../../src/core/authority/read-only.js';
import { Authority, initAuthority } from '../../src/core/authority/store.js';
import { canonicalJsonBytes } from '../../src/core/canonical/json.js';
import { DOMAINS, domainDigest } from '../../src/core/crypto/digest.js';
import { JournalReader } from '../../src/core/integration/journal-read.js';
import { JOURNAL_SCHEMA, openJournalForWrite, openJournalReadOnly } from '../../src/hub/journal.js';
import { downgradeToV2, V3_TABLES } from '../support/authority-v2.js';


function tables(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name);
  } finally {
    db.close();
  }
}

test('an authority of schema version 2 is migrated by a writer and read unmigrated by the Stop hooks\' reader', () => {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-mig-')), 'data');
  initAuthority(dir);
  const requirement = { version: 1 as const, workflow: 'w', steps: [{ id: 's', skill: 'k', action_class: 'command_collector' as const, required: true, depends_on: [], summary: 'x', criteria: [{ id: 'c', text: 't', required: true, controller_only: false }], references: [] }] };
  const canonical = canonicalJsonBytes(requirement);
  const a = Authority.open(dir);
  a.addProfile({ repository: 'acme/demo', profile: 'p', target: 'main', requirement, canonical, requirement_digest: domainDigest(DOMAINS.requirement, canonical) });
  a.recordChangeVersion('acme/demo', 'c1', 'a'.repeat(64));
  a.close();
  // Make it what version 2 wrote: no version-3 tables, no token scope.
  const file = path.join(dir, 'authority.sqlite');
  downgradeToV2(file);

  assert.equal(readCurrentSubjectUnchecked(dir, 'acme/demo', 'p', 'c1').subject.revision, 'a'.repeat(64));
  assert.throws(() => Authority.open(dir, { readonly: true }), /schema is version 2/);
  const w = Authority.open(dir);
  try {
    assert.equal(w.currentChangeVersion('acme/demo', 'c1')?.revision, 'a'.repeat(64));
    assert.equal(w.targetRevision('acme/demo', 'main'), null);
  } finally {
    w.close();
  }
  for (const t of V3_TABLES) assert.ok(tables(file).includes(t), t);
  const cols = (new Database(file, { readonly: true }).prepare('PRAGMA table_info(tokens)').all() as { name: string }[]).map((c) => c.name);
  assert.ok(cols.includes('scope'), 'the tokens gain their scope column');
  assert.equal(new Database(file, { readonly: true }).pragma('user_version', { simple: true }), 3);
  assert.equal(readCurrentSubjectUnchecked(dir, 'acme/demo', 'p', 'c1').subject.revision, 'a'.repeat(64));
});

test('a journal of version 3 is read as it is and gains the forge outbox on its first write', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-mig-'));
  const file = path.join(dir, 'journal.sqlite');
  const db = new Database(file);
  fs.chmodSync(file, 0o600);
  db.pragma('journal_mode = WAL');
  db.exec(JOURNAL_SCHEMA);
  db.pragma('user_version = 3');
  db.close();
  openJournalReadOnly(dir)!.close();
  const r = JournalReader.open(dir)!;
  assert.equal(r.receiptBody('0'.repeat(64)), undefined);
  r.close();
  assert.ok(!tables(file).includes('forge_outbox'));
  openJournalForWrite(dir).close();
  assert.ok(tables(file).includes('forge_outbox'));
  assert.equal(new Database(file, { readonly: true }).pragma('user_version', { simple: true }), 4);
  JournalReader.open(dir)!.close();
});
