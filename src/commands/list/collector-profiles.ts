// `agentscm authority collector-profile list`: every collector profile installation, its registration and
// scope, kind, digest and whether it is the registration's current one.

import { Authority } from '../../core/authority/store.js';
import { listCollectorProfiles } from '../../core/authority/listing.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';
import { listResult, repositoryFilter, when } from './table.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const a = Authority.open(stringOpt(inv, 'data-dir'), { readonly: true });
  try {
    const rows = listCollectorProfiles(a, repositoryFilter(inv));
    return listResult('collector_profiles', 'collector profiles', rows, ['INSTALL_ID', 'REGISTRATION_ID', 'REPOSITORY', 'PROFILE', 'STEP', 'KIND', 'SEQ', 'CURRENT', 'DIGEST', 'CREATED'], (r) => [r.install_id, r.registration_id, r.repository, r.profile, r.step_id, r.kind, r.seq, r.current, r.profile_digest, when(r.created_at)]);
  } finally {
    a.close();
  }
}
