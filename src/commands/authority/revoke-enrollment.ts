import { Authority } from '../../core/authority/store.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { idOpt, stringOpt } from '../options.js';
import { confirmOrYes } from './confirm.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const id = idOpt(inv, 'registration-id');
  const dataDir = stringOpt(inv, 'data-dir');
  await confirmOrYes(ctx, inv, 'revoke-enrollment', `Revoke enrollment ${id}? Evidence from it stops counting at once; re-enrolling makes a new epoch. [y/N] `);
  const a = Authority.open(dataDir);
  try {
    return { data: a.revokeEnrollment(id) };
  } finally {
    a.close();
  }
}
