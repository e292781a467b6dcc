// tree-ring revolve sync [--source-root PATH] [--project P] [--dry-run]: Revolve outcomes as memories.

import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { collectRevolve, revolveJson, revolveText, writeRevolve } from '../../core/treering/adapters-sync.js';
import { eventToJson } from '../../core/treering/model.js';
import { flag, identity, rootOf, str } from './common.js';
import { writer } from './writer.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const dryRun = flag(inv, 'dry-run');
  const report = collectRevolve(str(inv, 'source-root') ?? 'revolve', ctx.cwd, str(inv, 'project'));
  if (!dryRun) writeRevolve(rootOf(ctx, inv).abs, report, writer(ctx, identity(ctx, inv).agentProfile, 'cli:revolve-sync'));
  return { raw: inv.json ? `${revolveJson(report, dryRun, eventToJson)}\n` : revolveText(report, dryRun) };
}
