import { decodeAssertion, observationDigest, ASSERTION_MAX_BYTES } from '../../core/contract/assertion.js';
import { sign, toHex, verificationKeyId } from '../../core/crypto/ed25519.js';
import { loadKey } from '../../core/crypto/keystore.js';
import { readBoundedInput } from '../../core/fs/safe.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const a = decodeAssertion(readBoundedInput(stringOpt(inv, 'assertion'), ASSERTION_MAX_BYTES, 'assertion file'), 'assertion file');
  const key = loadKey(stringOpt(inv, 'key-dir'));
  const digest = observationDigest(a);
  const signature = toHex(sign(Buffer.from(digest, 'hex'), key.secretKey));
  return { data: { digest, signature, verification_key_id: verificationKeyId(key.publicKey) } };
}
