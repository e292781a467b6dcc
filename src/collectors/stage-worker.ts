// Worker thread of startStager (stager.ts): waits for its one request, stages that snapshot and posts
// back its path as soon as the tree exists, then checks the hard-linked files' bytes and posts whether
// they matched (snapshot-stage.ts: stageLinkedSync, verifyLinked), or the error that stopped it.

import { parentPort } from 'node:worker_threads';
import { AgentscmError } from '../core/errors.js';
import { stageLinkedSync, verifyLinked, type StageFailure, type StageRequest } from './snapshot-stage.js';

function failure(e: unknown): StageFailure {
  return e instanceof AgentscmError ? { kind: e.kind, code: e.code, message: e.message } : { message: e instanceof Error ? e.message : String(e) };
}

parentPort!.once('message', (r: StageRequest) => {
  let staged: ReturnType<typeof stageLinkedSync>;
  try {
    staged = stageLinkedSync(r);
  } catch (e) {
    parentPort!.postMessage({ error: failure(e) });
    return;
  }
  parentPort!.postMessage({ dir: staged.dir });
  try {
    verifyLinked(staged.unverified);
    parentPort!.postMessage({ verified: true });
  } catch (e) {
    parentPort!.postMessage({ verifyError: failure(e) });
  }
});
