// The finite-review collector's own overhead for a 50-path review, beyond the model calls: whole-process
// `agent-task collect` of a review attempt (node start, descriptor, local recompilation, preparing the
// review from the snapshot, status checks, reservations, hashing the ~400 MB Claude Code executable
// before and after, retaining observations, deriving the record, signing, retention, upload with the
// Hub's replay) minus the Claude Code processes' own wall time (each observation's started_at to
// finished_at: the CLI's start, its request to the loopback model stand-in and its exit). The real
// Claude Code CLI runs against the stand-in of test/support/hosts. Target: median overhead <= 1.5 s.

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseStrictJson } from '../src/core/canonical/json.js';
import { sliceRecords, splitTransfer } from '../src/core/collector/transfer.js';
import { decodeRequirement } from '../src/core/contract/requirement.js';
import { executableDigest } from '../src/collectors/review-collect.js';
import { ensureHosts, startAnthropicStandin } from '../test/support/hosts/index.js';
import { pathsShown, REVIEW_REQUIREMENT } from '../test/support/review.js';
import { median, type BenchResult } from './stats.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin', 'agentscm.js');
const REPO = 'acme/demo';
const PROFILE = 'default';
const ROUNDS = 5;
const PATHS = 50;
const TARGET_MS = 1500;
const BASE_ENV: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

