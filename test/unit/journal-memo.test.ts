// The journal's lookup memo (Journal.remembered) on real SQLite files: another connection's commit is
// seen from the next turn, this connection's own write (through the journal: a write method, a writing
// statement from stmt(), anything inside immediate()) at once, and nothing read inside an open
// transaction is kept (a rolled-back savepoint must leave no row behind in memory).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { openJournalForWrite } from '../../src/hub/journal.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-journal-memo-'));
fs.chmodSync(root, 0o700);
after(() => fs.rmSync(root, { recursive: true, force: true }));

test('remembered: other connection, own write, open transaction', async () => {
  const hub = openJournalForWrite(root);
  const other = openJournalForWrite(root);
  try {
    let asked = 0;
    const count = () =>
      hub.remembered('count', () => {
        asked++;
        return (hub.db.prepare('SELECT COUNT(*) AS n FROM tasks').get() as { n: number }).n;
      });
    const insert = (j: typeof hub, id: string) =>
      j.db.prepare("INSERT INTO tasks VALUES (?, 'd', 'acme/demo', 'default', 'c1', 1, 1, 's', x'00', 0)").run(id);
    assert.equal(count(), 0);
    assert.equal(count(), 0);
    assert.equal(asked, 1);
    // Another connection (another process's kind of change) commits: seen from the next turn on.
    insert(other, 't1');
    await new Promise((r) => setImmediate(r));
    assert.equal(count(), 1);
    assert.equal(asked, 2);
    // This connection's own write: seen at once, in the same stretch.
    const gen = hub.readsGeneration();
    hub.stmt("INSERT INTO tasks VALUES (?, 'd', 'acme/demo', 'default', 'c1', 1, 1, 's', x'00', 0)").run('t2');
    assert.equal(count(), 2);
    assert.equal(asked, 3);
    assert.notEqual(hub.readsGeneration(), gen);
    hub.immediate(() => insert(hub, 't2b'));
    assert.equal(count(), 3);
    assert.equal(asked, 4);
    const requests = () => hub.remembered('requests', () => (hub.db.prepare('SELECT COUNT(*) AS n FROM idempotency').get() as { n: number }).n);
    assert.equal(requests(), 0);
    hub.insertRequest({ owner_id: 'o', agent_id: 'a', request_id: 'r1', kind: 'claim', request_digest: 'd', task_id: 't1', attempt_id: null, response: Buffer.from('{}'), created_at: 0 });
    assert.equal(requests(), 1);
    hub.db.prepare("DELETE FROM tasks WHERE task_id = 't2b'").run();
    await new Promise((r) => setImmediate(r));
    assert.equal(count(), 2);
    // Inside a transaction nothing is remembered; a rolled-back write leaves nothing behind.
    assert.throws(() =>
      hub.db.transaction(() => {
        insert(hub, 't3');
        assert.equal(count(), 3);
        assert.equal(hub.readsGeneration(), undefined);
        throw new Error('roll back');
      })(),
    );
    assert.equal(count(), 2);
  } finally {
    hub.close();
    other.close();
  }
});
