// tree-ring capture: the strict write of an automatic capture checkpoint. Scope is always agent, only
// normal-sensitivity memories with an approved event-type/ring pair, and every identity and provenance
// flag is required (no environment fallback: the checkpoint names them explicitly).

import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { eventToJson } from '../../core/treering/model.js';
import { buildCaptureEvent, storeEvent } from '../../core/treering/service.js';
import {list, rootOf, str} from './common.js';
import { writer } from './writer.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const root = rootOf(ctx, inv);
  const event = buildCaptureEvent({
    summary: inv.args[0]!,
    eventType: str(inv, 'event-type')!,
    ring: str(inv, 'ring')!,
    project: str(inv, 'project')!,
    agentProfile: str(inv, 'agent-profile')!,
    workflowId: str(inv, 'workflow-id')!,
    sessionId: str(inv, 'session-id')!,
    operationId: str(inv, 'operation-id')!,
    sourceRef: str(inv, 'source-ref')!,
    details: str(inv, 'details'),
    tags: list(inv, 'tag'),
  });
  const stored = storeEvent(root.abs, event, writer(ctx, event.agent_profile ?? undefined, 'cli:capture'), 'capture');
  return { raw: inv.json ? `${eventToJson(stored.memory)}\n` : `${stored.memory.id}\n` };
}
