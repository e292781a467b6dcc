// Where collect keeps its key and state, decided once from the options before anything is written.

import * as path from 'node:path';
import { badInput } from '../../core/errors.js';
import type { Invocation } from '../../cli/types.js';
import { optionalStringOpt, stringOpt } from '../options.js';

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
