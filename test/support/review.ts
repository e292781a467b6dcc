// A finite-review collector installation for tests: a requirement with one review_collector step whose
// required criterion is controller_only, a real Hub over HTTP, a signing key, an enrollment, the real
// Claude Code CLI (the pinned host) pointed at the loopback Anthropic stand-in, which answers each
// review call from a script and counts the calls, and an installed review profile.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { decodeRequirement } from '../../src/core/contract/requirement.js';
import { spawn } from 'node:child_process';
import { AGENTSCM_BIN, agentscm, type RunResult } from './cli.js';
import { ok, retainedTransfers } from './collector.js';
import { adminSetup, PROFILE, REPO, startHub, type RunningHub, type Setup } from './hub.js';
import { ensureHosts, startAnthropicStandin, type RecordedRequest, type Standin } from './hosts/index.js';

export { retainedTransfers };

export const REVIEW_REQUIREMENT = {
  version: 1,
  workflow: 'independent-review',
  steps: [
    {
      id: 'review',
      skill: 'review',
      action_class: 'review_collector',
      required: true,
      depends_on: [],
      summary: 'An independent reviewer looks at every path of the checkpointed revision.',
      criteria: [
        { id: 'independent-review', text: 'no changed path introduces a defect', required: true, controller_only: true },
        { id: 'style', text: 'the scripts are readable', required: false, controller_only: true },
      ],
      references: [],
    },
  ],
};

/** A finding the scripted reviewer reports for a path it is shown. */
export interface ScriptedFinding {
  criterion: string;
  severity: 'blocking' | 'advisory';
  text: string;
}

export interface ReviewRig extends Setup {
  hub: RunningHub;
  standin: Standin;
  claude: string;
  claudeDigest: string;
  keyDir: string;
  registrationId: string;
  registrationEpoch: number;
  requirementDigest: string;
  profileFile: string;
  env: NodeJS.ProcessEnv;
  /** What the scripted reviewer says about a path (none: no finding). */
  findings: Map<string, ScriptedFinding[]>;
  /** Runs before each model answer (a test may act between calls). */
  beforeAnswer?: (index: number) => void;
  stop(): Promise<void>;
}

/** The paths a review call shows the model, read from the request the stand-in received. */
export function pathsShown(req: RecordedRequest): string[] {
  const body = req.body as { messages?: { content?: string | { type: string; text?: string }[] }[] };
  const text = (body.messages ?? [])
    .map((m) => (typeof m.content === 'string' ? m.content : (m.content ?? []).map((c) => c.text ?? '').join('')))
    .join('\n');
  return [...text.matchAll(/^=== (.+) \(sha256 [0-9a-f]{64}, \d+ bytes\) ===$/gm)].map((m) => m[1]!);
}

let digestCache: { file: string; digest: string } | undefined;
function fileDigest(file: string): string {
  if (digestCache?.file === file) return digestCache.digest;
  const digest = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  digestCache = { file, digest };
  return digest;
}

export async function reviewRig(): Promise<ReviewRig> {
  const hosts = await ensureHosts();
  const reqFile = path.join(fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'review-req-')), 'requirement.json');
  fs.writeFileSync(reqFile, JSON.stringify(REVIEW_REQUIREMENT));
  const s = adminSetup(reqFile);
  const hub = await startHub(s.dataDir);
  const keyDir = path.join(s.root, 'key');
  const key = ok(agentscm(['agent-task', 'key', 'generate', '--key-dir', keyDir, '--json']), 'key generate');
  const reg = ok(
    agentscm(['authority', 'enroll', '--data-dir', s.dataDir, '--repository', REPO, '--profile', PROFILE, '--step', 'review', '--executor-id', 'reviewer-1', '--public-key', String(key.public_key), '--yes', '--json']),
    'enroll',
  );
  const findings = new Map<string, ScriptedFinding[]>();
  const rig = {} as ReviewRig;
  const standin = await startAnthropicStandin({
    reply: (index, req) => {
      rig.beforeAnswer?.(index);
      const shown = pathsShown(req);
      return JSON.stringify({ reviewed: shown, findings: shown.flatMap((p) => (findings.get(p) ?? []).map((f) => ({ ...f, path: p }))) });
    },
  });
  Object.assign(rig, {
    ...s,
    hub,
    standin,
    claude: hosts.claude,
    claudeDigest: fileDigest(fs.realpathSync(hosts.claude)),
    keyDir,
    registrationId: String(reg.registration_id),
    registrationEpoch: Number(reg.registration_epoch),
    requirementDigest: decodeRequirement(fs.readFileSync(reqFile)).digest,
    profileFile: path.join(s.root, 'review-profile.json'),
    env: { ...process.env, ANTHROPIC_API_KEY: standin.apiKey },
    findings,
    stop: async () => {
      await hub.stop();
      await standin.close();
    },
  });
  installReviewProfile(rig, reviewProfileDoc(rig));
  return rig;
}

