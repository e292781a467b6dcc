import { Authority } from '../../core/authority/store.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { idOpt, stringOpt } from '../options.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const id = idOpt(inv, 'registration-id');
  const a = Authority.open(stringOpt(inv, 'data-dir'));
  try {
    return { data: a.revokeEnrollment(id) };
  } finally {
    a.close();
  }
}
