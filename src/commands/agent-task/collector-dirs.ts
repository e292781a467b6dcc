// Where collect keeps its key and state, decided once from the options before anything is written.

import * as path from 'node:path';
import { AgentscmError, badInput, localState } from '../../core/errors.js';
import type { Invocation } from '../../cli/types.js';
import { idOpt, optionalStringOpt, stringOpt } from '../options.js';

/**
 * --key-dir and the state dir (--state-dir, else KEY_DIR/state), resolved against the current
 * directory. The state dir holds the snapshot that is bind-mounted into the container, and a bind
 * source is written "SRC:/snapshot:ro": a ":" in it cannot be carried, so it is refused here, naming the
 * option, instead of after the execution was reserved and the snapshot placed.
 */
export function collectorDirs(inv: Invocation): { keyDir: string; stateDir: string } {
  const keyDir = path.resolve(stringOpt(inv, 'key-dir'));
  const stateOpt = optionalStringOpt(inv, 'state-dir');
  const stateDir = stateOpt === undefined ? path.join(keyDir, 'state') : path.resolve(stateOpt);
  if (stateDir.includes(':')) {
    const flag = stateOpt === undefined ? '--key-dir' : '--state-dir';
    throw badInput(
      `${flag}: the collector state dir ${JSON.stringify(stateDir)} contains ":", which a container bind mount of its snapshot cannot carry; choose a path without ":"${stateOpt === undefined ? ' (or pass --state-dir)' : ''}`,
      'BAD_STATE_DIR',
    );
  }
  return { keyDir, stateDir };
}

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
