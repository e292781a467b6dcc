// toAgentscmError: what a store or the file system reported is local state (exit 9), anything else
// unexpected is INTERNAL (exit 1, a bug).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { EXIT_CODES, toAgentscmError } from '../../src/core/errors.js';

test('SQLite errors about the store itself are LOCAL_STATE; a constraint or a plain error stays INTERNAL', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-errors-'));
  try {
    const file = path.join(dir, 'not-a-db.sqlite');
    fs.writeFileSync(file, 'garbage, not a database'.repeat(100));
    let caught: unknown;
    try {
      new Database(file).pragma('user_version');
    } catch (e) {
      caught = e;
    }
    const notADb = toAgentscmError(caught);
    assert.equal(notADb.kind, 'LOCAL_STATE');
    assert.equal(notADb.code, 'STORE_UNAVAILABLE');
    assert.equal(notADb.exitCode, EXIT_CODES.LOCAL_STATE);

    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    db.prepare('INSERT INTO t VALUES (?)').run('a');
    try {
      db.prepare('INSERT INTO t VALUES (?)').run('a');
    } catch (e) {
      caught = e;
    }
    assert.equal(toAgentscmError(caught).kind, 'INTERNAL', 'a constraint violation is a bug of ours');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('file-system errors are LOCAL_STATE with their errno as the code; other errors are INTERNAL', () => {
  for (const code of ['EACCES', 'EROFS', 'ENOSPC', 'ENOENT']) {
    const e = Object.assign(new Error(`${code}: something`), { code });
    const a = toAgentscmError(e);
    assert.equal(a.kind, 'LOCAL_STATE', code);
    assert.equal(a.code, code);
  }
  assert.equal(toAgentscmError(new TypeError('x is not a function')).kind, 'INTERNAL');
  assert.equal(toAgentscmError(Object.assign(new Error('odd'), { code: 'ERR_SOMETHING' })).kind, 'INTERNAL');
});
