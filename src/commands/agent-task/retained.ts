// The retained signed transfer of an attempt in the collector state, for the commands that read it back
// (retry-upload, transfer show). Its own module: collect's one-file entry imports collector-dirs.ts and
// must not bundle the collector body that this loads.

import * as path from 'node:path';
import { AgentscmError, localState } from '../../core/errors.js';
import type { Invocation } from '../../cli/types.js';
import { idOpt, optionalStringOpt } from '../options.js';

/**
 * The retained signed transfer of --attempt-id in the collector state (--state-dir, else
 * KEY_DIR/state), with the collector module that reads it; `missing` ends the error when none is retained.
 */
export async function retainedTransfer(inv: Invocation, missing: string) {
  const c = await import('../../collectors/collect.js');
  const stateOpt = optionalStringOpt(inv, 'state-dir');
  const keyDir = optionalStringOpt(inv, 'key-dir');
  if (stateOpt === undefined && keyDir === undefined) throw new AgentscmError('USAGE', 'USAGE', 'name the collector state with --state-dir DIR or --key-dir DIR');
  const stateDir = stateOpt ?? path.join(keyDir!, 'state');
  const attemptId = idOpt(inv, 'attempt-id');
  const { paths } = c.findExecution(stateDir, attemptId);
  const bytes = c.readRetained(paths);
  if (!bytes) throw localState(`attempt ${attemptId} has no retained transfer${missing}`, 'NOTHING_RETAINED');
  return { c, paths, attemptId, bytes };
}
