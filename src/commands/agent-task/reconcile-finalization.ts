import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { runCollectorCall } from './collector-calls.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  return runCollectorCall('reconcile_collector_finalization', ctx, inv);
}
