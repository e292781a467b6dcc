// `tree-ring integrations activate|link --harness H [--dry-run]`: re-publishes missing owned material
// create-only when that leaves the manifest unchanged; anything else is needs-user-review.

import { activateHarness } from '../../core/treering/activation/init.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { boolOpt } from '../options.js';
import { harnessOpt, rootFrom } from './integrations-common.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const r = activateHarness(rootFrom(ctx, inv), harnessOpt(inv), boolOpt(inv, 'dry-run'), ctx.env, new Date());
  const lines = [`${r.harness_id}: ${r.state}${r.dry_run ? ' (dry run)' : ''}`];
  for (const p of r.changed_paths) lines.push(`  ${r.dry_run ? 'would create' : 'created'} ${p}`);
  if (r.detail) lines.push(`  ${r.detail}`);
  if (r.receipt) lines.push(`  valid receipt ${r.receipt.receipt_id} recorded ${r.receipt.recorded_at}`);
  lines.push(`  next: ${r.next_step}`);
  return { data: r, text: lines.join('\n') };
}
