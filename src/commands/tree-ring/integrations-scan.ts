// tree-ring integrations scan [--source-root DIR]: read-only discovery of agent-framework markers.

import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { scanIntegrations, scanJson, scanText } from '../../core/treering/scan.js';
import { str } from './common.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const home = ctx.env.HOME === undefined || ctx.env.HOME === '' ? undefined : ctx.env.HOME;
  const report = scanIntegrations(str(inv, 'source-root') ?? '.', ctx.cwd, home);
  return { raw: inv.json ? `${scanJson(report)}\n` : scanText(report) };
}
