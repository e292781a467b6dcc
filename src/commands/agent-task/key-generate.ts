import { generateKey } from '../../core/crypto/keystore.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const info = generateKey(stringOpt(inv, 'key-dir'));
  return { data: info };
}
