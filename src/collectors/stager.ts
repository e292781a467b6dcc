// The snapshot staging worker (stage-worker.ts, which runs snapshot-stage.ts), started ahead of its
// request. A module of its own, apart from snapshot-stage.ts, because it finds the worker's file beside
// itself (import.meta.url): collect's entry starts it, and collect's one-file body only hands it the
// request.

import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { AgentscmError } from '../core/errors.js';
import type { StageFailure, StageRequest } from './snapshot-stage.js';

/**
 * The worker's entry: the build's one-file CommonJS copy (dist/hook/stage-worker.cjs, which boots
 * without the ES module loader), or the ES module after a bare `tsc`.
 */
export function workerFile(): URL {
  const bundle = new URL('../../hook/stage-worker.cjs', import.meta.url);
  return existsSync(bundle) ? bundle : new URL('./stage-worker.js', import.meta.url);
}

/** A staging worker started ahead of its request. */
export interface Stager {
  /** Hands the worker its one request; resolves with the staging path. */
  stage(r: StageRequest): Promise<string>;
}

/**
 * Starts the staging worker (stage-worker.ts) now, so that it boots and loads its modules (tens of
 * milliseconds) while the caller works out what to stage. Until stage() is called the worker does not
 * keep the process alive: a run that never stages just ends.
 */
export function startStager(): Stager {
  const worker = new Worker(workerFile());
  const staged = new Promise<string>((resolve, reject) => {
    let settled = false;
    worker.once('message', (m: { dir?: string; error?: StageFailure }) => {
      settled = true;
      if (m.dir !== undefined) resolve(m.dir);
      else {
        const f = m.error ?? { message: 'staging failed' };
        reject(f.kind !== undefined && f.code !== undefined ? new AgentscmError(f.kind, f.code, f.message) : new Error(f.message));
      }
    });
    worker.once('error', (e) => {
      settled = true;
      reject(e);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`the snapshot staging worker exited with code ${code}`));
    });
  });
  staged.catch(() => undefined);
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
  };
}

/** Stages the snapshot in a worker thread; resolves with the staging path. */
export function stageSnapshot(r: StageRequest): Promise<string> {
  return startStager().stage(r);
}

