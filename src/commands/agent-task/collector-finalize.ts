import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { runCollectorCall } from './collector-calls.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  return runCollectorCall('collector_finalize', ctx, inv);
}
