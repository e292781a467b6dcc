// `agent-task collect` and `retry-upload`: one exact local collection for one claimed collector
// attempt, crash-safe. No claim loop and no fallback runtime.
//
// Collector state (owner-private, non-symlink; default KEY_DIR/state):
//   executions/<E>/reservation.json   create-only, written before any external effect
//   executions/<E>/container.json     create-only, written when the container exists (before it starts)
//   executions/<E>/transfer.bin       create-only: the signed transfer, retained before upload
//   executions/<E>/upload.json        the Hub's answer to the upload (replaced durably)
//   snapshots/<S>/                    the materialized snapshot (S: one digest component)
//   locks/<L>.lock                    the attempt's collect lock while a collect runs (collect-lock.ts)
// E and S are digests of the attempt's identity, so a rerun of collect finds its own state.
//
// Reopening retained state never reruns a command: a retained transfer is only uploaded again; a
// container that was started is waited for and its record completed; a container that was created but
// is gone, with no record, is reported uncertain. Only an execution that provably never started runs.

import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { canonicalJson, canonicalJsonBytes, parseStrictJson, type JsonValue } from '../core/canonical/json.js';
import {
  collectorProfileDigest,
  deriveOutcome,
  encodeTransfer,
  executionRecordBytes,
  executionRequestBytes,
  executionRequestDigest,
  headerBytes,
  headerSigningDigest,
  recordEntry,
  transferBinding,
  type CollectorProfile,
  type ExecutionRecord,
  type TransferHeader,
} from '../core/collector/transfer.js';
import { sign, verificationKeyId } from '../core/crypto/ed25519.js';
import { AgentscmError, conflict, localState } from '../core/errors.js';
import { assertPrivateDir, ensurePrivateDir, lstatOrUndefined, publishCreateOnly, readPrivateFile, replaceDurably } from '../core/fs/safe.js';
import type { KeyPair } from '../core/crypto/ed25519.js';
import { BoundedCapture, containerConfig, demultiplex, removeConfirmed, runInContainer, SNAPSHOT_MOUNT, type OciRunResult } from './oci-run.js';
import { engineFailure, statusOf } from './runtime-probe.js';
import type { ProgressReporter } from './progress.js';

/** Fault injector for the crash tests: the process SIGKILLs itself at the named point. */
export function faultPoint(name: 'after-reserve' | 'after-start' | 'after-retain' | 'mid-upload'): void {
  if (process.env.AGENTSCM_FAULT === name) process.kill(process.pid, 'SIGKILL');
}

/** The descriptor fields collect uses (validated by the command with the contract schema). */
export interface CollectDescriptor {
  readonly audience: string;
  readonly repository: string;
  readonly profile: string;
  readonly step_id: string;
  readonly revision: string;
  readonly task_id: string;
  readonly task_digest: string;
  readonly attempt_id: string;
  readonly attempt_digest: string;
  readonly execution_operation_id: string;
  readonly fence: number;
  readonly origin: { readonly owner_id: string; readonly agent_id: string; readonly grant_generation: string };
  readonly registration: { readonly registration_id: string; readonly executor_id: string; readonly registration_epoch: number; readonly verification_key_id: string };
  readonly collector_profile: { readonly install_id: string; readonly profile_digest: string };
  readonly execution_request_digest: string;
}

export interface ExecutionPaths {
  readonly dir: string;
  readonly reservation: string;
  readonly container: string;
  readonly transfer: string;
  readonly upload: string;
}

export function executionKey(d: { audience: string; attempt_id: string; execution_operation_id: string }): string {
  return createHash('sha256').update(canonicalJsonBytes({ audience: d.audience, attempt_id: d.attempt_id, execution_operation_id: d.execution_operation_id })).digest('hex');
}

export function executionPaths(stateDir: string, key: string): ExecutionPaths {
  const dir = path.join(stateDir, 'executions', key);
  return {
    dir,
    reservation: path.join(dir, 'reservation.json'),
    container: path.join(dir, 'container.json'),
    transfer: path.join(dir, 'transfer.bin'),
    upload: path.join(dir, 'upload.json'),
  };
}

