// tree-ring remember SUMMARY --event-type T [...]: stores one memory; --operation-id makes it retry-safe.

import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { eventToJson } from '../../core/treering/model.js';
import { buildEvent, storeEvent } from '../../core/treering/service.js';
import {float, identity, list, rootOf, str} from './common.js';
import { writer } from './writer.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const root = rootOf(ctx, inv);
  const id = identity(ctx, inv);
  const event = buildEvent({
    summary: inv.args[0]!,
    eventType: str(inv, 'event-type')!,
    ring: str(inv, 'ring') ?? 'cambium',
    scope: str(inv, 'scope') ?? 'global',
    project: str(inv, 'project'),
    ...id,
    operationId: str(inv, 'operation-id'),
    sourceRef: str(inv, 'source-ref'),
    details: str(inv, 'details'),
    tags: list(inv, 'tag'),
    salience: float(inv, 'salience'),
    confidence: float(inv, 'confidence'),
  });
  const stored = storeEvent(root.abs, event, writer(ctx, id.agentProfile, 'cli:remember'), 'remember');
  return { raw: inv.json ? `${eventToJson(stored.memory)}\n` : `${stored.memory.id}\n` };
}
