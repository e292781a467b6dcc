// `agent-task collect` for a finite-review attempt: the production review collector (seed 000). It
// prepares the canonical review with the shared finite controller (src/core/collector/review.ts) from the
// exact immutable snapshot in the local authority, then dispatches each prepared call to the Claude Code
// CLI, headless, from the operator-selected executable, in a private working directory and HOME under
// the collector's state (no candidate-controlled configuration: no project settings, no tools, no MCP
// servers, no session files), against the profile's provider only. Credentials come from the collector's
// own environment, never from candidate mounts.
//
// State (under executions/<E>/, beside a command collector's, so retry-upload works the same way):
//   reservation.json              the execution's reservation (upload_request_id), before any call
//   calls/<i>.reserved.json       call i's durable reservation (its ticket), create-only, fsynced
//   calls/<i>.dispatched.json     written just before the Claude Code process is started
//   calls/<i>.observation.json    the call's observation, retained before the next call is reserved
//   work/, home/                  the private working directory and HOME the CLI runs in
//   transfer.bin, upload.json     as for commands
// Reopening retained state never repeats a model call: a retained observation is reused; a call that
// was dispatched but has no observation is uncertain (exit 7, never redispatched); a call that was
// only reserved never started and is dispatched now.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { canonicalJsonBytes, parseStrictJson, type JsonValue } from '../core/canonical/json.js';
import {
  nextCall,
  observationJson,
  outputBoundFor,
  reviewBasisProblem,
  reviewerIdentityDigest,
  reviewRecordBytes,
  type PreparedCall,
  type PreparedReview,
  type ReviewCollectorProfile,
  type ReviewObservation,
} from '../core/collector/review.js';
import { encodeTransfer, headerBytes, headerSigningDigest, recordEntry, transferBinding, type ReviewTransferHeader } from '../core/collector/transfer.js';
import { sign, verificationKeyId, type KeyPair } from '../core/crypto/ed25519.js';
import { conflict, localState } from '../core/errors.js';
import { ensurePrivateDir, lstatOrUndefined, publishCreateOnly, readPrivateFile } from '../core/fs/safe.js';
import type { CollectDescriptor, ExecutionPaths, Reservation } from './collect.js';

/** Fault injector for the crash tests: the process SIGKILLs itself at the named point of call `AGENTSCM_FAULT_CALL` (default 0). */
export function reviewFaultPoint(name: 'after-call-reserve' | 'after-observation', index: number): void {
  if (process.env.AGENTSCM_FAULT === name && String(index) === (process.env.AGENTSCM_FAULT_CALL ?? '0')) process.kill(process.pid, 'SIGKILL');
}

const SYSTEM_PROMPT = 'You are an independent code reviewer. You have no tools. Answer only with the JSON object the request describes.';

/** SHA-256 of the executable's bytes, read through one descriptor that refuses a symlink. */
export function executableDigest(file: string): string {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    const h = createHash('sha256');
    const buf = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      h.update(buf.subarray(0, n));
    }
    return h.digest('hex');
  } finally {
    fs.closeSync(fd);
  }
}

export interface ReviewRunInputs {
  readonly d: CollectDescriptor;
  readonly paths: ExecutionPaths;
  readonly reservation: Reservation;
  readonly prepared: PreparedReview;
  readonly profile: ReviewCollectorProfile;
  /** The operator-selected Claude Code executable (absolute). */
  readonly executable: string;
  /** The collector's environment: PATH and the provider credential are taken from it, nothing else. */
  readonly env: NodeJS.ProcessEnv;
  readonly onCall?: (call: PreparedCall, reused: boolean) => void;
}

export interface ReviewRun {
  readonly observations: readonly ReviewObservation[];
  readonly executable: { before: string; after: string };
  /** Calls dispatched by this run (the others were retained by an earlier one). */
  readonly dispatched: number;
}

function callFile(paths: ExecutionPaths, index: number, what: 'reserved' | 'dispatched' | 'observation'): string {
  return path.join(paths.dir, 'calls', `${index}.${what}.json`);
}

function readObservation(file: string): ReviewObservation {
  return parseStrictJson(readPrivateFile(file, 'review observation', 16 << 20), { maxBytes: 16 << 20, what: 'review observation', integersOnly: true }) as unknown as ReviewObservation;
}

