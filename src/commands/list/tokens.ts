// `agentscm authority token list`: the workspace tokens (ids, owner, agent, repository, scope, revoked,
// created), never the secret or its hash.

import { Authority } from '../../core/authority/store.js';
import { listTokens } from '../../core/authority/listing.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';
import { listResult, repositoryFilter, when } from './table.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const a = Authority.open(stringOpt(inv, 'data-dir'), { readonly: true });
  try {
    const rows = listTokens(a, repositoryFilter(inv));
    return listResult('tokens', 'tokens', rows, ['TOKEN_ID', 'OWNER', 'AGENT', 'REPOSITORY', 'SCOPE', 'INTEGRATE', 'REVOKED', 'CREATED'], (r) => [r.token_id, r.owner_id, r.agent_id, r.repository ?? '(all)', r.scope, r.may_integrate, r.revoked, when(r.created_at)]);
  } finally {
    a.close();
  }
}
