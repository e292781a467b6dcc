import { observationDigest } from '../../core/contract/assertion.js';
import { sign, toHex, verificationKeyId } from '../../core/crypto/ed25519.js';
import { loadKey } from '../../core/crypto/keystore.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';
import { readAssertion } from './assertion-input.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const key = loadKey(stringOpt(inv, 'key-dir'));
  const a = await readAssertion(ctx, inv);
  const digest = observationDigest(a);
  // Seed 000: Ed25519 signs the 32 raw digest bytes, not the hex text and not the JSON.
  const signature = toHex(sign(Buffer.from(digest, 'hex'), key.secretKey));
  return { data: { digest, signature, verification_key_id: verificationKeyId(key.publicKey) } };
}
