// Retained collector transfers without a container run: an authority whose requirement has N required
// command_collector steps, one enrolled executor key and an installed collector profile per step, a
// real `hub serve`, and for each step a real collector_claim and a signed transfer uploaded on the
// real upload route, which the Hub validates in full as it would a collector's. Only the execution
// record is made up (exit 0, the given output size), as the seed's synthetic tests do: this exercises
// finalization, qualification and recovery at sizes a container run would take minutes to produce.

import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { Authority, initAuthority } from '../../src/core/authority/store.js';
import { subjectToJson, type Task } from '../../src/core/authority/plan.js';
import type { Subject } from '../../src/core/authority/types.js';
import type { JsonValue } from '../../src/core/canonical/json.js';
import { collectorProfileBytes, collectorProfileDigest, executionRecordBytes, executionRequestBytes, executionRequestDigest, type CollectorProfile } from '../../src/core/collector/transfer.js';
import { decodeRequirement } from '../../src/core/contract/requirement.js';
import { sha256Hex } from '../../src/core/crypto/digest.js';
import { generateKeyPair, toHex, verificationKeyId, type KeyPair } from '../../src/core/crypto/ed25519.js';
import { checkpoint } from '../../src/core/native/checkpoint.js';
import { signTransfer } from '../../src/collectors/collect.js';
import { opPath, postOp } from './hub-http.js';
import { EXAMPLE_WORKSPACE, PROFILE, REPO, startHub, tempDir, type RunningHub } from './hub.js';

export interface TransferRig {
  root: string;
  dataDir: string;
  token: string;
  tokenId: string;
  tokenFile: string;
  workspace: string;
  key: KeyPair;
  hub: RunningHub;
  agent: http.Agent;
  subject: Subject;
  tasks: Task[];
  /** Registration id per step id. */
  registrations: Map<string, string>;
  op(body: JsonValue): Promise<{ status: number; body: Record<string, any> }>; // eslint-disable-line @typescript-eslint/no-explicit-any
  stop(): Promise<void>;
}

const RUNTIME = 'a'.repeat(64);
const IMAGE = `sha256:${'b'.repeat(64)}`;

/** A requirement of `steps` required command_collector steps (s00, s01, ...), no dependencies. */
export function collectorRequirement(steps: number): Buffer {
  const doc = {
    version: 1,
    workflow: 'many-checks',
    steps: Array.from({ length: steps }, (_, i) => ({
      id: `s${String(i).padStart(2, '0')}`,
      skill: 'run-check',
      action_class: 'command_collector',
      required: true,
      depends_on: [],
      summary: 'Run one check through the enrolled command collector.',
      criteria: [{ id: 'passes', text: 'the check exits 0', required: true, controller_only: false }],
      references: [],
    })),
  };
  return Buffer.from(JSON.stringify(doc));
}

export async function transferRig(steps: number, hubArgs: readonly string[] = []): Promise<TransferRig> {
  const root = tempDir('transfers');
  const dataDir = path.join(root, 'data');
  initAuthority(dataDir);
  const req = decodeRequirement(collectorRequirement(steps));
  const key = generateKeyPair();
  const registrations = new Map<string, string>();
  const a = Authority.open(dataDir);
  let token: string;
  let tokenId: string;
  try {
    a.addProfile({ repository: REPO, profile: PROFILE, target: 'main', requirement: req.requirement, canonical: req.canonical, requirement_digest: req.digest });
    ({ token, token_id: tokenId } = a.issueToken('alice', 'claude'));
    for (const s of req.requirement.steps) {
      const e = a.enroll({ repository: REPO, profile: PROFILE, step_id: s.id, executor_id: 'collector-1', public_key: toHex(key.publicKey), verification_key_id: verificationKeyId(key.publicKey) });
      const p = profileOf(s.id, e.registration_id, e.registration_epoch);
      a.installCollectorProfile({ registration_id: e.registration_id, registration_epoch: e.registration_epoch, repository: REPO, profile: PROFILE, step_id: s.id, canonical: collectorProfileBytes(p), profile_digest: collectorProfileDigest(p) });
      registrations.set(s.id, e.registration_id);
    }
  } finally {
    a.close();
  }
  const tokenFile = path.join(root, 'token');
  fs.writeFileSync(tokenFile, token + '\n', { mode: 0o600 });
  const workspace = path.join(root, 'ws');
  fs.cpSync(EXAMPLE_WORKSPACE, workspace, { recursive: true });
  checkpoint(dataDir, { repository: REPO, profile: PROFILE, change_id: 'c1', workspace });
  const au = Authority.open(dataDir);
  let subject: Subject;
  let tasks: Task[];
  try {
    subject = au.currentSubject(REPO, PROFILE, 'c1');
    tasks = au.tasksFor(subject);
  } finally {
    au.close();
  }
  const agent = new http.Agent({ keepAlive: true });
  const rig: TransferRig = {
    root,
    dataDir,
    token,
    tokenId,
    tokenFile,
    workspace,
    key,
    hub: await startHub(dataDir, hubArgs),
    agent,
    subject,
    tasks,
    registrations,
    // Through rig.hub, which a caller may replace with a restarted Hub.
    op: (body) => postOp(agent, rig.hub.url, opPath(REPO, PROFILE), token, body),
    stop: async () => {
      agent.destroy();
      await rig.hub.stop();
    },
  };
  return rig;
}

