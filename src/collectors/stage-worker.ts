// Worker thread of startStager (stager.ts): waits for its one request, stages that snapshot and
// posts back its path, or the error that stopped it.

import { parentPort } from 'node:worker_threads';
import { AgentscmError } from '../core/errors.js';
import { stageSnapshotSync, type StageFailure, type StageRequest } from './snapshot-stage.js';

parentPort!.once('message', (r: StageRequest) => {
  try {
    parentPort!.postMessage({ dir: stageSnapshotSync(r) });
  } catch (e) {
    const error: StageFailure = e instanceof AgentscmError ? { kind: e.kind, code: e.code, message: e.message } : { message: e instanceof Error ? e.message : String(e) };
    parentPort!.postMessage({ error });
  }
});
