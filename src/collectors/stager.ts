// The snapshot staging worker (stage-worker.ts, which runs snapshot-stage.ts), started ahead of its
// request. A module of its own, apart from snapshot-stage.ts, because it finds the worker's file beside
// itself (import.meta.url): collect's entry starts it, and collect's one-file body only hands it the
// request.

import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { AgentscmError } from '../core/errors.js';
import type { StageFailure, StageRequest } from './snapshot-stage.js';

/**
 * The worker's entry: the build's one-file CommonJS copy (dist/bundles/stage-worker.cjs, which boots
 * without the ES module loader), or the ES module after a bare `tsc`.
 */
export function workerFile(): URL {
  const bundle = new URL('../../bundles/stage-worker.cjs', import.meta.url);
  return existsSync(bundle) ? bundle : new URL('./stage-worker.js', import.meta.url);
}

/** A staging worker started ahead of its request. */
export interface Stager {
  /**
   * Hands the worker its one request; resolves with the staging path as soon as the tree exists. The
   * bytes of its hard-linked files are still being checked then: see verified().
   */
  stage(r: StageRequest): Promise<string>;
  /** Resolves once every byte of the staged tree matched the manifest; rejects (SNAPSHOT_CORRUPT) otherwise. */
  verified(): Promise<void>;
}

function stageError(f: StageFailure | undefined): Error {
  const e = f ?? { message: 'staging failed' };
  return e.kind !== undefined && e.code !== undefined ? new AgentscmError(e.kind, e.code, e.message) : new Error(e.message);
}

/**
 * Starts the staging worker (stage-worker.ts) now, so that it boots and loads its modules (tens of
 * milliseconds) while the caller works out what to stage. Until stage() is called the worker does not
 * keep the process alive: a run that never stages just ends.
 */
export function startStager(): Stager {
  const worker = new Worker(workerFile());
  let settleStaged: { resolve: (dir: string) => void; reject: (e: Error) => void } | undefined;
  let settleVerified: { resolve: () => void; reject: (e: Error) => void } | undefined;
  const staged = new Promise<string>((resolve, reject) => (settleStaged = { resolve, reject }));
  const verified = new Promise<void>((resolve, reject) => (settleVerified = { resolve, reject }));
  staged.catch(() => undefined);
  verified.catch(() => undefined);
  // Settling a promise twice changes nothing: a failure (or the worker's exit) settles what is still open.
  const fail = (e: Error): void => {
    settleStaged!.reject(e);
    settleVerified!.reject(e);
  };
  worker.on('message', (m: { dir?: string; verified?: true; error?: StageFailure; verifyError?: StageFailure }) => {
    if (m.dir !== undefined) settleStaged!.resolve(m.dir);
    else if (m.verified === true) settleVerified!.resolve();
    else if (m.verifyError !== undefined) settleVerified!.reject(stageError(m.verifyError));
    else fail(stageError(m.error));
  });
  worker.once('error', (e) => fail(e));
  worker.once('exit', (code) => fail(new Error(`the snapshot staging worker exited with code ${code}`)));
  // After the listeners: adding a 'message' listener refs the worker's port again.
  worker.unref();
  let used = false;
  return {
    stage(r: StageRequest): Promise<string> {
      if (used) throw new Error('a stager stages one snapshot');
      used = true;
      worker.ref();
      worker.postMessage(r);
      return staged;
    },
    verified: () => verified,
  };
}

