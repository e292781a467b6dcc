// The --assertion input shared by the observation commands: a file, or "-" for stdin, bounded before
// it is parsed and decoded strictly.

import { ASSERTION_MAX_BYTES, decodeAssertion, type TaskResultAssertion } from '../../core/contract/assertion.js';
import { readBoundedInputFrom } from '../../core/fs/safe.js';
import type { CommandContext, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';

export async function readAssertion(ctx: CommandContext, inv: Invocation): Promise<TaskResultAssertion> {
  const bytes = await readBoundedInputFrom(stringOpt(inv, 'assertion'), ASSERTION_MAX_BYTES, 'assertion file', ctx.stdin);
  return decodeAssertion(bytes, 'assertion file');
}
