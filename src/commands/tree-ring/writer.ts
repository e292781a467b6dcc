// The write context of the writing tree-ring commands (coordinator capability from the environment
// only). Separate from ./common.ts so that `recall` does not load the policy and guard modules.

import type { CommandContext } from '../../cli/types.js';
import { writeContext, type WriteContext } from '../../core/treering/store/policy.js';
import { env } from './common.js';

export const COORDINATOR_TOKEN_ENV = 'TREE_RING_COORDINATOR_TOKEN';

/**
 * The write context: who writes and, if present, the coordinator capability's hash. The actor is the
 * process's own TREE_RING_AGENT_PROFILE when set (the harness-derived identity), so that a worker
 * cannot pass as another profile with --agent-profile; otherwise the profile the command asserts.
 */
export function writer(ctx: CommandContext, assertedProfile: string | undefined, origin: string): WriteContext {
  return writeContext(env(ctx, 'TREE_RING_AGENT_PROFILE') ?? assertedProfile ?? null, ctx.env[COORDINATOR_TOKEN_ENV], origin);
}
