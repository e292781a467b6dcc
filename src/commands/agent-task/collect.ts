// agentscm agent-task collect CHANGE --task-id ID --attempt-id ID --key-dir DIR [...]: one exact local
// collection of a claimed collector attempt. This entry starts reading the engine's identity (ping,
// version, and the image once the descriptor names it) before loading anything else: podman takes about
// half a second to answer /version, and that wait is the floor of collect's own time, so it starts first.
// Reading the engine is not an external effect (it changes nothing and runs nothing; docs/COLLECTOR.md).
// The body is collect-flow.ts.

import { connectEngine } from '../../collectors/engine.js';
import { probeEngine, probeRuntime } from '../../collectors/runtime-probe.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { idOpt, optionalStringOpt, stringOpt } from '../options.js';
import type { EngineReads } from './collect-flow.js';

const FLOW_BUNDLE = './collect-flow.bundle.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  // The plain option checks first: a usage error should not wait for the engine.
  stringOpt(inv, 'data-dir');
  stringOpt(inv, 'key-dir');
  idOpt(inv, 'attempt-id');
  const engine: Promise<EngineReads> = (async () => {
    const { api } = await connectEngine({ dockerHost: optionalStringOpt(inv, 'docker-host'), env: ctx.env });
    const facts = probeEngine(api);
    facts.catch(() => undefined);
    return { api, observed: async (imageId: string) => (await probeRuntime(api, imageId, facts)).digest };
  })();
  engine.catch(() => undefined);
  // The bundle of collect-flow.ts made by `npm run build` (one file instead of ~100 modules, zod's
  // included: a quarter of a second less to load); the same code as collect-flow.js.
  const flow = (await import(FLOW_BUNDLE)) as typeof import('./collect-flow.js');
  return flow.collect(ctx, inv, engine);
}
