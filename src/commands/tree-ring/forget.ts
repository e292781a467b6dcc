// tree-ring forget ID --mode delete|redact --reason TEXT. Delete removes the row, its index entry and
// claims; redact keeps a sanitized placeholder and tombstones the id. The reason is required, not stored.

import { usageError } from '../../core/errors.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { forgetMemory } from '../../core/treering/service.js';
import { redactSecrets } from '../../core/treering/sensitivity.js';
import {identity, rootOf, str} from './common.js';
import { writer } from './writer.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const root = rootOf(ctx, inv);
  const mode = str(inv, 'mode') ?? 'delete';
  if (mode !== 'delete' && mode !== 'redact') throw usageError(`invalid value '${mode}' for --mode (delete or redact)`);
  const id = inv.args[0]!;
  const changed = forgetMemory(root.abs, id, mode, str(inv, 'reason')!, writer(ctx, identity(ctx, inv).agentProfile, 'cli:forget'));
  // Ids are never secret-shaped; input that is (a pasted token) is not echoed back.
  const shown = redactSecrets(id);
  const data = { ok: true, memory_id: shown, mode, changed };
  const verb = mode === 'delete' ? 'deleted' : 'redacted';
  return { data, text: changed ? `${verb} ${shown}` : `no memory ${shown}; nothing ${verb}` };
}
