// `agentscm receipt verify FILE --trusted-key HEX [--revision R]`: offline, no Hub, no data dir.
// Exit 0 when every check passes, 10 (VERIFY_FAILED) at the first that does not.

import { verifyBundle } from '../../core/attest/receipt-bundle.js';
import { BUNDLE_MAX_BYTES } from '../../core/contract/export.js';
import { HEX64 } from '../../core/crypto/digest.js';
import { parsePublicKeyHex } from '../../core/crypto/ed25519.js';
import { AgentscmError, usageError } from '../../core/errors.js';
import { readBoundedInput } from '../../core/fs/safe.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { optionalStringOpt, stringOpt } from '../options.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const file = inv.args[0];
  if (file === undefined) throw usageError('receipt verify needs BUNDLE');
  const key = parsePublicKeyHex(stringOpt(inv, 'trusted-key'));
  const revision = optionalStringOpt(inv, 'revision');
  if (revision !== undefined && !HEX64.test(revision)) throw usageError('--revision must be 64 lowercase hex characters');
  let bytes: Buffer;
  try {
    bytes = readBoundedInput(file, BUNDLE_MAX_BYTES, 'bundle');
  } catch (e) {
    // A bundle that cannot be read as one is a bundle that does not verify.
    throw new AgentscmError('VERIFY_FAILED', 'BUNDLE_UNREADABLE', `bundle does not verify: ${e instanceof Error ? e.message : 'unreadable'}`);
  }
  const v = verifyBundle(bytes, key, revision);
  return {
    data: v,
    text: `verified: receipt ${v.receipt_digest} of revision ${v.revision} (${v.repository} ${v.profile}, Change ${v.change_id} v${v.change_version}), ${v.tasks.length} transfer(s), signed by Hub key ${v.hub_key_id}`,
  };
}
