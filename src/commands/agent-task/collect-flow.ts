// The body of `agentscm agent-task collect` (collect.ts starts the engine reads, then loads this): one
// exact local collection of a claimed collector attempt (src/collectors/collect.ts has the state machine).
// The build bundles this module with what it imports, zod included, into one CommonJS file with V8's
// code cache, which is what collect.ts runs (scripts/build-bundles.ts says what stays outside).

import { Authority } from '../../core/authority/store.js';
import { canonicalJson, type JsonValue } from '../../core/canonical/json.js';
import type { Descriptor, ReviewDescriptor } from '../../core/contract/collector.js';
import { outputTail, renderTail, type OutputTail } from '../../core/collector/output-tail.js';
import { executionRecordBytes, executionRequestBytes, executionRequestDigest, recipeJson, type CollectorProfile } from '../../core/collector/transfer.js';
import { subjectToJson } from '../../core/authority/plan.js';
import { verificationKeyId } from '../../core/crypto/ed25519.js';
import { loadKey } from '../../core/crypto/keystore.js';
import { AgentscmError, conflict, localState } from '../../core/errors.js';
import type Docker from 'dockerode';
import { discardStaged, placeSnapshot } from '../../collectors/snapshot-stage.js';
import type { Stager } from '../../collectors/stager.js';
// Not bundled either: its terminal view is a dynamic import, which only an ES module can make here.
import { createProgressReporter, type ProgressReporter } from '../../collectors/progress.js';
import { lstatOrUndefined } from '../../core/fs/safe.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { idArg, idOpt, repositoryOpt, stringOpt } from '../options.js';
import { acquireCollectLock } from '../../collectors/collect-lock.js';
import { collectorDirs } from './collector-dirs.js';
import { CollectorSession, installedProfileRow, localSubject, malformed, optId, pickTask } from './collector-calls.js';

/** The engine connection and its identity reads, started by the command's entry before anything else. */
export interface EngineReads {
  readonly docker: Docker;
  /** The runtime identity digest observed now for the image (the engine's facts are read only once). */
  observed(imageId: string): Promise<string>;
}

/** `engine` gives the engine connection and its identity reads, already under way. */
export async function collect(ctx: CommandContext, inv: Invocation, engine: () => Promise<EngineReads>, stager: Stager): Promise<CommandResult> {
  const dataDir = stringOpt(inv, 'data-dir');
  const { keyDir, stateDir } = collectorDirs(inv);
  const attemptId = idOpt(inv, 'attempt-id');
  // One collect per attempt at a time: taken before anything is staged, reserved or placed, and held
  // until this run ends, whatever way it ends (a run that dies leaves it to be taken over).
  const lock = acquireCollectLock(stateDir, attemptId);
  try {
    return await collectLocked(ctx, inv, engine, stager, { dataDir, keyDir, stateDir, attemptId });
  } finally {
    lock.release();
  }
}

interface CollectDirs {
  readonly dataDir: string;
  readonly keyDir: string;
  readonly stateDir: string;
  readonly attemptId: string;
}