/** Runs (or resumes) every call the controller dispatches; returns the observations in order. */
export async function runReview(i: ReviewRunInputs): Promise<ReviewRun> {
  const { prepared, profile, paths } = i;
  const basis = reviewBasisProblem(profile.reviewer);
  if (basis) throw conflict(basis, 'REVIEW_BASIS_REFUSED');
  const apiKey = i.env.ANTHROPIC_API_KEY;
  for (const sub of ['calls', 'work', 'home']) ensurePrivateDir(path.join(paths.dir, sub), 'collector review dir');
  const deadline = Date.parse(i.reservation.reserved_at) + profile.budgets.wall_time_ms;
  const obs: ReviewObservation[] = [];
  let before: string | undefined;
  let dispatched = 0;
  for (;;) {
    const call = nextCall(prepared, obs);
    if (!call) break;
    const obsFile = callFile(paths, call.index, 'observation');
    if (lstatOrUndefined(obsFile)) {
      obs.push(readObservation(obsFile));
      i.onCall?.(call, true);
      continue;
    }
    if (lstatOrUndefined(callFile(paths, call.index, 'dispatched'))) {
      throw conflict(`review call ${call.index} was dispatched by a run that ended before retaining its observation: its result is lost and it is never repeated (reconcile the attempt)`, 'EXECUTION_UNCERTAIN');
    }
    // The call's durable reservation, before any external effect.
    publishCreateOnly(callFile(paths, call.index, 'reserved'), canonicalJsonBytes({ index: call.index, ticket: call.ticket, prompt_sha256: call.prompt_sha256, review_request_digest: prepared.requestDigest }));
    reviewFaultPoint('after-call-reserve', call.index);
    if (apiKey === undefined || apiKey === '') throw localState('ANTHROPIC_API_KEY is not set in the collector\'s environment: the review provider needs its credential', 'REVIEW_CREDENTIAL_MISSING');
    // The executable's bytes are checked before this run's first dispatch (a different executable runs
    // nothing) and again after its last; the record carries both.
    before ??= executableDigest(i.executable);
    if (before !== profile.reviewer.executable_sha256) {
      throw conflict('the reviewer executable is not the one the collector profile pins; nothing was dispatched (no fallback)', 'REVIEWER_EXECUTABLE_CHANGED');
    }
    const remaining = deadline - Date.now();
    let o: ReviewObservation;
    if (remaining <= 0) {
      // The wall-time budget is spent: the call is not dispatched, and the observation says so.
      const at = new Date().toISOString();
      o = { index: call.index, ticket: call.ticket, prompt_sha256: call.prompt_sha256, exit_code: -1, timed_out: true, stdout: emptyCapture(), started_at: at, finished_at: at };
    } else {
      publishCreateOnly(callFile(paths, call.index, 'dispatched'), canonicalJsonBytes({ index: call.index, ticket: call.ticket }));
      dispatched++;
      o = await dispatchClaude(i, call, apiKey, remaining, outputBoundFor(prepared, obs));
    }
    publishCreateOnly(obsFile, canonicalJsonBytes(observationJson(o)));
    obs.push(readObservation(obsFile));
    i.onCall?.(call, false);
    reviewFaultPoint('after-observation', call.index);
  }
  const after = executableDigest(i.executable);
  return { observations: obs, executable: { before: before ?? after, after }, dispatched };
}

function emptyCapture(): ReviewObservation['stdout'] {
  return { sha256: createHash('sha256').digest('hex'), total_bytes: 0, truncated: false, data_base64: '' };
}

/** One headless Claude Code run: the prompt on stdin, one JSON result on stdout, bounded and timed. */
function dispatchClaude(i: ReviewRunInputs, call: PreparedCall, apiKey: string, timeoutMs: number, maxOutput: number): Promise<ReviewObservation> {
  const { paths, profile } = i;
  const home = path.join(paths.dir, 'home');
  const env: NodeJS.ProcessEnv = {
    PATH: i.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    TMPDIR: home,
    LANG: 'C.UTF-8',
    ANTHROPIC_BASE_URL: profile.reviewer.provider_scope.base_url,
    ANTHROPIC_API_KEY: apiKey,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
  };
  const args = [
    '-p', '--output-format', 'json', '--bare', '--model', profile.reviewer.model, '--tools', '', '--setting-sources', '',
    '--strict-mcp-config', '--no-session-persistence', '--system-prompt', SYSTEM_PROMPT,
  ];
  const started = new Date();
  return new Promise((resolve, reject) => {
    const child = spawn(i.executable, args, { cwd: path.join(paths.dir, 'work'), env, stdio: ['pipe', 'pipe', 'ignore'], detached: true });
    const kept: Buffer[] = [];
    let total = 0;
    let keptBytes = 0;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, timeoutMs);
    child.stdout!.on('data', (b: Buffer) => {
      total += b.length;
      if (keptBytes < maxOutput) {
        const take = b.subarray(0, maxOutput - keptBytes);
        kept.push(take);
        keptBytes += take.length;
      }
    });
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(call.prompt);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(localState(`the reviewer executable could not be started: ${e.message}`, 'REVIEWER_UNAVAILABLE'));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const data = Buffer.concat(kept);
      resolve({
        index: call.index,
        ticket: call.ticket,
        prompt_sha256: call.prompt_sha256,
        exit_code: code === null ? -1 : code,
        timed_out: timedOut,
        stdout: { sha256: createHash('sha256').update(data).digest('hex'), total_bytes: total, truncated: data.length < total, data_base64: data.toString('base64') },
        started_at: started.toISOString(),
        finished_at: new Date().toISOString(),
      });
    });
  });
}

/** The review record of a finished run (the same bytes the Hub derives on replay). */
export function buildReviewRecord(prepared: PreparedReview, run: ReviewRun): Buffer {
  return reviewRecordBytes(prepared, run.observations, run.executable);
}

/** Signs the review transfer: ReviewRequest plus ReviewRecord, binding the observed reviewer identity. */
export function signReviewTransfer(d: CollectDescriptor, key: KeyPair, profile: ReviewCollectorProfile, prepared: PreparedReview, recordBytes: Buffer, observedExecutable: string, uploadRequestId: string): Buffer {
  const header: ReviewTransferHeader = {
    ...transferBinding(d),
    review_request_digest: prepared.requestDigest,
    observed_reviewer_identity_digest: reviewerIdentityDigest(profile.reviewer, observedExecutable),
    upload_request_id: uploadRequestId,
    records: [recordEntry('review_request', prepared.requestBytes), recordEntry('review_record', recordBytes)],
  };
  const hb = headerBytes(header);
  if (verificationKeyId(key.publicKey) !== d.registration.verification_key_id) throw localState('the signing key is not the enrolled key of this registration', 'WRONG_KEY');
  return encodeTransfer(hb, sign(headerSigningDigest(hb), key.secretKey), [prepared.requestBytes, recordBytes]);
}

export type { JsonValue };
