// agentscm agent-task retry-upload --attempt-id ID: re-sends the identical retained signed transfer.
// It never runs, rebuilds or re-signs anything.

import * as path from 'node:path';
import { AgentscmError, localState } from '../../core/errors.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { idOpt, optionalStringOpt } from '../options.js';
import { CollectorSession } from './collector-calls.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const c = await import('../../collectors/collect.js');
  const stateOpt = optionalStringOpt(inv, 'state-dir');
  const keyDir = optionalStringOpt(inv, 'key-dir');
  if (stateOpt === undefined && keyDir === undefined) throw new AgentscmError('USAGE', 'USAGE', 'name the collector state with --state-dir DIR or --key-dir DIR');
  const stateDir = stateOpt ?? path.join(keyDir!, 'state');
  const attemptId = idOpt(inv, 'attempt-id');
  const { paths } = c.findExecution(stateDir, attemptId);
  const bytes = c.readRetained(paths);
  if (!bytes) throw localState(`attempt ${attemptId} has no retained transfer: nothing to upload (run collect again; it never reruns a command)`, 'NOTHING_RETAINED');
  const s = new CollectorSession(inv, 120_000);
  try {
    const view = await s.upload(bytes);
    c.recordUpload(paths, view);
    return { data: view, text: `transfer ${String(view.transfer_digest)} ${view.replayed === true ? 'was already retained by the Hub' : 'retained by the Hub'}: ${String(view.outcome)}` };
  } finally {
    s.close();
  }
}