export function containerName(key: string): string {
  return `agentscm-collect-${key.slice(0, 32)}`;
}

export interface Reservation {
  readonly version: 1;
  readonly attempt_id: string;
  readonly task_id: string;
  readonly upload_request_id: string;
  readonly container_name: string;
  readonly execution_request_digest: string;
  readonly reserved_at: string;
}

/**
 * Durably reserves the execution, or returns the reservation that already exists. The caller holds the
 * attempt's collect lock (collect-lock.ts): a reservation found here was left by a run that has ended.
 */
export function reserve(stateDir: string, d: CollectDescriptor): { paths: ExecutionPaths; reservation: Reservation; fresh: boolean } {
  ensurePrivateDir(stateDir, 'collector state dir');
  ensurePrivateDir(path.join(stateDir, 'executions'), 'collector state dir');
  const key = executionKey(d);
  const paths = executionPaths(stateDir, key);
  ensurePrivateDir(paths.dir, 'collector execution dir');
  const reservation: Reservation = {
    version: 1,
    attempt_id: d.attempt_id,
    task_id: d.task_id,
    upload_request_id: `upl-${randomBytes(16).toString('hex')}`,
    container_name: containerName(key),
    execution_request_digest: d.execution_request_digest,
    reserved_at: new Date().toISOString(),
  };
  const fresh = publishCreateOnly(paths.reservation, canonicalJson(reservation as unknown as JsonValue) + '\n');
  if (fresh) return { paths, reservation, fresh };
  return { paths, reservation: readReservation(paths), fresh: false };
}

export function readReservation(paths: ExecutionPaths): Reservation {
  const doc = parseStrictJson(readPrivateFile(paths.reservation, 'collector reservation', 1 << 16), { maxBytes: 1 << 16, what: 'collector reservation' }) as unknown as Reservation;
  if (doc.version !== 1 || typeof doc.upload_request_id !== 'string' || typeof doc.container_name !== 'string') throw localState('collector reservation is corrupt', 'STATE_CORRUPT');
  return doc;
}

export function readRetained(paths: ExecutionPaths): Buffer | undefined {
  if (!lstatOrUndefined(paths.transfer)) return undefined;
  return readPrivateFile(paths.transfer, 'retained transfer', 17 * 1024 * 1024);
}

/** Finds the execution state of an attempt (retry-upload has no descriptor). */
export function findExecution(stateDir: string, attemptId: string): { paths: ExecutionPaths; reservation: Reservation } {
  assertPrivateDir(stateDir, 'collector state dir');
  const root = path.join(stateDir, 'executions');
  const names = lstatOrUndefined(root) ? fs.readdirSync(root) : [];
  for (const n of names.slice(0, 100_000)) {
    if (!/^[0-9a-f]{64}$/.test(n)) continue;
    const paths = executionPaths(stateDir, n);
    if (!lstatOrUndefined(paths.reservation)) continue;
    const r = readReservation(paths);
    if (r.attempt_id === attemptId) return { paths, reservation: r };
  }
  throw new AgentscmError('NOT_FOUND', 'NO_RETAINED_EXECUTION', `no retained collector execution for attempt ${attemptId} in this state dir`);
}

// ---- materialization -------------------------------------------------------------------------------

// ---- running and recovering ------------------------------------------------------------------------

/** What a run (or its recovery) produced, before it becomes an ExecutionRecord. */
export interface RunOutcome {
  readonly result: Pick<OciRunResult, 'exitCode' | 'timedOut' | 'oomKilled' | 'stdout' | 'stderr' | 'startedAt' | 'finishedAt' | 'removed'>;
  readonly recovered: boolean;
  /**
   * Wall time of the container's run (create to confirmed removal) without the time the collector's own
   * work (runtime check, container.json) held its start back; 0 for a recovered run.
   */
  readonly elapsedMs: number;
}

interface ContainerState {
  readonly exists: boolean;
  readonly started: boolean;
}

