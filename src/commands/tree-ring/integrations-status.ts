// `tree-ring integrations status [--source-root P] [--verbose] [--json]`: one state per harness with
// its next step. Never creates .tree-ring. On a TTY without --json the table is drawn with ink.

import { deriveStatus, type StatusReport } from '../../core/treering/activation/status.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { boolOpt } from '../options.js';
import { rootFrom } from './integrations-common.js';

export function renderStatusText(r: StatusReport): string {
  const lines: string[] = [];
  lines.push(r.initialized ? `Tree Ring activation (store ${r.store_id})` : 'Tree Ring activation (not initialized)');
  const w1 = Math.max(...r.integrations.map((h) => h.harness_id.length), 7);
  const w2 = Math.max(...r.integrations.map((h) => h.state.length), 5);
  lines.push(`${'harness'.padEnd(w1)}  ${'state'.padEnd(w2)}  next step`);
  for (const h of r.integrations) {
    lines.push(`${h.harness_id.padEnd(w1)}  ${h.state.padEnd(w2)}  ${h.next_step}`);
    if (h.detail) lines.push(`${''.padEnd(w1)}  ${''.padEnd(w2)}  (${h.detail})`);
    if (h.last_recall_result_count !== undefined) lines.push(`${''.padEnd(w1)}  ${''.padEnd(w2)}  last recall: ${h.last_recall_result_count} result(s), ${h.last_recall_query_class}`);
  }
  return lines.join('\n') + '\n';
}

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  // A project root this process cannot reach is reported (needs-project-mount), not refused.
  const root = rootFrom(ctx, inv, { allowUnreachable: true });
  const report = deriveStatus(root, ctx.env, new Date(), boolOpt(inv, 'verbose'));
  if (!inv.json && ctx.stdout.isTTY) {
    const { renderStatusTable } = await import('./status-view.js');
    return { text: await renderStatusTable(report) };
  }
  return { data: report, text: renderStatusText(report) };
}
