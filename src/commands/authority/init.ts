import { initAuthority } from '../../core/authority/store.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  return { data: initAuthority(stringOpt(inv, 'data-dir')) };
}
