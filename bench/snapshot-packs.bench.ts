// Reading a snapshot from a store that many checkpoints added packs to. Each checkpoint writes one pack
// of the files it read: after the first, a pack of a few changed files. A reader (agent-task collect,
// snapshot export, the review collector) reads every blob of the snapshot it runs. The bench records one
// snapshot of AGENTSCM_BENCH_FILES files (default 20,000 small files) into a store, then adds
// AGENTSCM_BENCH_PACKS packs (default 1,000) of one other blob each, as 1,000 one-file checkpoints would
// (written with the checkpoint's own PackWriter, not by 1,000 checkpoints), and reads every blob of the
// snapshot with a fresh SnapshotStore (what each collector process does): 5 rounds, median, against the
// same reads from a store that holds the one pack only. Target: the many-pack store reads within 1.2x.
// Reported beside: `snapshot repack` of the many-pack store (its time) and the same reads after it.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../src/core/crypto/digest.js';
import { PackWriter } from '../src/core/native/pack.js';
import { SnapshotStore } from '../src/core/native/snapshot.js';
import { median, type BenchResult } from './stats.js';
import { copyTree } from '../test/support/files.js';

const TARGET_RATIO = 1.2;

function readEvery(dataDir: string, revision: string): number {
  const store = new SnapshotStore(dataDir);
  const manifest = store.manifest(revision);
  if (!manifest) throw new Error('no manifest');
  const t0 = performance.now();
  let n = 0;
  for (const e of manifest.entries) {
    if (!Buffer.isBuffer(store.readBlob(e.sha256, 1 << 20))) throw new Error(`blob ${e.sha256} not found`);
    n++;
  }
  if (n === 0) throw new Error('the snapshot has no files');
  return performance.now() - t0;
}

export function run(): BenchResult {
  const files = Number(process.env.AGENTSCM_BENCH_FILES ?? 20_000);
  const packs = Number(process.env.AGENTSCM_BENCH_PACKS ?? 1_000);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-bench-packs-'));
  try {
    const ws = path.join(root, 'ws');
    for (let i = 0; i < files; i++) {
      const dir = path.join(ws, `pkg${i % 40}`, `mod${i % 13}`);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `f${i}.txt`), `export const value${i} = ${i};\n`.repeat(6));
    }
    const one = path.join(root, 'one');
    fs.mkdirSync(one, { mode: 0o700 });
    const { revision } = new SnapshotStore(one).record(ws);
    const many = path.join(root, 'many');
    copyTree(one, many);
    for (let k = 0; k < packs; k++) {
      const w = new PackWriter(path.join(many, 'snapshots', 'packs'));
      const bytes = randomBytes(200);
      w.add(sha256Hex(bytes), bytes);
      w.publish();
    }
    const oneMs: number[] = [];
    const manyMs: number[] = [];
    for (let r = 0; r < 5; r++) {
      oneMs.push(readEvery(one, revision));
      manyMs.push(readEvery(many, revision));
    }
    const ratio = median(manyMs) / median(oneMs);
    const ok = ratio <= TARGET_RATIO;
    // Reported beside, no target: `snapshot repack` of the many-pack store, then the same reads.
    const t0 = performance.now();
    const repacked = new SnapshotStore(many).repack();
    const repackMs = performance.now() - t0;
    const afterMs: number[] = [];
    for (let r = 0; r < 5; r++) afterMs.push(readEvery(many, revision));
    return {
      name: 'snapshot-packs',
      ok,
      lines: [
        `read every blob of a ${files}-file snapshot: store of ${packs + 1} packs ${median(manyMs).toFixed(1)} ms, store of 1 pack ${median(oneMs).toFixed(1)} ms (medians of 5)`,
        `ratio ${ratio.toFixed(2)}x (target <= ${TARGET_RATIO}x: ${ok ? 'met' : 'MISSED'})`,
        `snapshot repack: ${repacked.packs_before} packs into ${repacked.packs_after} in ${repackMs.toFixed(0)} ms (${repacked.blobs} blobs); then the same reads ${median(afterMs).toFixed(1)} ms (${(median(afterMs) / median(oneMs)).toFixed(2)}x; no target)`,
      ],
    };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
