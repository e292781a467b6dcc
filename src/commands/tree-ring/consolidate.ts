// tree-ring consolidate: one deterministic summary memory per group of a period's memories, recorded
// in the consolidations table so that a repeat is `unchanged`; --force supersedes earlier summaries.

import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { consolidateStore, consolidationJson, consolidationText, parsePeriod } from '../../core/treering/lifecycle.js';
import { flag, identity, rootOf, str } from './common.js';
import { writer } from './writer.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const id = identity(ctx, inv);
  const report = consolidateStore(
    rootOf(ctx, inv).abs,
    {
      periodType: parsePeriod(str(inv, 'period-type') ?? 'daily'),
      periodKey: str(inv, 'period-key'),
      project: str(inv, 'project'),
      agentProfile: id.agentProfile,
      workflowId: id.workflowId,
      sessionId: id.sessionId,
      dryRun: flag(inv, 'dry-run'),
      force: flag(inv, 'force'),
    },
    writer(ctx, id.agentProfile, 'cli:consolidate'),
  );
  return { raw: inv.json ? `${consolidationJson(report)}\n` : consolidationText(report) };
}