async function inspectByName(docker: Docker, name: string): Promise<ContainerState> {
  try {
    const info = await docker.getContainer(name).inspect();
    const st = info.State ?? {};
    const started = st.Status !== 'created' && st.Status !== 'configured' && !(st.StartedAt ?? '').startsWith('0001-01-01');
    return { exists: true, started };
  } catch (e) {
    if (statusOf(e) === 404) return { exists: false, started: false };
    throw engineFailure('inspecting the collector container', e);
  }
}

/**
 * Completes the record of a container that a crashed collector started: waits for it to end (killing it
 * at the recipe's timeout, counted from its start), reads its bounded output, removes it with confirmation.
 */
async function recoverStarted(docker: Docker, name: string, timeoutMs: number, maxOutput: number): Promise<RunOutcome> {
  const container = docker.getContainer(name);
  let info = await container.inspect();
  let timedOut = false;
  if (info.State?.Running) {
    const started = Date.parse(info.State.StartedAt ?? '') || Date.now();
    const left = Math.max(0, started + timeoutMs - Date.now());
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([container.wait().then(() => 'done' as const), new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), left)))]);
    clearTimeout(timer);
    if (waited === 'timeout') {
      timedOut = true;
      await container.kill({ signal: 'SIGKILL' }).catch(() => undefined);
      await container.wait();
    }
  }
  info = await container.inspect();
  const state = info.State ?? {};
  const out = new BoundedCapture(maxOutput);
  const err = new BoundedCapture(maxOutput);
  // follow: the logs answer as a stream (of multiplexed frames), which ends with the finished container.
  const logs = await container.logs({ stdout: true, stderr: true, follow: true });
  await demultiplex(docker, logs, out, err);
  const removed = await removeConfirmed(docker, name);
  const now = new Date().toISOString();
  return {
    recovered: true,
    elapsedMs: 0,
    result: {
      exitCode: typeof state.ExitCode === 'number' ? state.ExitCode : -1,
      timedOut,
      oomKilled: state.OOMKilled === true,
      stdout: out.result(),
      stderr: err.result(),
      startedAt: state.StartedAt && !state.StartedAt.startsWith('0001') ? state.StartedAt : now,
      finishedAt: state.FinishedAt && !state.FinishedAt.startsWith('0001') ? state.FinishedAt : now,
      removed,
    },
  };
}

export interface RunInputs {
  readonly docker: Docker;
  readonly paths: ExecutionPaths;
  readonly reservation: Reservation;
  readonly profile: CollectorProfile;
  readonly snapshotDir: () => string;
  readonly attemptId: string;
  /** Awaited once the container exists, before it starts; throwing removes it unstarted. */
  readonly beforeStart?: () => Promise<void>;
  /** Called when the command ended, before its removal is confirmed (not for a recovered run). */
  readonly onExited?: () => void;
}

/**
 * Runs the recipe once, or completes the one run that already happened. Never starts a second command
 * for the same reservation.
 */
export async function runOrRecover(i: RunInputs): Promise<RunOutcome> {
  const name = i.reservation.container_name;
  const recipe = i.profile.recipe;
  const st = await inspectByName(i.docker, name);
  if (st.exists && st.started) return recoverStarted(i.docker, name, recipe.timeout_ms, recipe.max_output_bytes);
  if (st.exists) {
    // Created by a collector that died before starting it: the command never ran.
    if (!(await removeConfirmed(i.docker, name))) throw localState(`cannot remove the never-started container ${name}`, 'CLEANUP_FAILED');
  } else if (lstatOrUndefined(i.paths.container)) {
    throw conflict(
      `the execution of attempt ${i.attemptId} is uncertain: its container was created but is gone and no record was retained; it is never rerun (reconcile the attempt)`,
      'EXECUTION_UNCERTAIN',
    );
  }
  const snapshotDir = i.snapshotDir();
  const t0 = performance.now();
  const result = await runInContainer(i.docker, {
    imageId: recipe.image_id,
    argv: recipe.argv,
    snapshotDir,
    workingDir: recipe.working_dir,
    timeoutMs: recipe.timeout_ms,
    maxOutputBytes: recipe.max_output_bytes,
    name,
    labels: { 'io.agentscm.attempt': i.attemptId },
    // The runtime check comes before the durable container.json: a container removed unstarted for a
    // changed runtime leaves no record claiming it may have run.
    onCreated: async (id) => {
      await i.beforeStart?.();
      publishCreateOnly(i.paths.container, canonicalJson({ container_id: id, name }) + '\n');
    },
    onStarted: () => faultPoint('after-start'),
    onExited: () => i.onExited?.(),
  });
  // The collector's own work that held the start back (the runtime check, container.json) is not the
  // container's run: it is kept out of elapsedMs.
  return { result, recovered: false, elapsedMs: Math.round(performance.now() - t0 - result.heldMs) };
}