async function collectLocked(ctx: CommandContext, inv: Invocation, engine: () => Promise<EngineReads>, stager: Stager, dirs: CollectDirs): Promise<CommandResult> {
  const { dataDir, keyDir, stateDir, attemptId } = dirs;
  let local: { subject: ReturnType<typeof localSubject>['subject']; task: ReturnType<typeof pickTask> };
  try {
    const { subject, tasks } = localSubject(inv);
    local = { subject, task: pickTask(inv, tasks) };
  } catch (e) {
    // A retained transfer is uploaded again whatever the Change's current subject is now (a new
    // checkpoint gives fresh task ids): the Hub decides what an upload of those exact bytes is worth.
    if (e instanceof AgentscmError && e.kind === 'NOT_FOUND') {
      const again = await uploadRetainedAgain(ctx, inv, stateDir, attemptId);
      if (again) return again;
    }
    throw e;
  }
  const { subject, task } = local;
  const session = new CollectorSession(inv, 120_000);
  // The Hub's descriptor and status are asked at once, in parallel with the engine reads already under
  // way; nothing runs before the reservation below.
  const statusRead = () =>
    session.call('status', { operation: 'status', subject: subjectToJson(subject) as JsonValue, task_id: task.task_id, task_digest: task.task_digest, attempt_id: attemptId });
  const firstStatus = statusRead();
  firstStatus.catch(() => undefined);
  const descriptorAnswer = session.call('collector_descriptor', { operation: 'collector_descriptor', task_id: task.task_id, attempt_id: attemptId });
  descriptorAnswer.catch(() => undefined);
  // Local work while those answers come: the snapshot of the local subject's revision is staged by the
  // worker the entry started, into a fresh private directory (not the attempt's own), so that a fresh
  // run only has to move it in place. A resumed or recovered run discards it; a descriptor for another
  // revision is refused below.
  const staging = stager.stage({ stateDir, dataDir, revision: subject.revision, attemptId });
  staging.catch(() => undefined);
  let placed = false;
  let c: typeof import('../../collectors/collect.js');
  let progress: ProgressReporter;
  try {
    c = await import('../../collectors/collect.js');
    progress = await createProgressReporter({ out: ctx.stderr, json: inv.json });
  } catch (e) {
    await staging.then(discardStaged, () => undefined);
    session.close();
    throw e;
  }
  progress.start('materialize', 'staging');

  try {
    // The server-derived descriptor (checked with its answer, strictly and without transforms, so it
    // is used as sent), then its recompilation against the exact local authority.
    const d = (await descriptorAnswer).descriptor as unknown as Descriptor;
    if (d.task_id !== task.task_id || d.task_digest !== task.task_digest || d.revision !== subject.revision || d.step_id !== task.step.id || d.attempt_id !== attemptId) {
      throw malformed('the descriptor is not for this task of the current subject');
    }
    if (d.repository !== repositoryOpt(inv) || d.profile !== idOpt(inv, 'profile')) throw malformed('the descriptor is for another repository or profile');
    if ('review' in d) {
      const { collectReview } = await import('./collect-review.js');
      return await collectReview({ ctx, inv, d: d as unknown as ReviewDescriptor, subject, task, dataDir, keyDir, stateDir, session, c, progress, statusRead, firstStatus });
    }
    const profile = recompile(dataDir, d);
    const key = loadKey(keyDir);
    if (verificationKeyId(key.publicKey) !== d.registration.verification_key_id) throw localState('the key in --key-dir is not the enrolled key of the attempt\'s registration', 'WRONG_KEY');
    const requestBytes = executionRequestBytes(
      {
        repository: d.repository, profile: d.profile, step_id: d.step_id, revision: d.revision, task_id: d.task_id, task_digest: d.task_digest,
        attempt_id: d.attempt_id, attempt_digest: d.attempt_digest, execution_operation_id: d.execution_operation_id, fence: d.fence,
        collector_profile_install_id: d.collector_profile.install_id, collector_profile_digest: d.collector_profile.profile_digest,
      },
      profile,
    );
    if (executionRequestDigest(requestBytes) !== d.execution_request_digest) throw malformed('the descriptor\'s execution request differs from the one the local authority derives');

    const statusCheck = async (when: string, pending?: Promise<Record<string, JsonValue>>) => {
      const s = await (pending ?? statusRead());
      const att = s.attempt as Record<string, JsonValue> | null;
      // A leased attempt past its lease is not current execution authority: nothing runs for it.
      if (s.subject_current !== true || !att || att.state !== 'leased' || att.fence !== d.fence || att.currently_applicable !== true) {
        throw conflict(
          `the attempt is no longer applicable ${when} (state ${String(att?.state)}, currently_applicable ${String(att?.currently_applicable)}, subject_current ${String(s.subject_current)})`,
          'ATTEMPT_NOT_APPLICABLE',
        );
      }
    };

    let observedP: Promise<string> | undefined;
    const key64 = c.executionKey(d);
    const paths = c.executionPaths(stateDir, key64);
    let bytes = lstatOrUndefined(paths.reservation) ? c.readRetained(paths) : undefined;
    let resumed = false;
    let recovered = false;
    let runMs: number | null = null;
    let exitCode: number | undefined;
    // The captured output of a run this process completed, to show why a failed check failed.
    let captured: { stdout: OutputTail; stderr: OutputTail } | undefined;
    if (bytes) {
      resumed = true;
      c.skipAll(progress, ['materialize', 'reserve', 'run', 'sign', 'retain'], 'retained');
    } else {
      observedP = engine().then((e) => e.observed(profile.recipe.image_id));
      observedP.catch(() => undefined);
      progress.start('reserve');
      await statusCheck('before dispatch', firstStatus);
      const { reservation, fresh } = c.reserve(stateDir, d);
      resumed = !fresh;
      progress.done('reserve', fresh ? undefined : 'resumed');
      c.faultPoint('after-reserve');

      const staged = await staging;
      progress.done('materialize', 'staged');
      const { docker } = await engine();
      // Checked once the container exists and before it starts, so the probe overlaps materialization
      // and creation; a different runtime never starts the command (and there is no fallback).
      const checkRuntime = async () => {
        if ((await observedP!) !== profile.runtime_identity_digest) {
          throw conflict('the observed runtime identity is not the one the collector profile pins; nothing was run (no fallback runtime)', 'RUNTIME_IDENTITY_CHANGED');
        }
      };
      let recheck: Promise<Record<string, JsonValue>> | undefined;
      const run = await c.runOrRecover({
        docker,
        paths,
        reservation,
        profile,
        attemptId,
        // The runtime identity and the staged bytes (the linked files are checked while the container
        // is created and attached) must both be right before anything runs.
        beforeStart: async () => {
          await Promise.all([checkRuntime(), stager.verified()]);
        },
        // The recheck before signing is asked as soon as the command has ended, so that the Hub answers
        // while the output is collected and the removal confirmed; it is awaited before signing.
        onExited: () => {
          recheck = statusRead();
          recheck.catch(() => undefined);
        },
        snapshotDir: () => {
          const dir = placeSnapshot(stateDir, staged, d.revision, d.attempt_id);
          placed = true;
          progress.start('run', profile.recipe.argv.join(' '));
          return dir;
        },
      });
      if (!placed) progress.start('run', 'completing the run a crashed collector started');
      recovered = run.recovered;
      runMs = run.recovered ? null : run.elapsedMs;
      progress.done('run', `exit ${run.result.exitCode}${run.result.timedOut ? ', timed out' : ''}`);
      await checkRuntime();
      const observed = profile.runtime_identity_digest;
      const record = c.buildRecord(d.execution_request_digest, observed, run);
      exitCode = record.exit_code;
      captured = { stdout: outputTail(record.stdout.data_base64, record.stdout.truncated), stderr: outputTail(record.stderr.data_base64, record.stderr.truncated) };

      progress.start('sign');
      await statusCheck('before signing', recheck);
      const signed = c.signTransfer(d, key, requestBytes, executionRecordBytes(record), observed, reservation.upload_request_id);
      progress.done('sign');
      progress.start('retain');
      bytes = c.retain(paths, signed);
      progress.done('retain', `${bytes.length} bytes`);
      c.faultPoint('after-retain');
    }

    progress.start('upload');
    let view: Record<string, JsonValue>;
    try {
      view = await session.upload(bytes!, () => c.faultPoint('mid-upload'));
    } catch (e) {
      progress.fail('upload');
      if (e instanceof AgentscmError) {
        throw new AgentscmError(e.kind, e.code, `${e.message}; the signed transfer is retained: run \`agentscm agent-task retry-upload --attempt-id ${attemptId}\``, e.detail);
      }
      throw e;
    }
    c.recordUpload(paths, view);
    progress.done('upload', view.replayed === true ? 'already retained by the Hub' : undefined);
    await progress.close();
    const data = {
      task_id: task.task_id,
      attempt_id: attemptId,
      outcome: view.outcome,
      exit_code: exitCode ?? null,
      resumed,
      recovered,
      // Wall time of the container run itself (create to confirmed removal), so overhead can be measured.
      container_ms: runMs,
      upload: view,
      // A failed check's last output lines, escaped (the record holds all of it).
      ...(view.outcome === 'failed' && captured ? { stdout_tail: captured.stdout.text, stderr_tail: captured.stderr.text } : {}),
    };
    const why = view.outcome === 'failed' && captured ? renderTail('stdout', captured.stdout) + renderTail('stderr', captured.stderr) : '';
    return {
      data,
      text:
        `collected ${task.task_id}: ${String(view.outcome)}${exitCode !== undefined ? ` (exit ${exitCode})` : ''}${resumed ? ' [resumed from retained state]' : ''}\n` +
        why +
        `transfer ${String(view.transfer_digest)} retained by the Hub${view.replayed === true ? ' (retry)' : ''}\n` +
        `next: agentscm agent-task qualification ${idArg(inv, 0, 'CHANGE')} (then collector-finalize when next says so)`,
    };
  } catch (e) {
    await progress.close();
    throw e;
  } finally {
    // A staged snapshot that was not moved in place is derived data nobody will use.
    if (!placed) await staging.then(discardStaged, () => undefined);
    session.close();
  }
}

