import { Authority } from '../../core/authority/store.js';
import { decodeRequirement, REQUIREMENT_MAX_BYTES } from '../../core/contract/requirement.js';
import { readBoundedInput } from '../../core/fs/safe.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { boolOpt, idOpt, repositoryOpt, stringOpt } from '../options.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const repository = repositoryOpt(inv);
  const profile = idOpt(inv, 'profile');
  const target = idOpt(inv, 'target');
  const { requirement, canonical, digest } = decodeRequirement(readBoundedInput(stringOpt(inv, 'requirement'), REQUIREMENT_MAX_BYTES, 'requirement file'));
  const a = Authority.open(stringOpt(inv, 'data-dir'));
  try {
    const p = a.addProfile({ repository, profile, target, requirement, canonical, requirement_digest: digest, publish_forge_status: boolOpt(inv, 'publish-forge-status') });
    return {
      data: {
        repository: p.repository,
        profile: p.profile,
        target: p.target,
        requirement_digest: p.requirement_digest,
        plan_digest: p.plan_digest,
        policy_epoch: p.policy_epoch,
        publish_forge_status: p.publish_forge_status,
        changed: p.changed,
      },
    };
  } finally {
    a.close();
  }
}
