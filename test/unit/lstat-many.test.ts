// lstat of many paths with helper threads (src/core/fs/lstat-many.ts) on a real tree: the numbers equal
// fs.lstatSync's whether the helpers took part or not, a missing path is 0, an lstat error is the
// caller's (FS_ERROR) or absence (errors 'missing'), helpers that were stopped leave all the paths to
// the caller, and few paths start no helper at all.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { AgentscmError } from '../../src/core/errors.js';
import { lstatMany, STAT_CHUNK, STAT_FIELDS, STAT_HELPER_MIN, StatHelpers } from '../../src/core/fs/lstat-many.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-lstat-many-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

// 2,000 files in 40 directories, a symlink, a directory and two missing paths among them.
const paths: string[] = [];
for (let d = 0; d < 40; d++) {
  fs.mkdirSync(path.join(root, `d${d}`));
  for (let f = 0; f < 50; f++) {
    const rel = `d${d}/f${f}.txt`;
    fs.writeFileSync(path.join(root, rel), 'x'.repeat(d * 50 + f));
    paths.push(rel);
  }
}
fs.symlinkSync('d0/f0.txt', path.join(root, 'link'));
paths.push('link', 'd7', 'd3/missing.txt', 'nope');

function expected(list: readonly string[]): Float64Array {
  const out = new Float64Array(STAT_FIELDS * list.length);
  list.forEach((p, i) => {
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(path.join(root, p), { throwIfNoEntry: false });
    } catch {
      // ENOTDIR: 0, as lstatMany's errors 'missing' gives it.
    }
    if (st) out.set([st.mode, st.size, st.mtimeMs, st.ctimeMs, st.ino], STAT_FIELDS * i);
  });
  return out;
}

const cores = os.availableParallelism();

describe('lstatMany', () => {
  it('gives fs.lstatSync numbers on the calling thread alone, 0 for a missing path', () => {
    const got = lstatMany(root + '/', paths);
    assert.deepEqual(got, expected(paths));
    assert.equal(got[STAT_FIELDS * paths.indexOf('nope')], 0);
    assert.equal(got[STAT_FIELDS * paths.indexOf('link')]! & 0o170000, 0o120000, 'a symlink is not followed');
  });

  it('gives the same numbers when helper threads take part', { skip: cores < 2 && 'one core: no helper starts' }, async () => {
    // Many paths (each listed 60 times), so that the helpers, given time to start, take chunks.
    const many = Array.from({ length: 60 }, () => paths).flat();
    const helpers = StatHelpers.start(many.length);
    assert.ok(helpers, 'helpers start for many paths');
    try {
      await helpers.started();
      const got = lstatMany(root + '/', many, helpers);
      assert.ok(helpers.helped > 0 && helpers.helped < many.length, `the helpers did ${helpers.helped} of ${many.length} paths`);
      assert.deepEqual(got, expected(many));
    } finally {
      helpers.stop();
    }
  });

  it('leaves every path to the caller when the helpers were stopped', { skip: cores < 2 && 'one core: no helper starts' }, async () => {
    const helpers = StatHelpers.start(10 * STAT_HELPER_MIN)!;
    helpers.stop();
    await sleep(50);
    assert.deepEqual(lstatMany(root + '/', paths, helpers), expected(paths));
    assert.equal(helpers.helped, 0);
  });

  it('does the chunks of a helper that stopped in the middle itself, after STALL_MS without progress', () => {
    // A stand-in for a helper that took the first chunk and died before marking it done (a real one
    // cannot be stopped at that point on purpose): the caller must not wait for it for ever.
    const stalled = {
      helped: 0,
      share(_prefix: string, _paths: readonly string[], _out: Float64Array, ctl: Int32Array) {
        Atomics.add(ctl, 0, STAT_CHUNK);
      },
    } as unknown as StatHelpers;
    const many = Array.from({ length: 3 }, () => paths).flat();
    const started = Date.now();
    const got = lstatMany(root + '/', many, stalled);
    assert.deepEqual(got, expected(many), 'the stalled chunk was done again');
    assert.equal(stalled.helped, STAT_CHUNK, 'the caller did all but the chunk the helper took');
    assert.ok(Date.now() - started >= 1900, 'the caller waited for the helper first');
  });

  it('starts no helper for fewer paths than STAT_HELPER_MIN', () => {
    assert.equal(StatHelpers.start(STAT_HELPER_MIN - 1), undefined);
  });

  it('throws the caller\'s error for an lstat that fails, or counts it as absence', async () => {
    const bad = [...paths, 'd1/f1.txt/below'];
    assert.throws(() => lstatMany(root + '/', bad), (e: unknown) => e instanceof AgentscmError && e.code === 'FS_ERROR' && /ENOTDIR/.test(e.message));
    const got = lstatMany(root + '/', bad, undefined, 'missing');
    assert.equal(got[STAT_FIELDS * (bad.length - 1)], 0);
    if (cores < 2) return;
    // The same through a helper: it marks the path, and the caller does it again (and throws).
    const many = Array.from({ length: 60 }, () => bad).flat();
    for (const errors of ['throw', 'missing'] as const) {
      const helpers = StatHelpers.start(many.length)!;
      try {
        await helpers.started();
        if (errors === 'throw') assert.throws(() => lstatMany(root + '/', many, helpers), (e: unknown) => e instanceof AgentscmError && e.code === 'FS_ERROR');
        else {
          const missing = lstatMany(root + '/', many, helpers, 'missing');
          assert.ok(helpers.helped > 0, 'the helpers took part');
          assert.deepEqual(missing, expected(many));
        }
      } finally {
        helpers.stop();
      }
    }
  });
});
