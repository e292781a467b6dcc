// agentscm agent-task collect CHANGE --task-id ID --attempt-id ID --key-dir DIR [...]: one exact local
// collection of a claimed collector attempt. This entry starts the engine's identity reads (ping and
// the engine's facts; the image once the descriptor names it) before loading anything else, so that
// they run while the Hub answers: podman takes about 0.2 s to answer them. Reading the engine is not
// an external effect (it changes nothing and runs nothing; docs/COLLECTOR.md).
// The body is collect-flow.ts, run from its one-file CommonJS bundle with V8's code cache.

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheFileOf, compileBody, compileBodyCached, loadBody } from '../../cli/code-cache.js';
import type Docker from 'dockerode';
import { abandonRequests, connectEngine, engineAddressFor, engineCandidates } from '../../collectors/engine.js';
import * as progress from '../../collectors/progress.js';
import { startStager } from '../../collectors/stager.js';
import { probeRuntime, readEngineFacts } from '../../collectors/runtime-probe.js';
import * as errors from '../../core/errors.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { idOpt, optionalStringOpt, stringOpt } from '../options.js';
import { collectorDirs } from './collector-dirs.js';
import type { EngineReads } from './collect-flow.js';

type Flow = typeof import('./collect-flow.js');

/** The body bundle made by `npm run build` (scripts/build-bundles.ts), and its code cache beside it. */
export const COLLECT_BODY = fileURLToPath(new URL('../../../bundles/agentscm-collect.body.cjs', import.meta.url));

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
  // A malformed --docker-host or DOCKER_HOST is bad input before anything else.
  for (const c of engineCandidates(dockerHost, ctx.env)) engineAddressFor(c.url);
  // Given up when the command ends first (a missing data dir, a Hub refusal), so that it exits at once.
  const giveUp = new AbortController();
  let connected: Docker | undefined;
  const reading: Promise<EngineReads> = connectEngine({ dockerHost, env: ctx.env, signal: giveUp.signal }).then(({ docker, ping }) => {
    connected = docker;
    const facts = readEngineFacts(docker, ping);
    facts.catch(() => undefined);
    return { docker, observed: async (imageId: string) => (await probeRuntime(docker, imageId, facts)).digest };
  });
  reading.catch(() => undefined);
  // The snapshot staging worker boots while the body loads; the body hands it the revision.
  const stager = startStager();
  try {
    // After a bare `tsc` there is no bundle: the same code as ES modules.
    const flow = existsSync(COLLECT_BODY) ? loadCollectBody(cacheFileOf(COLLECT_BODY)).flow : await import('./collect-flow.js');
    return await flow.collect(ctx, inv, () => reading, stager);
  } finally {
    giveUp.abort();
    if (connected) abandonRequests(connected);
  }
}
