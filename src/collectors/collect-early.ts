// The engine reads `agent-task collect` starts before anything else. Its floor is the runtime identity,
// which comes from the engine's facts (engine-facts.ts), and podman takes about 0.2 s to answer them (it
// gathers its whole host information); so the launcher asks for them the moment the process starts,
// through this module's CommonJS bundle (dist/hook/collect-early.cjs), before the ES module loader and
// the command table are loaded. Reading /_ping and the engine's information changes nothing and runs
// nothing: it is not an external effect, so it may precede the reservation.
//
// It is only a prefetch. The command resolves its endpoint with the ordinary rules (engine.ts) and takes
// the prefetched reads only when they were asked of exactly that endpoint; otherwise it asks again. The
// reads do not keep the process alive until the command is about to use them, so a command that fails
// first (a usage error, a missing data dir) exits at once.

import { EngineApi } from './engine-api.js';
import { engineAddressFor, engineCandidates, pingEngine } from './engine-endpoint.js';
import { readEngineFacts, type EngineFacts } from './engine-facts.js';

/** The /_ping of one endpoint, and the engine facts asked as soon as it answers. */
export interface EngineReads {
  readonly url: string;
  /** Whether /_ping answered (never rejects). */
  readonly answering: Promise<boolean>;
  readonly facts: Promise<EngineFacts>;
  /**
   * The reads are asked in the background: they keep the process alive only from this call on (when
   * the command is about to need them), so a command that fails before then exits at once.
   */
  foreground(): void;
}

// One slot per process, shared by the bundle's copy of this module and the ES module's copy.
const SLOT = Symbol.for('agentscm.collect.early-engine-reads');
type Slot = { [SLOT]?: EngineReads };

function ask(url: string): EngineReads {
  const api = new EngineApi(engineAddressFor(url)).background();
  const pinged = pingEngine(api);
  const facts = readEngineFacts(api, pinged);
  facts.catch(() => undefined);
  return { url, answering: pinged.then((p) => p !== undefined), facts, foreground: () => api.foreground() };
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
    if (first) (globalThis as Slot)[SLOT] = ask(first.url);
  } catch {
    // the command reports a bad endpoint itself
  }
}

/** The reads of `url`: the prefetched ones if they were asked of exactly this endpoint, else new ones. */
export function engineReads(url: string): EngineReads {
  const slot = globalThis as Slot;
  const early = slot[SLOT];
  delete slot[SLOT];
  return early && early.url === url ? early : ask(url);
}
