// agentscm agent-task collect CHANGE --task-id ID --attempt-id ID --key-dir DIR [...]: one exact local
// collection of a claimed collector attempt. This entry takes the engine's identity reads (ping and
// version, asked by the launcher as the process started: collect-early.ts; the image once the descriptor
// names it) before loading anything else: podman takes about half a second to answer /version, and that
// wait is the floor of collect's own time. Reading the engine is not an external effect (it changes
// nothing and runs nothing; docs/COLLECTOR.md).
// The body is collect-flow.ts.

import { engineReads } from '../../collectors/collect-early.js';
import { connectEngine } from '../../collectors/engine.js';
import { EngineApi } from '../../collectors/engine-api.js';
import { engineAddressFor, engineCandidates } from '../../collectors/engine-endpoint.js';
import { startStager } from '../../collectors/snapshot-stage.js';
import { probeEngine, probeRuntime, type EngineFacts } from '../../collectors/runtime-probe.js';
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
    const dockerHost = optionalStringOpt(inv, 'docker-host');
    const first = engineCandidates(dockerHost, ctx.env)[0];
    // /_ping and /version of the first candidate, asked together (by the launcher, if it could).
    const reads = first ? engineReads(first.url) : undefined;
    let api: EngineApi;
    let facts: Promise<EngineFacts>;
    if (reads && (await reads.answering)) {
      api = new EngineApi(engineAddressFor(reads.url));
      facts = probeEngine(api, reads.version);
    } else {
      // The first candidate does not answer: the ordinary search decides (and names the failure).
      ({ api } = await connectEngine({ dockerHost, env: ctx.env }));
      facts = probeEngine(api);
    }
    facts.catch(() => undefined);
    return { api, observed: async (imageId: string) => (await probeRuntime(api, imageId, facts)).digest };
  })();
  engine.catch(() => undefined);
  // The snapshot staging worker boots while the body loads; the body hands it the revision.
  const stager = startStager();
  // The bundle of collect-flow.ts made by `npm run build` (one file instead of ~100 modules, zod's
  // included: a quarter of a second less to load); the same code as collect-flow.js.
  const flow = (await import(FLOW_BUNDLE)) as typeof import('./collect-flow.js');
  return flow.collect(ctx, inv, engine, stager);
}