function cli(args: string[], env: NodeJS.ProcessEnv = BASE_ENV): Record<string, unknown> {
  const r = spawnSync(process.execPath, [BIN, ...args, '--json'], { encoding: 'utf8', env, maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`agentscm ${args.slice(0, 3).join(' ')} failed (${r.status}): ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

function runAsync(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; ms: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  let stdout = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code: code ?? -1, stdout, ms: performance.now() - t0 })));
}

function startHub(dataDir: string): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [BIN, 'hub', 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0'], { env: BASE_ENV, stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolve) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) resolve({ url: out.split('\n')[0]!, stop: () => child.kill('SIGTERM') });
    });
  });
}

export async function run(): Promise<BenchResult> {
  const hosts = await ensureHosts();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-bench-review-'));
  const dataDir = path.join(work, 'data');
  const reqFile = path.join(work, 'requirement.json');
  fs.writeFileSync(reqFile, JSON.stringify(REVIEW_REQUIREMENT));
  const ws = path.join(work, 'ws');
  for (let k = 0; k < PATHS; k++) {
    const f = path.join(ws, `pkg${k % 5}`, `file${k}.ts`);
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, `export const value${k} = ${k};\n`.repeat(40));
  }
  cli(['authority', 'init', '--data-dir', dataDir]);
  cli(['authority', 'profile', 'add', '--data-dir', dataDir, '--repository', REPO, '--profile', PROFILE, '--target', 'main', '--requirement', reqFile]);
  const tokenFile = path.join(work, 'token');
  cli(['authority', 'token', 'issue', '--data-dir', dataDir, '--owner', 'alice', '--agent', 'claude', '--out', tokenFile]);
  const keyDir = path.join(work, 'key');
  const key = cli(['agent-task', 'key', 'generate', '--key-dir', keyDir]);
  const reg = cli(['authority', 'enroll', '--data-dir', dataDir, '--repository', REPO, '--profile', PROFILE, '--step', 'review', '--executor-id', 'reviewer-1', '--public-key', String(key.public_key), '--yes']);
  const standin = await startAnthropicStandin({ reply: (_i, req) => JSON.stringify({ reviewed: pathsShown(req), findings: [] }) });
  const profileFile = path.join(work, 'profile.json');
  fs.writeFileSync(
    profileFile,
    JSON.stringify({
      version: 1,
      kind: 'review',
      repository: REPO,
      profile: PROFILE,
      step_id: 'review',
      registration_id: reg.registration_id,
      registration_epoch: reg.registration_epoch,
      reviewer: { transport_basis: 'claude-code', executable_sha256: createHash('sha256').update(fs.readFileSync(hosts.claude)).digest('hex'), model: 'claude-standin-1', provider_scope: { provider: 'anthropic', base_url: standin.baseUrl } },
      policy_digest: decodeRequirement(fs.readFileSync(reqFile)).digest,
      path_coverage: 'all',
      budgets: { max_calls: 16, max_call_input_bytes: 16_384, max_input_bytes: 1_048_576, max_output_bytes: 1_048_576, wall_time_ms: 600_000 },
    }),
  );
  cli(['authority', 'collector-profile', 'install', '--data-dir', dataDir, '--file', profileFile]);
  const hub = await startHub(dataDir);
  const hubArgs = ['--data-dir', dataDir, '--endpoint', hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', tokenFile];
  const overhead: number[] = [];
  const total: number[] = [];
  const hashMs: number[] = [];
  const nodeMs: number[] = [];
  let calls = 0;
  try {
    for (let round = 0; round <= ROUNDS; round++) {
      const change = `bench-${round}`;
      cli(['checkpoint', change, '--data-dir', dataDir, '--repository', REPO, '--profile', PROFILE, '--workspace', ws]);
      const att = cli(['agent-task', 'collector-claim', change, ...hubArgs, '--step', 'review', '--lease-ms', '600000', '--executor-id', 'reviewer-1']).attempt as Record<string, unknown>;
      const r = await runAsync(
        ['agent-task', 'collect', change, ...hubArgs, '--task-id', String(att.task_id), '--attempt-id', String(att.attempt_id), '--key-dir', keyDir, '--reviewer', hosts.claude, '--json'],
        { ...BASE_ENV, ANTHROPIC_API_KEY: standin.apiKey },
      );
      if (r.code !== 0) throw new Error(`collect failed (${r.code}): ${r.stdout}`);
      const doc = JSON.parse(r.stdout) as { outcome: string; review_calls: number };
      if (doc.outcome !== 'passed') throw new Error(`the review did not pass: ${r.stdout}`);
      const execDir = fs.readdirSync(path.join(keyDir, 'state', 'executions')).map((n) => path.join(keyDir, 'state', 'executions', n)).find((d) => fs.readFileSync(path.join(d, 'reservation.json'), 'utf8').includes(String(att.attempt_id)))!;
      const bytes = fs.readFileSync(path.join(execDir, 'transfer.bin'));
      const parts = splitTransfer(bytes);
      const header = parseStrictJson(parts.header, { maxBytes: 1 << 16, what: 'header' }) as unknown as { records: { type: 'review_request' | 'review_record'; length: number; digest: string }[] };
      const record = JSON.parse(sliceRecords(parts.rest, header.records)[1]!.toString('utf8')) as { observations: { started_at: string; finished_at: string }[] };
      const modelMs = record.observations.reduce((n, o) => n + (Date.parse(o.finished_at) - Date.parse(o.started_at)), 0);
      calls = doc.review_calls;
      if (round === 0) continue; // warm-up
      total.push(r.ms);
      overhead.push(r.ms - modelMs);
      // Beside each round, under the same load: one hash of the executable (collect makes two) and a bare node start.
      const h0 = performance.now();
      executableDigest(hosts.claude);
      hashMs.push(performance.now() - h0);
      const n0 = performance.now();
      spawnSync(process.execPath, ['-e', '0'], { env: BASE_ENV });
      nodeMs.push(performance.now() - n0);
    }
  } finally {
    hub.stop();
    await standin.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
  const med = median(overhead);
  const lines = [
    `review collect of ${PATHS} paths in ${calls} calls, ${ROUNDS} rounds: whole process median ${median(total).toFixed(0)} ms`,
    `collector overhead beyond the Claude Code processes: median ${med.toFixed(0)} ms (min ${Math.min(...overhead).toFixed(0)}, max ${Math.max(...overhead).toFixed(0)}), target <= ${TARGET_MS} ms`,
    `  of which hashing the ${(fs.statSync(hosts.claude).size / 1e6).toFixed(0)} MB executable before and after: 2 x median ${median(hashMs).toFixed(0)} ms; bare node start beside it: median ${median(nodeMs).toFixed(0)} ms; load average ${os.loadavg()[0]!.toFixed(1)}`,
  ];
  return { name: 'review-collector', ok: med <= TARGET_MS, lines };
}
