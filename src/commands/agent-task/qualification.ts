import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { runOperation } from './call.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  return runOperation('qualification', ctx, inv);
}
