// `agentscm authority profile list`: the installed agent-task profiles with their target, requirement
// digest and policy epoch.

import { Authority } from '../../core/authority/store.js';
import { listProfiles } from '../../core/authority/listing.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';
import { listResult, repositoryFilter, when } from './table.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const a = Authority.open(stringOpt(inv, 'data-dir'), { readonly: true });
  try {
    const rows = listProfiles(a, repositoryFilter(inv));
    return listResult('profiles', 'profiles', rows, ['REPOSITORY', 'PROFILE', 'TARGET', 'EPOCH', 'FORGE_STATUS', 'REQUIREMENT_DIGEST', 'UPDATED'], (r) => [r.repository, r.profile, r.target, r.policy_epoch, r.publish_forge_status, r.requirement_digest, when(r.updated_at)]);
  } finally {
    a.close();
  }
}
