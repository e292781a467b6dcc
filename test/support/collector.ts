// A whole collector installation for tests: the example profile, a real Hub over HTTP, a real engine,
// the busybox test image, a signing key, an enrollment, the runtime probe and an installed collector
// profile. Every step goes through the built CLI, as an operator and an agent would run it.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { AGENTSCM_BIN, agentscm, json, type RunResult } from './cli.js';
import { ensureEngine, ensureTestImage } from './engine.js';
import { adminSetup, PROFILE, REPO, startHub, type RunningHub, type Setup } from './hub.js';

export interface CollectorRig extends Setup {
  hub: RunningHub;
  docker: Docker;
  env: NodeJS.ProcessEnv;
  image: string;
  keyDir: string;
  registrationId: string;
  registrationEpoch: number;
  runtimeDigest: string;
  profileFile: string;
  stop(): Promise<void>;
}

export function ok(r: RunResult, what: string): Record<string, unknown> {
  if (r.code !== 0) throw new Error(`${what} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
  return json(r);
}

export function profileDoc(rig: Pick<CollectorRig, 'image' | 'registrationId' | 'registrationEpoch' | 'runtimeDigest'>, argv = ['sh', 'check.sh']): Record<string, unknown> {
  return {
    version: 1,
    kind: 'command',
    repository: REPO,
    profile: PROFILE,
    step_id: 'check',
    registration_id: rig.registrationId,
    registration_epoch: rig.registrationEpoch,
    recipe: { image_id: rig.image, argv, working_dir: '/snapshot', timeout_ms: 60_000, max_output_bytes: 65_536, network: 'none' },
    runtime_identity_digest: rig.runtimeDigest,
  };
}

export async function collectorRig(): Promise<CollectorRig> {
  const s = adminSetup();
  const engine = await ensureEngine();
  const image = await ensureTestImage(engine.docker);
  const env = { ...process.env, DOCKER_HOST: engine.endpoint.url };
  const hub = await startHub(s.dataDir);
  const keyDir = path.join(s.root, 'key');
  const key = ok(agentscm(['agent-task', 'key', 'generate', '--key-dir', keyDir, '--json']), 'key generate');
  const reg = ok(
    agentscm(['authority', 'enroll', '--data-dir', s.dataDir, '--repository', REPO, '--profile', PROFILE, '--step', 'check', '--executor-id', 'collector-1', '--public-key', String(key.public_key), '--yes', '--json']),
    'enroll',
  );
  const probe = ok(agentscm(['agent-task', 'runtime-probe', '--image', image, '--json'], { env }), 'runtime-probe');
  const rig: CollectorRig = {
    ...s,
    hub,
    docker: engine.docker,
    env,
    image,
    keyDir,
    registrationId: String(reg.registration_id),
    registrationEpoch: Number(reg.registration_epoch),
    runtimeDigest: String(probe.runtime_identity_digest),
    profileFile: path.join(s.root, 'collector-profile.json'),
    stop: () => hub.stop(),
  };
  installProfile(rig, profileDoc(rig));
  return rig;
}

export function installProfile(rig: CollectorRig, doc: Record<string, unknown>): Record<string, unknown> {
  fs.writeFileSync(rig.profileFile, JSON.stringify(doc));
  return ok(agentscm(['authority', 'collector-profile', 'install', '--data-dir', rig.dataDir, '--file', rig.profileFile, '--json']), 'collector-profile install');
}

export function hubArgs(rig: CollectorRig): string[] {
  return ['--data-dir', rig.dataDir, '--endpoint', rig.hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', rig.tokenFile];
}

export function checkpoint(rig: CollectorRig, change: string): Record<string, unknown> {
  return ok(agentscm(['checkpoint', change, '--data-dir', rig.dataDir, '--repository', REPO, '--profile', PROFILE, '--workspace', rig.workspace, '--json']), 'checkpoint');
}

export interface Claimed {
  task_id: string;
  attempt_id: string;
  fence: number;
}

export function claim(rig: CollectorRig, change: string, leaseMs = 600_000): Claimed {
  const a = ok(agentscm(['agent-task', 'collector-claim', change, ...hubArgs(rig), '--step', 'check', '--lease-ms', String(leaseMs), '--executor-id', 'collector-1', '--json']), 'collector-claim');
  const att = a.attempt as Record<string, unknown>;
  return { task_id: String(att.task_id), attempt_id: String(att.attempt_id), fence: Number(att.fence) };
}

export function collect(rig: CollectorRig, change: string, c: Claimed, extraEnv: NodeJS.ProcessEnv = {}): RunResult {
  return agentscm(['agent-task', 'collect', change, ...hubArgs(rig), '--task-id', c.task_id, '--attempt-id', c.attempt_id, '--key-dir', rig.keyDir, '--json'], {
    env: { ...rig.env, ...extraEnv },
    timeoutMs: 120_000,
  });
}

/** collect as a child that runs while the test goes on (concurrent runs, a run held stopped). */
export function collectChild(rig: CollectorRig, change: string, c: Claimed, extraArgs: readonly string[] = []): { child: ChildProcess; done: Promise<RunResult> } {
  const args = [AGENTSCM_BIN, 'agent-task', 'collect', change, ...hubArgs(rig), '--task-id', c.task_id, '--attempt-id', c.attempt_id, '--key-dir', rig.keyDir, '--json', ...extraArgs];
  const child = spawn(process.execPath, args, { env: rig.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const done = new Promise<RunResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
  return { child, done };
}

export function retryUpload(rig: CollectorRig, c: Claimed): RunResult {
  return agentscm(['agent-task', 'retry-upload', '--endpoint', rig.hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', rig.tokenFile, '--attempt-id', c.attempt_id, '--key-dir', rig.keyDir, '--json']);
}

export function qualification(rig: CollectorRig, change: string): { code: number; doc: Record<string, unknown> } {
  const r = agentscm(['agent-task', 'qualification', change, ...hubArgs(rig), '--json']);
  return { code: r.code, doc: json(r) };
}

export function finalize(rig: CollectorRig, change: string): RunResult {
  return agentscm(['agent-task', 'collector-finalize', change, ...hubArgs(rig), '--json']);
}

/** Rows the Hub retained for an attempt, read from its journal (read-only). */
export function retainedTransfers(rig: CollectorRig, attemptId: string): { count: number; outcome: string | undefined } {
  const db = new Database(path.join(rig.dataDir, 'journal.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT outcome FROM transfers WHERE attempt_id = ?').all(attemptId) as { outcome: string }[];
    return { count: rows.length, outcome: rows[0]?.outcome };
  } finally {
    db.close();
  }
}

/** How many containers the engine created for an attempt (its event log, by the attempt label). */
export async function containersCreated(docker: Docker, attemptId: string, since: number): Promise<number> {
  const stream = (await docker.getEvents({
    since: Math.floor(since / 1000) - 1,
    until: Math.ceil(Date.now() / 1000) + 1,
    filters: { type: ['container'], event: ['create'], label: [`io.agentscm.attempt=${attemptId}`] },
  })) as unknown as NodeJS.ReadableStream;
  const text = await new Promise<string>((resolve, reject) => {
    let s = '';
    stream.on('data', (c: Buffer) => (s += c.toString()));
    stream.once('end', () => resolve(s));
    stream.once('error', reject);
  });
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { Action?: string; status?: string; Actor?: { Attributes?: Record<string, string> } })
    .filter((e) => (e.Action ?? e.status) === 'create' && e.Actor?.Attributes?.['io.agentscm.attempt'] === attemptId).length;
}

/** The execution state dir of an attempt in the rig's key dir. */
export function executionDir(rig: CollectorRig, attemptId: string): string {
  const root = path.join(rig.keyDir, 'state', 'executions');
  for (const n of fs.readdirSync(root)) {
    const r = JSON.parse(fs.readFileSync(path.join(root, n, 'reservation.json'), 'utf8')) as { attempt_id: string };
    if (r.attempt_id === attemptId) return path.join(root, n);
  }
  throw new Error(`no execution dir for ${attemptId}`);
}
