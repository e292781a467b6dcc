// `agentscm authority enrollment list`: every enrollment with its scope, epoch, key id and whether it is
// the executor's current one.

import { Authority } from '../../core/authority/store.js';
import { listEnrollments } from '../../core/authority/listing.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';
import { listResult, repositoryFilter, when } from './table.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const a = Authority.open(stringOpt(inv, 'data-dir'), { readonly: true });
  try {
    const rows = listEnrollments(a, repositoryFilter(inv));
    return listResult('enrollments', 'enrollments', rows, ['REGISTRATION_ID', 'REPOSITORY', 'PROFILE', 'STEP', 'EXECUTOR', 'EPOCH', 'KEY_ID', 'CURRENT', 'REVOKED', 'CREATED'], (r) => [r.registration_id, r.repository, r.profile, r.step_id, r.executor_id, r.registration_epoch, r.verification_key_id, r.current, r.revoked, when(r.created_at)]);
  } finally {
    a.close();
  }
}
