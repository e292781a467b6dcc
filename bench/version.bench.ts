// Whole-process start-up: `node bin/agentscm.js --version` against bare `node -e 0`, alternating runs so
// that machine noise hits both sides alike. Target: median ratio <= 1.3.

import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, type BenchResult } from './stats.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TARGET = 1.3;

// A minimal environment: settings such as NODE_EXTRA_CA_CERTS slow every node start and would hide the
// launcher's own cost in the ratio.
const ENV = { PATH: process.env.PATH };

function timeRun(args: string[]): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${String(r.stderr)}`);
  return ms;
}

export function run(options: { runs?: number; warmup?: number } = {}): BenchResult {
  const runs = options.runs ?? 30;
  const warmup = options.warmup ?? 5;
  const version = [path.join(ROOT, 'bin', 'agentscm.js'), '--version'];
  const bare = ['-e', '0'];
  for (let i = 0; i < warmup; i++) {
    timeRun(version);
    timeRun(bare);
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < runs; i++) {
    // Alternate which goes first so that neither side always follows the other.
    if (i % 2 === 0) {
      a.push(timeRun(version));
      b.push(timeRun(bare));
    } else {
      b.push(timeRun(bare));
      a.push(timeRun(version));
    }
  }
  const ratio = median(a) / median(b);
  return {
    name: 'version',
    lines: [
      `agentscm --version  median ${median(a).toFixed(1)} ms  (min ${Math.min(...a).toFixed(1)}, max ${Math.max(...a).toFixed(1)}, n=${runs})`,
      `node -e 0           median ${median(b).toFixed(1)} ms  (min ${Math.min(...b).toFixed(1)}, max ${Math.max(...b).toFixed(1)}, n=${runs})`,
      `ratio ${ratio.toFixed(3)} (target <= ${TARGET}): ${ratio <= TARGET ? 'met' : 'MISSED'}`,
    ],
    ok: ratio <= TARGET,
  };
}
