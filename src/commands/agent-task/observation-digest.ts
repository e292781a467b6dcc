import { observationDigest, observationSigningBytes } from '../../core/contract/assertion.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { readAssertion } from './assertion-input.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const a = await readAssertion(ctx, inv);
  return { data: { digest: observationDigest(a), signing_bytes_hex: observationSigningBytes(a).toString('hex') } };
}