function profileOf(stepId: string, registrationId: string, epoch: number): CollectorProfile {
  return {
    version: 1,
    kind: 'command',
    repository: REPO,
    profile: PROFILE,
    step_id: stepId,
    registration_id: registrationId,
    registration_epoch: epoch,
    recipe: { image_id: IMAGE, argv: ['sh', 'check.sh'], working_dir: '/snapshot', timeout_ms: 60_000, max_output_bytes: 6_000_000, network: 'none' },
    runtime_identity_digest: RUNTIME,
  };
}

/** Claims the task with collector_claim and returns the descriptor and attempt the Hub answered. */
export async function claimCollector(rig: TransferRig, task: Task, n: number): Promise<{ descriptor: Record<string, any>; attempt: Record<string, any> }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = await rig.op({
    operation: 'collector_claim',
    request_id: `claim-${task.step.id}-${n}`,
    subject: subjectToJson(rig.subject),
    task_id: task.task_id,
    task_digest: task.task_digest,
    execution_operation_id: `exec-${task.step.id}-${n}`,
    requested_lease_ms: 600_000,
    executor_id: 'collector-1',
  });
  if (r.status !== 200) throw new Error(`collector_claim: ${r.status} ${JSON.stringify(r.body)}`);
  return { descriptor: r.body.descriptor, attempt: r.body.attempt };
}

/**
 * A signed transfer for a claimed descriptor with `outputBytes` bytes of stdout and as many of stderr
 * (each at most 6,000,000: two such streams, base64, make an envelope just under 16 MiB).
 */
export function signedTransfer(rig: TransferRig, d: Record<string, any>, outputBytes: number, uploadId: string): Buffer { // eslint-disable-line @typescript-eslint/no-explicit-any
  const p = profileOf(d.step_id, d.registration.registration_id, d.registration.registration_epoch);
  const requestBytes = executionRequestBytes(
    {
      repository: d.repository,
      profile: d.profile,
      step_id: d.step_id,
      revision: d.revision,
      task_id: d.task_id,
      task_digest: d.task_digest,
      attempt_id: d.attempt_id,
      attempt_digest: d.attempt_digest,
      execution_operation_id: d.execution_operation_id,
      fence: d.fence,
      collector_profile_install_id: d.collector_profile.install_id,
      collector_profile_digest: d.collector_profile.profile_digest,
    },
    p,
  );
  const out = Buffer.alloc(outputBytes, 0x61);
  const captured = { sha256: sha256Hex(out), total_bytes: out.length, truncated: false, data_base64: out.toString('base64') };
  const recordBytes = executionRecordBytes({
    version: 1,
    type: 'execution_record',
    execution_request_digest: executionRequestDigest(requestBytes),
    outcome: 'passed',
    exit_code: 0,
    timed_out: false,
    oom_killed: false,
    started_at: '2026-01-01T00:00:00.000Z',
    finished_at: '2026-01-01T00:00:01.000Z',
    stdout: captured,
    stderr: captured,
    observed_runtime_identity_digest: RUNTIME,
    isolation: { network: 'none', snapshot_read_only: true, root_read_only: true, capabilities_dropped: true, no_new_privileges: true },
    cleanup: { container_removed: true },
    recovered: false,
  });
  return signTransfer(d as never, rig.key, requestBytes, recordBytes, RUNTIME, uploadId);
}

/** POSTs transfer bytes on the upload route. */
export function upload(rig: TransferRig, bytes: Buffer): Promise<{ status: number; body: Record<string, any> }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const u = new URL(rig.hub.url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: `${opPath(REPO, PROFILE)}/collector-upload`,
        method: 'POST',
        agent: rig.agent,
        headers: { authorization: `Bearer ${rig.token}`, 'content-type': 'application/octet-stream', 'content-length': bytes.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(bytes);
  });
}

/** Claims, signs and uploads one passing transfer for each task; returns the attempts. */
export async function retainAll(rig: TransferRig, outputBytes: number, tasks: readonly Task[] = rig.tasks): Promise<Record<string, any>[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const attempts = [];
  for (const t of tasks) {
    const { descriptor, attempt } = await claimCollector(rig, t, 1);
    const r = await upload(rig, signedTransfer(rig, descriptor, outputBytes, `up-${t.step.id}`));
    if (r.status !== 200) throw new Error(`upload: ${r.status} ${JSON.stringify(r.body)}`);
    attempts.push(attempt);
  }
  return attempts;
}
