// Worker thread of stageSnapshot (snapshot-stage.ts): stages one snapshot and posts back its path, or
// the error that stopped it.

import { parentPort, workerData } from 'node:worker_threads';
import { AgentscmError } from '../core/errors.js';
import { stageSnapshotSync, type StageFailure, type StageRequest } from './snapshot-stage.js';

try {
  parentPort!.postMessage({ dir: stageSnapshotSync(workerData as StageRequest) });
} catch (e) {
  const error: StageFailure = e instanceof AgentscmError ? { kind: e.kind, code: e.code, message: e.message } : { message: e instanceof Error ? e.message : String(e) };
  parentPort!.postMessage({ error });
}
