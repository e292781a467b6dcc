// `tree-ring integrations deactivate --harness H`: create-only at the writer boundary, so it changes
// nothing and lists the reconciliation steps for the user.

import { deactivateHarness } from '../../core/treering/activation/init.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { harnessOpt, rootFrom } from './integrations-common.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const r = deactivateHarness(rootFrom(ctx, inv), harnessOpt(inv));
  const lines = [`${r.harness_id}: ${r.state}`, ...r.reconcile.map((s) => `  - ${s}`), `  next: ${r.next_step}`];
  return { data: r, text: lines.join('\n') };
}
