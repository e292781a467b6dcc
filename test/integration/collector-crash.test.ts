// Crash safety of collect: the collector SIGKILLs itself (AGENTSCM_FAULT, a fault injector in
// src/collectors/collect.ts) after reservation, after the container started, after retention and in the
// middle of the upload. Each time the next run or retry-upload completes without running the command a
// second time (the engine's event log shows exactly one container created for the attempt), and the Hub
// ends with exactly one retained transfer.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { json } from '../support/cli.js';
import { checkpoint, claim, collect, collectorRig, containersCreated, retainedTransfers, retryUpload, type CollectorRig } from '../support/collector.js';

describe('collect after a crash never reruns the command', () => {
  let rig: CollectorRig;
  before(async () => {
    rig = await collectorRig();
  });
  after(async () => {
    await rig.stop();
  });

  const cases: { fault: string; resume: 'collect' | 'retry-upload'; recovered?: boolean }[] = [
    { fault: 'after-reserve', resume: 'collect' },
    { fault: 'after-start', resume: 'collect', recovered: true },
    { fault: 'after-retain', resume: 'collect' },
    { fault: 'mid-upload', resume: 'retry-upload' },
  ];

  for (const k of cases) {
    it(`killed ${k.fault}, then ${k.resume}`, async () => {
      const since = Date.now();
      const change = `crash-${k.fault}`;
      checkpoint(rig, change);
      const c = claim(rig, change);
      const killed = collect(rig, change, c, { AGENTSCM_FAULT: k.fault });
      assert.equal(killed.code, -1, `the fault injector kills the collector: ${killed.stdout}${killed.stderr}`);

      const r = k.resume === 'collect' ? collect(rig, change, c) : retryUpload(rig, c);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const out = json(r);
      assert.equal(out.outcome, 'passed');
      if (k.resume === 'collect') assert.equal(out.recovered, k.recovered === true);

      // And once more: still no second run, still one transfer.
      const again = collect(rig, change, c);
      assert.equal(again.code, 0, again.stdout + again.stderr);
      assert.equal(json(again).resumed, true);

      assert.equal(await containersCreated(rig.docker, c.attempt_id, since), 1, 'exactly one container was ever created for the attempt');
      assert.deepEqual(retainedTransfers(rig, c.attempt_id), { count: 1, outcome: 'passed' });
      // Snapshot copies staged by the killed run or by the resumed ones are not left behind.
      const snapshots = path.join(rig.keyDir, 'state', 'snapshots');
      assert.deepEqual(fs.readdirSync(snapshots).filter((n) => n.includes('.staging-')), []);
    });
  }

  it('a started container that is gone with no retained record is reported uncertain, never rerun', async () => {
    const since = Date.now();
    checkpoint(rig, 'crash-lost');
    const c = claim(rig, 'crash-lost');
    assert.equal(collect(rig, 'crash-lost', c, { AGENTSCM_FAULT: 'after-start' }).code, -1);
    // The container (and with it the only trace of the run's result) disappears.
    const list = await rig.docker.listContainers({ all: true, filters: { label: [`io.agentscm.attempt=${c.attempt_id}`] } });
    assert.equal(list.length, 1);
    await rig.docker.getContainer(list[0]!.Id).remove({ force: true });
    const r = collect(rig, 'crash-lost', c);
    assert.equal(r.code, 7, r.stdout + r.stderr);
    assert.match(r.stdout, /EXECUTION_UNCERTAIN/);
    assert.equal(await containersCreated(rig.docker, c.attempt_id, since), 1);
    assert.equal(retainedTransfers(rig, c.attempt_id).count, 0);
  });
});
