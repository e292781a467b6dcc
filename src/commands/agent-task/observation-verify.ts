import { observationDigest } from '../../core/contract/assertion.js';
import { parsePublicKeyHex, parseSignatureHex, verifyStrict } from '../../core/crypto/ed25519.js';
import { AgentscmError } from '../../core/errors.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';
import { readAssertion } from './assertion-input.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  // Malformed flags are refused before stdin is read.
  const signature = parseSignatureHex(stringOpt(inv, 'signature'));
  const publicKey = parsePublicKeyHex(stringOpt(inv, 'public-key'));
  const a = await readAssertion(ctx, inv);
  const digest = observationDigest(a);
  if (!verifyStrict(signature, Buffer.from(digest, 'hex'), publicKey)) {
    throw new AgentscmError('VERIFY_FAILED', 'SIGNATURE_INVALID', 'signature does not verify over the observation digest', { digest });
  }
  return { data: { valid: true, digest }, text: `valid: signature verifies over ${digest}` };
}
