import { Authority } from '../../core/authority/store.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';
import { usageError } from '../../core/errors.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const tokenId = stringOpt(inv, 'token-id');
  if (!/^[0-9a-f]{24}$/.test(tokenId)) throw usageError('--token-id must be the 24-hex token_id that `token issue` printed');
  const a = Authority.open(stringOpt(inv, 'data-dir'));
  try {
    return { data: a.revokeToken(tokenId) };
  } finally {
    a.close();
  }
}
