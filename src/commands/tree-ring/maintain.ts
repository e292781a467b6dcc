// tree-ring maintain: plans (and with an --apply-*/--repair-fts flag applies) deletion of expired
// temporary memories, redaction of secret-like ones and the rebuild of the full-text index.

import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { maintainStore, maintenanceText } from '../../core/treering/lifecycle.js';
import { flag, identity, rootOf, str } from './common.js';
import { writer } from './writer.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const report = maintainStore(
    rootOf(ctx, inv).abs,
    {
      project: str(inv, 'project'),
      includeSuperseded: flag(inv, 'include-superseded'),
      applyExpired: flag(inv, 'apply-expired'),
      applySecretRedactions: flag(inv, 'apply-secret-redactions'),
      repairFts: flag(inv, 'repair-fts'),
    },
    writer(ctx, identity(ctx, inv).agentProfile, 'cli:maintain'),
  );
  return { raw: inv.json ? `${JSON.stringify(report)}\n` : maintenanceText(report) };
}