export function reviewProfileDoc(rig: ReviewRig, budgets: Partial<Record<string, number>> = {}): Record<string, unknown> {
  return {
    version: 1,
    kind: 'review',
    repository: REPO,
    profile: PROFILE,
    step_id: 'review',
    registration_id: rig.registrationId,
    registration_epoch: rig.registrationEpoch,
    reviewer: { transport_basis: 'claude-code', executable_sha256: rig.claudeDigest, model: 'claude-standin-1', provider_scope: { provider: 'anthropic', base_url: rig.standin.baseUrl } },
    policy_digest: rig.requirementDigest,
    path_coverage: 'all',
    budgets: { max_calls: 8, max_call_input_bytes: 65_536, max_input_bytes: 1_048_576, max_output_bytes: 262_144, wall_time_ms: 300_000, ...budgets },
  };
}

export function installReviewProfile(rig: ReviewRig, doc: Record<string, unknown>): RunResult {
  fs.writeFileSync(rig.profileFile, JSON.stringify(doc));
  return agentscm(['authority', 'collector-profile', 'install', '--data-dir', rig.dataDir, '--file', rig.profileFile, '--json']);
}

export function hubArgs(rig: ReviewRig): string[] {
  return ['--data-dir', rig.dataDir, '--endpoint', rig.hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', rig.tokenFile];
}

export function reviewCheckpoint(rig: ReviewRig, change: string): Record<string, unknown> {
  return ok(agentscm(['checkpoint', change, '--data-dir', rig.dataDir, '--repository', REPO, '--profile', PROFILE, '--workspace', rig.workspace, '--json']), 'checkpoint');
}

export interface ReviewClaim {
  task_id: string;
  attempt_id: string;
}

export function reviewClaim(rig: ReviewRig, change: string): ReviewClaim {
  const a = ok(agentscm(['agent-task', 'collector-claim', change, ...hubArgs(rig), '--step', 'review', '--lease-ms', '600000', '--executor-id', 'reviewer-1', '--json']), 'collector-claim');
  const att = a.attempt as Record<string, unknown>;
  return { task_id: String(att.task_id), attempt_id: String(att.attempt_id) };
}

/**
 * collect as a child process, awaited without blocking this process: the model stand-in answers from
 * this process's event loop, so a synchronous spawn would never let Claude Code's request through.
 */
export function reviewCollect(rig: ReviewRig, change: string, c: ReviewClaim, extraEnv: NodeJS.ProcessEnv = {}, reviewer = rig.claude): Promise<RunResult> {
  const args = [AGENTSCM_BIN, 'agent-task', 'collect', change, ...hubArgs(rig), '--task-id', c.task_id, '--attempt-id', c.attempt_id, '--key-dir', rig.keyDir, '--reviewer', reviewer, '--json'];
  const child = spawn(process.execPath, args, { env: { ...rig.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
  return new Promise<RunResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

export function reviewRetryUpload(rig: ReviewRig, c: ReviewClaim): RunResult {
  return agentscm(['agent-task', 'retry-upload', '--endpoint', rig.hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', rig.tokenFile, '--attempt-id', c.attempt_id, '--key-dir', rig.keyDir, '--json']);
}

/** The execution state dir of an attempt in the rig's key dir. */
export function reviewExecutionDir(rig: ReviewRig, attemptId: string): string {
  const root = path.join(rig.keyDir, 'state', 'executions');
  for (const n of fs.readdirSync(root)) {
    const r = JSON.parse(fs.readFileSync(path.join(root, n, 'reservation.json'), 'utf8')) as { attempt_id: string };
    if (r.attempt_id === attemptId) return path.join(root, n);
  }
  throw new Error(`no execution dir for ${attemptId}`);
}
