// tree-ring audit [--audit-type T]: read-only findings on stale, sensitive, low-confidence,
// supersession and contradictory memories. A missing store is audited as empty and not created.

import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { auditStore, auditText } from '../../core/treering/lifecycle.js';
import { rootOf, str } from './common.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const report = auditStore(rootOf(ctx, inv).abs, str(inv, 'audit-type') ?? 'all');
  return { raw: inv.json ? `${JSON.stringify(report)}\n` : auditText(report) };
}
