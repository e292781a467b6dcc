import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { runTaskStop } from './stop-common.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  return runTaskStop('codex', ctx, inv);
}
