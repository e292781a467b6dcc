// `agentscm snapshot repack`: the packs of several checkpoints become one, and every revision they
// recorded still exports byte for byte, a checkpoint after it too (its unchanged files are trusted to be
// in the packs by the stat cache).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { agentscm, json } from '../support/cli.js';
import { adminSetup, checkpointArgs, tempDir } from '../support/hub.js';

/** Every regular file below dir, by relative path, with its bytes. */
function tree(dir: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name);
    if (e.isDirectory()) Object.assign(out, tree(dir, r));
    else out[r] = fs.readFileSync(path.join(dir, r), 'latin1');
  }
  return out;
}

test('snapshot repack: one pack for every checkpoint before it; every revision exports as it was recorded', () => {
  const s = adminSetup();
  const packsDir = path.join(s.dataDir, 'snapshots', 'packs');
  const recorded: [string, Record<string, string>][] = [];
  const checkpoint = () => {
    const r = agentscm(checkpointArgs(s));
    assert.equal(r.code, 0, r.stderr);
    recorded.push([String((json(r).subject as Record<string, unknown>).revision), tree(s.workspace)]);
  };
  checkpoint();
  for (let k = 0; k < 3; k++) {
    fs.writeFileSync(path.join(s.workspace, `added-${k}.txt`), `added ${k}\n`);
    checkpoint();
  }
  const before = fs.readdirSync(packsDir).filter((n) => n.endsWith('.pack')).length;
  assert.equal(before, 4);
  let r = agentscm(['snapshot', 'repack', '--data-dir', s.dataDir, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const doc = json(r);
  assert.deepEqual([doc.packs_before, doc.packs_after, doc.kept], [4, 1, []]);
  assert.ok(Number(doc.blobs) >= 4);
  assert.equal(fs.readdirSync(packsDir).length, 1);
  // A checkpoint after it: most files come from the stat cache, their blobs from the new pack.
  fs.writeFileSync(path.join(s.workspace, 'after.txt'), 'after\n');
  checkpoint();
  for (const [revision, files] of recorded) {
    const out = path.join(tempDir('export'), 'tree');
    const x = agentscm(['snapshot', 'export', '--data-dir', s.dataDir, '--revision', revision, '--out', out, '--json']);
    assert.equal(x.code, 0, x.stderr);
    assert.deepEqual(tree(out), files, revision);
  }
  // Text output; one pack is nothing to do.
  agentscm(['snapshot', 'repack', '--data-dir', s.dataDir]);
  r = agentscm(['snapshot', 'repack', '--data-dir', s.dataDir]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'nothing to repack (1 pack)\n');
  // A data dir that is not the owner's: refused, nothing touched.
  fs.chmodSync(s.dataDir, 0o755);
  r = agentscm(['snapshot', 'repack', '--data-dir', s.dataDir]);
  assert.equal(r.code, 9, r.stderr);
  fs.chmodSync(s.dataDir, 0o700);
});
