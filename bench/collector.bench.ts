// Collector costs against a real `hub serve` process and a real container engine.
//
// 1. overhead: `agent-task collect` as a whole process (node start, descriptor, local recompilation,
//    status checks, reservation, runtime probe, materialization of a 1,000-file snapshot, signing,
//    retention, upload) minus the container's own run (create to confirmed removal without collect's
//    own work between creation and start, as collect reports it in container_ms). Target: median
//    overhead <= 400 ms.
// 2. transfer: sign + retain (create-only, fsync) + upload of a 16 MiB transfer (two 6,000,000-byte
//    output streams), including the Hub's full import validation. Target: median <= 1 s.
// Each round needs a fresh attempt (one transfer per attempt), so checkpoint and claim run between
// measurements and are not measured.

import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBusyboxImage } from '../src/collectors/busybox-image.js';
import { startPodmanServiceIfNeeded } from '../src/collectors/engine.js';
import { buildRecord, retain, signTransfer, type CollectDescriptor } from '../src/collectors/collect.js';
import { executionRecordBytes, executionRequestBytes, type CollectorProfile } from '../src/core/collector/transfer.js';
import { loadKey } from '../src/core/crypto/keystore.js';
import { ensurePrivateDir } from '../src/core/fs/safe.js';
import { HubClient, readTokenFile } from '../src/core/hub-client/client.js';
import { median, type BenchResult } from './stats.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin', 'agentscm.js');
const REPO = 'acme/demo';
const PROFILE = 'default';
const ROUNDS = 7;
const FILES = 1000;
const STREAM = 6_000_000;

// Child processes get a minimal environment: a shell's NODE_EXTRA_CA_CERTS, say, adds ~80 ms to every
// node start and is no part of what collect costs.
const BASE_ENV: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

