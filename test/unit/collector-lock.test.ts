// The collect lock (src/collectors/collect-lock.ts) on a real file system: a live holder (this process)
// refuses a second taker; a holder that is gone (a process that exited), a pid now used by another
// process (this one, with another start time), an empty or garbled lock and a takeover guard left by a
// taker that died are all taken over; release removes only the holder's own lock.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { acquireCollectLock, collectLockFile } from '../../src/collectors/collect-lock.js';
import { canonicalJson } from '../../src/core/canonical/json.js';
import { DOMAINS, domainDigest } from '../../src/core/crypto/digest.js';
import { AgentscmError } from '../../src/core/errors.js';

const roots: string[] = [];
after(() => {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

function stateDir(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-lock-'));
  roots.push(root);
  return path.join(root, 'state');
}

function ownStart(): number {
  const text = fs.readFileSync('/proc/self/stat', 'utf8');
  return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[19]);
}

function plant(file: string, content: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, content, { mode: 0o600 });
}

const lockText = (pid: number, start: number | null) => canonicalJson({ pid, start, nonce: 'n'.repeat(32) }) + '\n';

function exitedPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

describe('collect lock', () => {
  it('a live holder refuses a second taker with COLLECT_IN_PROGRESS; release frees it', () => {
    const dir = stateDir();
    const lock = acquireCollectLock(dir, 'att-1');
    assert.ok(fs.existsSync(lock.file));
    assert.throws(
      () => acquireCollectLock(dir, 'att-1'),
      (e: unknown) => e instanceof AgentscmError && e.kind === 'CONFLICT' && e.code === 'COLLECT_IN_PROGRESS',
    );
    assert.ok(fs.existsSync(lock.file), 'the refused taker left the holder\'s lock alone');
    const other = acquireCollectLock(dir, 'att-2');
    other.release();
    lock.release();
    assert.equal(fs.existsSync(lock.file), false);
    acquireCollectLock(dir, 'att-1').release();
    assert.deepEqual(fs.readdirSync(path.join(dir, 'locks')), [], 'no temp or guard file is left');
    assert.equal((fs.statSync(dir).mode & 0o777).toString(8), '700');
  });

  const stale: [string, () => string][] = [
    ['a holder that exited', () => lockText(exitedPid(), 1)],
    ['a recycled pid (this live process, another start time)', () => lockText(process.pid, ownStart() + 1)],
    ['an empty lock', () => ''],
    ['a garbled lock', () => '{"pid":'],
  ];
  for (const [what, content] of stale) {
    it(`takes over ${what}`, () => {
      const dir = stateDir();
      const file = collectLockFile(dir, 'att-1');
      plant(file, content());
      const lock = acquireCollectLock(dir, 'att-1');
      const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as { pid: number; start: number };
      assert.equal(doc.pid, process.pid);
      assert.equal(doc.start, ownStart());
      lock.release();
      assert.deepEqual(fs.readdirSync(path.join(dir, 'locks')), []);
    });
  }

  it('the holder with its own start time is live: not taken over', () => {
    const dir = stateDir();
    const file = collectLockFile(dir, 'att-1');
    plant(file, lockText(process.pid, ownStart()));
    assert.throws(() => acquireCollectLock(dir, 'att-1'), /COLLECT_IN_PROGRESS|another agentscm/);
    assert.equal(fs.readFileSync(file, 'utf8'), lockText(process.pid, ownStart()));
  });

  it('takes over a stale lock whose takeover guard was left by a taker that died', () => {
    const dir = stateDir();
    const file = collectLockFile(dir, 'att-1');
    plant(file, lockText(exitedPid(), 1));
    // The guard of exactly this stale generation, held by a taker that is gone.
    const seen = fs.readFileSync(file);
    plant(`${file}.takeover-${domainDigest(DOMAINS.collectLock, seen).slice(0, 32)}`, lockText(exitedPid(), 1));
    const lock = acquireCollectLock(dir, 'att-1');
    assert.equal((JSON.parse(fs.readFileSync(file, 'utf8')) as { pid: number }).pid, process.pid);
    lock.release();
    assert.deepEqual(fs.readdirSync(path.join(dir, 'locks')), []);
  });
});
