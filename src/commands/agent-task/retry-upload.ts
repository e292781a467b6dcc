// agentscm agent-task retry-upload --attempt-id ID: re-sends the identical retained signed transfer.
// It never runs, rebuilds or re-signs anything.

import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { CollectorSession } from './collector-calls.js';
import { retainedTransfer } from './retained.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const { c, paths, bytes } = await retainedTransfer(inv, ': nothing to upload (run collect again; it never reruns a command)');
  const s = new CollectorSession(inv, 120_000);
  try {
    const view = await s.upload(bytes);
    c.recordUpload(paths, view);
    return { data: view, text: `transfer ${String(view.transfer_digest)} ${view.replayed === true ? 'was already retained by the Hub' : 'retained by the Hub'}: ${String(view.outcome)}` };
  } finally {
    s.close();
  }
}
