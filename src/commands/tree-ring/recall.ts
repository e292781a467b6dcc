// tree-ring recall QUERY: ranked memories. --json prints a bare array of {memory, score, ranking}.
// This module's import graph is kept small (no zod): recall runs on every agent turn.

import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { usageError } from '../../core/errors.js';
import { eventToJson, formatF64, RINGS, SCOPES } from '../../core/treering/model.js';
import { recall, type RecallResult } from '../../core/treering/recall.js';
import { openForReading } from '../../core/treering/store/schema.js';
import { flag, identity, list, rootOf, str, uint } from './common.js';

export const MAX_RECALL_LIMIT = 10_000;

function resultJson(r: RecallResult): string {
  const k = r.ranking;
  return (
    `{"memory":${eventToJson(r.memory)},"score":${formatF64(r.score)},"ranking":{"confidence":${formatF64(k.confidence)},` +
    `"recency":${formatF64(k.recency)},"ring_boost":${formatF64(k.ring_boost)},"salience":${formatF64(k.salience)},` +
    `"source_authority":${formatF64(k.source_authority)},"textual_match":${formatF64(k.textual_match)}}}`
  );
}

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const root = rootOf(ctx, inv);
  const id = identity(ctx, inv);
  // A filter that names no scope or ring would match nothing: refused as remember refuses it.
  const scope = str(inv, 'scope');
  if (scope !== undefined && !(SCOPES as readonly string[]).includes(scope)) throw usageError('invalid scope');
  const rings = list(inv, 'ring');
  if (rings?.some((r) => !(RINGS as readonly string[]).includes(r))) throw usageError('invalid ring');
  const options = {
    project: str(inv, 'project'),
    agentProfile: id.agentProfile,
    workflowId: id.workflowId,
    sessionId: id.sessionId,
    scope,
    rings,
    eventTypes: list(inv, 'event-type'),
    includeSensitive: flag(inv, 'include-sensitive'),
    includeSuperseded: flag(inv, 'include-superseded'),
    includeExpired: flag(inv, 'include-expired'),
    limit: uint(inv, 'limit', 8, MAX_RECALL_LIMIT),
  };
  const db = openForReading(root.abs);
  let results: RecallResult[];
  try {
    results = recall(db, inv.args[0]!, options);
  } finally {
    db.close();
  }
  if (inv.json) return { raw: `[${results.map(resultJson).join(',')}]\n` };
  if (results.length === 0) return { raw: 'No memories matched.\n' };
  return {
    raw: results.map((r) => `${r.memory.id} [${r.memory.ring}/${r.memory.scope}] score=${r.score.toFixed(3)} ${r.memory.summary.replace(/[\u0000-\u001f\u007f]+/g, ' ')}`).join('\n') + '\n',
  };
}
