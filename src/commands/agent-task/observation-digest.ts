import { decodeAssertion, observationDigest, observationSigningBytes, ASSERTION_MAX_BYTES } from '../../core/contract/assertion.js';
import { readBoundedInput } from '../../core/fs/safe.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const a = decodeAssertion(readBoundedInput(stringOpt(inv, 'assertion'), ASSERTION_MAX_BYTES, 'assertion file'), 'assertion file');
  return { data: { digest: observationDigest(a), signing_bytes_hex: observationSigningBytes(a).toString('hex') } };
}
