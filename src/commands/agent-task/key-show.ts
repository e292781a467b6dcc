import { keyInfo, loadKey } from '../../core/crypto/keystore.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  return { data: keyInfo(loadKey(stringOpt(inv, 'key-dir')).publicKey) };
}