/**
 * The upload of an attempt's retained transfer, for a task the local subject no longer has; undefined
 * when this state dir retains no transfer of that attempt (for the --task-id given, if one was).
 */
async function uploadRetainedAgain(ctx: CommandContext, inv: Invocation, stateDir: string, attemptId: string): Promise<CommandResult | undefined> {
  const c = await import('../../collectors/collect.js');
  let found: ReturnType<typeof c.findExecution>;
  try {
    found = c.findExecution(stateDir, attemptId);
  } catch (e) {
    if (e instanceof AgentscmError && e.kind === 'NOT_FOUND') return undefined;
    throw e;
  }
  const taskId = optId(inv, 'task-id');
  if (taskId !== undefined && found.reservation.task_id !== taskId) return undefined;
  const bytes = c.readRetained(found.paths);
  if (!bytes) return undefined;
  const progress = await createProgressReporter({ out: ctx.stderr, json: inv.json });
  const session = new CollectorSession(inv, 120_000);
  try {
    c.skipAll(progress, ['materialize', 'reserve', 'run', 'sign', 'retain'], 'retained');
    progress.start('upload');
    let view: Record<string, JsonValue>;
    try {
      view = await session.upload(bytes);
    } catch (e) {
      progress.fail('upload');
      throw e;
    }
    c.recordUpload(found.paths, view);
    progress.done('upload', view.replayed === true ? 'already retained by the Hub' : undefined);
    await progress.close();
    return {
      data: {
        task_id: found.reservation.task_id,
        attempt_id: attemptId,
        outcome: view.outcome,
        exit_code: null,
        resumed: true,
        recovered: false,
        container_ms: null,
        upload: view,
      },
      text:
        `collected ${found.reservation.task_id}: ${String(view.outcome)} [resumed from retained state; the task is not in the Change's current subject]\n` +
        `transfer ${String(view.transfer_digest)} retained by the Hub${view.replayed === true ? ' (retry)' : ''}`,
    };
  } catch (e) {
    await progress.close();
    throw e;
  } finally {
    session.close();
  }
}

/**
 * Loads what collect otherwise loads while its first requests are in flight (the state machine): the
 * build calls it once before it stores the body's code cache. The answer schemas (zod) are left out: a
 * collection whose answers pass the hand-written checks never loads them, and a cache that carried them
 * would cost every run its deserialization.
 */
export async function preloadForCodeCache(): Promise<void> {
  await import('../../collectors/collect.js');
}

/** The installed profile the descriptor names, rechecked against the local authority. */
function recompile(dataDir: string, d: Descriptor): CollectorProfile {
  const a = Authority.open(dataDir, { readonly: true });
  try {
    const p = JSON.parse(installedProfileRow(a, d).canonical.toString('utf8')) as CollectorProfile;
    if (canonicalJson(recipeJson(p.recipe)) !== canonicalJson(d.recipe as unknown as JsonValue) || p.runtime_identity_digest !== d.runtime_identity_digest) {
      throw malformed('the descriptor\'s recipe is not the installed one');
    }
    return p;
  } finally {
    a.close();
  }
}