/** The isolation the run asked the engine for, read from the exact configuration runInContainer uses. */
export function isolationOf(): ExecutionRecord['isolation'] {
  const cfg = containerConfig({ imageId: 'sha256:' + '0'.repeat(64), argv: ['true'], snapshotDir: '/x', timeoutMs: 1, maxOutputBytes: 0 });
  const hc = cfg.HostConfig!;
  return {
    network: 'none',
    snapshot_read_only: (hc.Binds ?? []).every((b) => b.endsWith(`:${SNAPSHOT_MOUNT}:ro`)),
    root_read_only: hc.ReadonlyRootfs === true,
    capabilities_dropped: (hc.CapDrop ?? []).includes('ALL'),
    no_new_privileges: (hc.SecurityOpt ?? []).includes('no-new-privileges'),
  };
}

export function buildRecord(requestDigest: string, observedRuntime: string, run: RunOutcome): ExecutionRecord {
  const r = run.result;
  const cap = (c: OciRunResult['stdout']) => ({ sha256: c.sha256, total_bytes: c.totalBytes, truncated: c.truncated, data_base64: c.bytes.toString('base64') });
  const base = { exit_code: r.exitCode, timed_out: r.timedOut, oom_killed: r.oomKilled };
  return {
    version: 1,
    type: 'execution_record',
    execution_request_digest: requestDigest,
    outcome: deriveOutcome(base),
    ...base,
    started_at: r.startedAt,
    finished_at: r.finishedAt,
    stdout: cap(r.stdout),
    stderr: cap(r.stderr),
    observed_runtime_identity_digest: observedRuntime,
    isolation: isolationOf(),
    cleanup: { container_removed: r.removed },
    recovered: run.recovered,
  };
}

/** Signs the header over both records and assembles the transfer bytes. */
export function signTransfer(d: CollectDescriptor, key: KeyPair, requestBytes: Buffer, recordBytes: Buffer, observedRuntime: string, uploadRequestId: string): Buffer {
  const header: TransferHeader = {
    ...transferBinding(d),
    execution_request_digest: executionRequestDigest(requestBytes),
    observed_runtime_identity_digest: observedRuntime,
    upload_request_id: uploadRequestId,
    records: [recordEntry('execution_request', requestBytes), recordEntry('execution_record', recordBytes)],
  };
  const hb = headerBytes(header);
  if (verificationKeyId(key.publicKey) !== d.registration.verification_key_id) throw localState('the signing key is not the enrolled key of this registration', 'WRONG_KEY');
  const sig = sign(headerSigningDigest(hb), key.secretKey);
  return encodeTransfer(hb, sig, [requestBytes, recordBytes]);
}

/** Retains the signed transfer durably (create-only). An existing retained transfer always wins. */
export function retain(paths: ExecutionPaths, bytes: Buffer): Buffer {
  if (publishCreateOnly(paths.transfer, bytes)) return bytes;
  return readRetained(paths)!;
}

export function recordUpload(paths: ExecutionPaths, answer: JsonValue): void {
  replaceDurably(paths.upload, canonicalJson(answer) + '\n');
}

export { collectorProfileDigest, executionRequestBytes, executionRecordBytes };

/** Steps of a progress reporter that are skipped when resuming from retained state. */
export function skipAll(p: ProgressReporter, steps: readonly ('reserve' | 'materialize' | 'run' | 'sign' | 'retain')[], why: string): void {
  for (const s of steps) p.skip(s, why);
}
