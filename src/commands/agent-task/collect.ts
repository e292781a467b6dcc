// agentscm agent-task collect CHANGE --task-id ID --attempt-id ID --key-dir DIR [...]: one exact local
// collection of a claimed collector attempt. This entry takes the engine's identity reads (ping and
// the engine's facts, asked by the launcher as the process started: collect-early.ts; the image once the
// descriptor names it) before loading anything else: podman takes about 0.2 s to answer them, and that
// wait is the floor of collect's own time. Reading the engine is not an external effect (it changes
// nothing and runs nothing; docs/COLLECTOR.md).
// The body is collect-flow.ts, run from its one-file CommonJS bundle with V8's code cache.

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheFileOf, compileBody, compileBodyCached, loadBody } from '../../cli/code-cache.js';
import { engineReads } from '../../collectors/collect-early.js';
import { EngineApi } from '../../collectors/engine-api.js';
import { engineAddressFor, engineCandidates } from '../../collectors/engine-endpoint.js';
import * as progress from '../../collectors/progress.js';
import { startStager } from '../../collectors/stager.js';
import { probeRuntime, readEngineFacts, type EngineFacts } from '../../collectors/runtime-probe.js';
import * as errors from '../../core/errors.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { idOpt, optionalStringOpt, stringOpt } from '../options.js';
import { collectorDirs } from './collector-dirs.js';
import type { EngineReads } from './collect-flow.js';

type Flow = typeof import('./collect-flow.js');

/** The body bundle made by `npm run build` (scripts/bundle-hook.ts), and its code cache beside it. */
export const COLLECT_BODY = fileURLToPath(new URL('../../../hook/agentscm-collect.body.cjs', import.meta.url));

/**
 * The modules the body shares with this process instead of carrying copies: errors.js (the CLI runner
 * maps errors to exit codes by their class) and the progress reporter (its ink view is a dynamic
 * import). The bundle names them by these ids.
 */
export const SHARED_WITH_BODY: Readonly<Record<string, object>> = {
  'agentscm:errors': errors,
  'agentscm:progress': progress,
};

/** Compiles (with the code cache in cacheFile, if given and there) and runs the body; returns the script and exports. */
export function loadCollectBody(cacheFile: string | undefined): { script: import('node:vm').Script; flow: Flow } {
  const real = createRequire(COLLECT_BODY);
  const req = Object.assign((id: string) => SHARED_WITH_BODY[id] ?? real(id), real) as NodeJS.Require;
  const script = cacheFile === undefined ? compileBody(COLLECT_BODY, undefined) : compileBodyCached(COLLECT_BODY, cacheFile);
  return { script, flow: loadBody(script, COLLECT_BODY, path.dirname(COLLECT_BODY), req) as Flow };
}

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  // The plain option checks first: a usage error should not wait for the engine.
  stringOpt(inv, 'data-dir');
  collectorDirs(inv);
  idOpt(inv, 'attempt-id');
  const dockerHost = optionalStringOpt(inv, 'docker-host');
  const first = engineCandidates(dockerHost, ctx.env)[0];
  // /_ping and the engine facts of the first candidate (asked by the launcher, if it could).
  const reads = first ? engineReads(first.url) : undefined;
  const reading: Promise<EngineReads> = (async () => {
    let api: EngineApi;
    let facts: Promise<EngineFacts>;
    if (reads && (await reads.answering)) {
      api = new EngineApi(engineAddressFor(reads.url));
      facts = reads.facts;
    } else {
      // The first candidate does not answer: the ordinary search decides (and names the failure).
      const { connectEngine } = await import('../../collectors/engine.js');
      ({ api } = await connectEngine({ dockerHost, env: ctx.env }));
      facts = readEngineFacts(api);
    }
    facts.catch(() => undefined);
    return { api, observed: async (imageId: string) => (await probeRuntime(api, imageId, facts)).digest };
  })();
  reading.catch(() => undefined);
  const engine = (): Promise<EngineReads> => {
    reads?.foreground();
    return reading;
  };
  // The snapshot staging worker boots while the body loads; the body hands it the revision.
  const stager = startStager();
  // After a bare `tsc` there is no bundle: the same code as ES modules.
  const flow = existsSync(COLLECT_BODY) ? loadCollectBody(cacheFileOf(COLLECT_BODY)).flow : await import('./collect-flow.js');
  return flow.collect(ctx, inv, engine, stager);
}
