// `tree-ring integrations activate|link --harness H [--dry-run] [--accept-managed-block] [--source-root P]`:
// re-publishes missing owned material create-only when that leaves the manifest unchanged; anything
// else is needs-user-review.

import { activateHarness } from '../../core/treering/activation/init.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { boolOpt } from '../options.js';
import { harnessOpt, rootFrom } from './integrations-common.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const r = activateHarness(rootFrom(ctx, inv), harnessOpt(inv), { dryRun: boolOpt(inv, 'dry-run'), acceptManagedBlock: boolOpt(inv, 'accept-managed-block') }, ctx.env, new Date());
  const lines = [`${r.harness_id}: ${r.state}${r.dry_run ? ' (dry run)' : ''}`];
  for (const p of r.changed_paths) lines.push(`  ${r.dry_run ? 'would create' : 'created'} ${p}`);
  if (r.detail) lines.push(`  ${r.detail}`);
  if (r.managed_block) lines.push('  managed block to add to AGENTS.md:', ...r.managed_block.split('\n').map((l) => `    ${l}`));
  if (r.receipt) lines.push(`  valid receipt ${r.receipt.receipt_id} recorded ${r.receipt.recorded_at}`);
  lines.push(`  next: ${r.next_step}`);
  return { data: r, text: lines.join('\n') };
}
