import { decodeAssertion, observationDigest, ASSERTION_MAX_BYTES } from '../../core/contract/assertion.js';
import { parsePublicKeyHex, parseSignatureHex, verifyStrict } from '../../core/crypto/ed25519.js';
import { AgentscmError } from '../../core/errors.js';
import { readBoundedInput } from '../../core/fs/safe.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const a = decodeAssertion(readBoundedInput(stringOpt(inv, 'assertion'), ASSERTION_MAX_BYTES, 'assertion file'), 'assertion file');
  const signature = parseSignatureHex(stringOpt(inv, 'signature'));
  const publicKey = parsePublicKeyHex(stringOpt(inv, 'public-key'));
  const digest = observationDigest(a);
  if (!verifyStrict(signature, Buffer.from(digest, 'hex'), publicKey)) {
    throw new AgentscmError('VERIFY_FAILED', 'SIGNATURE_INVALID', 'signature does not verify over the observation digest', { digest });
  }
  return { data: { valid: true, digest }, text: `valid: signature verifies over ${digest}` };
}
