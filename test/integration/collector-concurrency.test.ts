// Two `agent-task collect` runs of the same attempt at the same time: one collects, the other finds the
// attempt's lock held by a live process and exits 7 COLLECT_IN_PROGRESS having changed nothing (it
// neither stages, reserves nor places the snapshot a running container has mounted). The recipe sleeps
// before the check so that the first run holds the lock while the second one arrives.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { json, type RunResult } from '../support/cli.js';
import { checkpoint, claim, collect, collectChild, collectorRig, containersCreated, installProfile, profileDoc, retainedTransfers, type CollectorRig } from '../support/collector.js';

/**
 * Every path under dir, and each file's size, modification time and inode: what "changed nothing"
 * compares. A directory's own mtime is left out: taking a lock links a temp name and removes it again.
 */
function tree(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const n of fs.readdirSync(d).sort()) {
      const p = path.join(d, n);
      const st = fs.lstatSync(p);
      out.push(st.isDirectory() ? `${path.relative(dir, p)} d ${st.ino}` : `${path.relative(dir, p)} f ${st.size} ${st.mtimeMs} ${st.ino}`);
      if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out;
}

function errorCode(r: RunResult): string | undefined {
  return (json(r) as { error?: { code?: string } }).error?.code;
}

describe('concurrent collect runs of one attempt', () => {
  let rig: CollectorRig;
  let state: string;
  before(async () => {
    rig = await collectorRig();
    state = path.join(rig.keyDir, 'state');
    installProfile(rig, profileDoc(rig, ['sh', '-c', 'sleep 3; sh check.sh']));
  });
  after(async () => {
    await rig.stop();
  });

  it('two runs started at once: one collects, the other exits 7 COLLECT_IN_PROGRESS', async () => {
    const since = Date.now();
    checkpoint(rig, 'twice');
    const c = claim(rig, 'twice');
    const [a, b] = await Promise.all([collectChild(rig, 'twice', c).done, collectChild(rig, 'twice', c).done]);
    const results = [a, b].sort((x, y) => x.code - y.code);
    const [won, lost] = results as [RunResult, RunResult];
    assert.deepEqual(
      results.map((r) => r.code),
      [0, 7],
      `exits ${a.code} and ${b.code}:\n${a.stdout}${a.stderr}\n${b.stdout}${b.stderr}`,
    );
    assert.equal(json(won).outcome, 'passed', won.stdout);
    assert.equal(json(won).resumed, false);
    assert.equal(errorCode(lost), 'COLLECT_IN_PROGRESS', lost.stdout);

    assert.equal(await containersCreated(rig.docker, c.attempt_id, since), 1, 'the command ran exactly once');
    assert.deepEqual(retainedTransfers(rig, c.attempt_id), { count: 1, outcome: 'passed' });
    assert.deepEqual(fs.readdirSync(path.join(state, 'snapshots')).filter((n) => n.includes('.staging-')), [], 'no staged copy is left behind');
    assert.deepEqual(fs.readdirSync(path.join(state, 'locks')), [], 'the lock was released');

    // Once the first has ended, the attempt is collected: the next run only uploads again.
    const again = collect(rig, 'twice', c);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.equal(json(again).resumed, true);
    assert.equal(await containersCreated(rig.docker, c.attempt_id, since), 1);
  });

  it('a run that finds the lock held by a live (stopped) run changes nothing; the holder then completes', async () => {
    const since = Date.now();
    checkpoint(rig, 'held');
    const c = claim(rig, 'held');
    const holder = collectChild(rig, 'held', c);
    let ended = false;
    void holder.done.then(() => (ended = true));
    // The holder is stopped (alive, holding the lock) as soon as its lock exists.
    const locks = path.join(state, 'locks');
    while (!ended && !(fs.existsSync(locks) && fs.readdirSync(locks).some((n) => n.endsWith('.lock')))) {
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(ended, false, 'the holder was still running when its lock appeared');
    holder.child.kill('SIGSTOP');
    try {
      const before = tree(state);
      const r = collect(rig, 'held', c);
      assert.equal(r.code, 7, r.stdout + r.stderr);
      assert.equal(errorCode(r), 'COLLECT_IN_PROGRESS');
      assert.deepEqual(tree(state), before, 'the refused run wrote, moved and removed nothing');
    } finally {
      holder.child.kill('SIGCONT');
    }
    const h = await holder.done;
    assert.equal(h.code, 0, h.stdout + h.stderr);
    assert.equal(json(h).outcome, 'passed');
    assert.equal(await containersCreated(rig.docker, c.attempt_id, since), 1);
    assert.deepEqual(retainedTransfers(rig, c.attempt_id), { count: 1, outcome: 'passed' });
    assert.deepEqual(fs.readdirSync(locks), []);
  });
});
