// tree-ring dox sync [--source-root PATH] [--project P] [--dry-run]: AGENTS.md guidance as memories.

import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { collectDox, doxJson, doxText, writeDox } from '../../core/treering/adapters-sync.js';
import { eventToJson } from '../../core/treering/model.js';
import { flag, identity, rootOf, str } from './common.js';
import { writer } from './writer.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const dryRun = flag(inv, 'dry-run');
  const report = collectDox(str(inv, 'source-root') ?? '.', ctx.cwd, str(inv, 'project'));
  if (!dryRun) writeDox(rootOf(ctx, inv).abs, report, ctx.cwd, writer(ctx, identity(ctx, inv).agentProfile, 'cli:dox-sync'));
  return { raw: inv.json ? `${doxJson(report, dryRun, eventToJson)}\n` : doxText(report, dryRun) };
}
