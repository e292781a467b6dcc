// tree-ring evidence SUMMARY --outcome O --evidence-ref REF: an evaluated outcome as a memory
// (promoted: heartwood, rejected: scar, deferred: seed, observed: outer ring).

import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { eventToJson } from '../../core/treering/model.js';
import { buildEvidenceEvent, storeEvent } from '../../core/treering/service.js';
import {float, identity, list, rootOf, str} from './common.js';
import { writer } from './writer.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const root = rootOf(ctx, inv);
  const id = identity(ctx, inv);
  const event = buildEvidenceEvent({
    summary: inv.args[0]!,
    outcome: str(inv, 'outcome') ?? 'observed',
    evidenceRef: str(inv, 'evidence-ref')!,
    project: str(inv, 'project'),
    ...id,
    operationId: str(inv, 'operation-id'),
    details: str(inv, 'details'),
    score: float(inv, 'score'),
    tags: list(inv, 'tag'),
  });
  const stored = storeEvent(root.abs, event, writer(ctx, id.agentProfile, 'cli:evidence'), 'evidence');
  const m = stored.memory;
  // Upstream's text line (tree-ring-memory-cli main.rs): id, ring, summary and the evidence reference.
  return { raw: inv.json ? `${eventToJson(m)}\n` : `${m.id} [${m.ring}] ${m.summary} evidence=${m.source.ref}\n` };
}