function cli(args: string[], env: NodeJS.ProcessEnv = BASE_ENV): Record<string, unknown> {
  const r = spawnSync(process.execPath, [BIN, ...args, '--json'], { encoding: 'utf8', env, maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`agentscm ${args.slice(0, 3).join(' ')} failed (${r.status}): ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
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
  const engine = await startPodmanServiceIfNeeded();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-bench-collector-'));
  const env = { ...BASE_ENV, DOCKER_HOST: engine.endpoint.url };
  let hub: { url: string; stop(): void } | undefined;
  try {
    const image = await ensureBusyboxImage(engine.docker);
    const data = path.join(work, 'data');
    const keyDir = path.join(work, 'key');
    const tokenFile = path.join(work, 'token');
    const ws = path.join(work, 'ws');
    fs.cpSync(path.join(ROOT, 'examples', 'workspace'), ws, { recursive: true });
    fs.mkdirSync(path.join(ws, 'src'));
    for (let i = 0; i < FILES - 4; i++) fs.writeFileSync(path.join(ws, 'src', `f${String(i).padStart(4, '0')}.txt`), `file ${i}\n${randomBytes(256).toString('hex')}\n`);
    cli(['authority', 'init', '--data-dir', data]);
    cli(['authority', 'profile', 'add', '--data-dir', data, '--repository', REPO, '--profile', PROFILE, '--target', 'main', '--requirement', path.join(ROOT, 'examples', 'requirement.json')]);
    cli(['authority', 'token', 'issue', '--data-dir', data, '--owner', 'alice', '--agent', 'bench', '--out', tokenFile]);
    const key = cli(['agent-task', 'key', 'generate', '--key-dir', keyDir]);
    const reg = cli(['authority', 'enroll', '--data-dir', data, '--repository', REPO, '--profile', PROFILE, '--step', 'check', '--executor-id', 'c1', '--public-key', String(key.public_key), '--yes']);
    const probe = cli(['agent-task', 'runtime-probe', '--image', image], env);
    const profileFile = path.join(work, 'profile.json');
    fs.writeFileSync(
      profileFile,
      JSON.stringify({
        version: 1, kind: 'command', repository: REPO, profile: PROFILE, step_id: 'check', registration_id: reg.registration_id, registration_epoch: reg.registration_epoch,
        recipe: { image_id: image, argv: ['sh', 'check.sh'], working_dir: '/snapshot', timeout_ms: 60000, max_output_bytes: STREAM, network: 'none' },
        runtime_identity_digest: probe.runtime_identity_digest,
      }),
    );
    cli(['authority', 'collector-profile', 'install', '--data-dir', data, '--file', profileFile]);
    hub = await startHub(data);
    const call = ['--data-dir', data, '--endpoint', hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', tokenFile];
    const fresh = (change: string) => {
      cli(['checkpoint', change, '--data-dir', data, '--repository', REPO, '--profile', PROFILE, '--workspace', ws]);
      return cli(['agent-task', 'collector-claim', change, ...call, '--step', 'check', '--lease-ms', '600000', '--executor-id', 'c1']);
    };

    // 1. collect overhead
    const overhead: number[] = [];
    const whole: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const a = fresh(`ov${i}`);
      const att = a.attempt as Record<string, unknown>;
      const t0 = performance.now();
      const out = cli(['agent-task', 'collect', `ov${i}`, ...call, '--task-id', String(att.task_id), '--attempt-id', String(att.attempt_id), '--key-dir', keyDir], env);
      const ms = performance.now() - t0;
      if (out.outcome !== 'passed') throw new Error('the bench check did not pass');
      whole.push(ms);
      overhead.push(ms - Number(out.container_ms));
    }

    // 2. sign + retain + upload of a 16 MiB transfer
    const keyPair = loadKey(keyDir);
    const client = new HubClient({ endpoint: hub.url, repository: REPO, profile: PROFILE, token: readTokenFile(tokenFile), timeoutMs: 60_000 });
    const big = Buffer.alloc(STREAM, 0x61);
    const bigSha = createHash('sha256').update(big).digest('hex');
    const transfer: number[] = [];
    let size = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const a = fresh(`tx${i}`);
      const d = a.descriptor as unknown as CollectDescriptor & { recipe: CollectorProfile['recipe']; runtime_identity_digest: string };
      const profile = { recipe: d.recipe, runtime_identity_digest: d.runtime_identity_digest } as CollectorProfile;
      const requestBytes = executionRequestBytes(
        {
          repository: d.repository, profile: d.profile, step_id: d.step_id, revision: d.revision, task_id: d.task_id, task_digest: d.task_digest, attempt_id: d.attempt_id,
          attempt_digest: d.attempt_digest, execution_operation_id: d.execution_operation_id, fence: d.fence,
          collector_profile_install_id: d.collector_profile.install_id, collector_profile_digest: d.collector_profile.profile_digest,
        },
        profile,
      );
      const stream = { bytes: big, sha256: bigSha, totalBytes: STREAM, truncated: false };
      const now = new Date().toISOString();
      const record = buildRecord(d.execution_request_digest, d.runtime_identity_digest, {
        recovered: false,
        elapsedMs: 0,
        result: { exitCode: 0, timedOut: false, oomKilled: false, stdout: stream, stderr: stream, startedAt: now, finishedAt: now, removed: true },
      });
      const dir = path.join(work, 'tx', String(i));
      ensurePrivateDir(dir);
      const recordBytes = executionRecordBytes(record);
      const t0 = performance.now();
      const bytes = signTransfer(d, keyPair, requestBytes, recordBytes, d.runtime_identity_digest, `upl-bench-${i}`);
      retain({ dir, reservation: '', container: '', transfer: path.join(dir, 'transfer.bin'), upload: '' }, bytes);
      const view = (await client.upload(bytes)) as Record<string, unknown>;
      transfer.push(performance.now() - t0);
      if (view.outcome !== 'passed') throw new Error('the 16 MiB transfer was not accepted');
      size = bytes.length;
    }
    client.close();

    const ov = median(overhead);
    const tx = median(transfer);
    const lines = [
      `collect of a ${FILES}-file snapshot: whole process median ${median(whole).toFixed(0)} ms; overhead beyond the container run median ${ov.toFixed(0)} ms (min ${Math.min(...overhead).toFixed(0)}, max ${Math.max(...overhead).toFixed(0)}); target 400 ms, ratio ${(ov / 400).toFixed(2)}`,
      `sign + retain + upload of a ${(size / (1 << 20)).toFixed(2)} MiB transfer: median ${tx.toFixed(0)} ms (min ${Math.min(...transfer).toFixed(0)}, max ${Math.max(...transfer).toFixed(0)}); target 1000 ms, ratio ${(tx / 1000).toFixed(2)}`,
    ];
    return { name: 'collector', lines, ok: ov <= 400 && tx <= 1000 };
  } finally {
    hub?.stop();
    await engine.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}
