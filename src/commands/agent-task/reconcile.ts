import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { runMutation } from './mutate.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  return runMutation('reconcile', ctx, inv);
}
