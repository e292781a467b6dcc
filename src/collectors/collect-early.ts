// The engine reads `agent-task collect` starts before anything else. Its floor is the runtime identity,
// which comes from the engine's /version, and podman takes about half a second to answer it (it gathers
// its whole host information); so the launcher asks for it the moment the process starts, through this
// module's CommonJS bundle (dist/hook/collect-early.cjs), before the ES module loader and the command
// table are loaded. Reading /version and /_ping changes nothing and runs nothing: it is not an external
// effect, so it may precede the reservation.
//
// It is only a prefetch. The command resolves its endpoint with the ordinary rules (engine.ts) and takes
// the prefetched reads only when they were asked of exactly that endpoint; otherwise it asks again. The
// reads do not keep the process alive until they are taken, so a usage error exits at once.

import { EngineApi, type EngineVersion } from './engine-api.js';
import { engineAddressFor, engineCandidates, pingEngine } from './engine-endpoint.js';

/** The /_ping and /version of one endpoint, asked together. */
export interface EngineReads {
  readonly url: string;
  /** Whether /_ping answered (never rejects). */
  readonly answering: Promise<boolean>;
  readonly version: Promise<EngineVersion>;
}

interface Pending extends EngineReads {
  readonly api: EngineApi;
}

// One slot per process, shared by the bundle's copy of this module and the ES module's copy.
const SLOT = Symbol.for('agentscm.collect.early-engine-reads');
type Slot = { [SLOT]?: Pending };

function ask(url: string, background: boolean): Pending {
  const api = new EngineApi(engineAddressFor(url));
  if (background) api.background();
  // /version first: it is the slow one.
  const version = api.version();
  version.catch(() => undefined);
  const answering = pingEngine(api);
  return { url, api, answering, version };
}

/** The option's value as the parser reads it (`--docker-host URL` or `--docker-host=URL`), if given once. */
function dockerHostArg(argv: readonly string[]): string | undefined {
  const found: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (a === '--docker-host' && i + 1 < argv.length) found.push(argv[++i]!);
    else if (a.startsWith('--docker-host=')) found.push(a.slice('--docker-host='.length));
  }
  return found.length === 1 ? found[0] : undefined;
}

/** Called by the launcher for `agent-task collect ...`. Never throws: a prefetch that cannot start is skipped. */
export function prefetch(argv: readonly string[], env: NodeJS.ProcessEnv): void {
  try {
    const first = engineCandidates(dockerHostArg(argv), env)[0];
    if (first) (globalThis as Slot)[SLOT] = ask(first.url, true);
  } catch {
    // the command reports a bad endpoint itself
  }
}

/**
 * The reads of `url`: the prefetched ones if they were asked of exactly this endpoint (they keep the
 * process alive from now on), else new ones.
 */
export function engineReads(url: string): EngineReads {
  const slot = globalThis as Slot;
  const early = slot[SLOT];
  delete slot[SLOT];
  if (early && early.url === url) {
    early.api.foreground();
    return early;
  }
  return ask(url, false);
}
