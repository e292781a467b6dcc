// `agentscm authority change list`: the Changes `checkpoint` recorded, each with its current version and
// revision.

import { Authority } from '../../core/authority/store.js';
import { listChanges } from '../../core/authority/listing.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';
import { listResult, repositoryFilter, when } from './table.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const a = Authority.open(stringOpt(inv, 'data-dir'), { readonly: true });
  try {
    const rows = listChanges(a, repositoryFilter(inv));
    return listResult('changes', 'Changes', rows, ['REPOSITORY', 'CHANGE_ID', 'VERSION', 'REVISION', 'CREATED', 'UPDATED'], (r) => [r.repository, r.change_id, r.current_version, r.revision, when(r.created_at), when(r.updated_at)]);
  } finally {
    a.close();
  }
}
