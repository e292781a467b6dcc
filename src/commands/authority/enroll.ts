import { Authority } from '../../core/authority/store.js';
import { parsePublicKeyHex, verificationKeyId } from '../../core/crypto/ed25519.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { idOpt, repositoryOpt, stringOpt } from '../options.js';
import { confirmOrYes } from './confirm.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const repository = repositoryOpt(inv);
  const profile = idOpt(inv, 'profile');
  const step = idOpt(inv, 'step');
  const executor = idOpt(inv, 'executor-id');
  // The key is checked before anything is opened or written: 64 hex, canonical point, not small order.
  const publicKey = parsePublicKeyHex(stringOpt(inv, 'public-key'));
  const keyId = verificationKeyId(publicKey);
  const dataDir = stringOpt(inv, 'data-dir');
  await confirmOrYes(
    ctx,
    inv,
    'enroll',
    `Enroll executor ${executor} with key ${keyId}\n  for repository ${repository}, profile ${profile}, step ${step} only?\n` +
      `  (observation-only; grants no credentials, receipts or landing) [y/N] `,
  );
  const a = Authority.open(dataDir);
  try {
    const e = a.enroll({ repository, profile, step_id: step, executor_id: executor, public_key: Buffer.from(publicKey).toString('hex'), verification_key_id: keyId });
    return {
      data: {
        registration_id: e.registration_id,
        registration_epoch: e.registration_epoch,
        verification_key_id: e.verification_key_id,
        repository: e.repository,
        profile: e.profile,
        step_id: e.step_id,
        executor_id: e.executor_id,
      },
    };
  } finally {
    a.close();
  }
}
