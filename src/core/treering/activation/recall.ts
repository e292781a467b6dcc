// The small port preflight needs from the memory store: a bounded, scoped candidate list. The store
// applies sensitivity, supersession, expiry, redaction, project and scope filters before the limit;
// preflight only renders what it is given and counts what it includes.

export interface PreflightQuery {
  /** The project's name (basename of the project root) that scoped memories must carry. */
  readonly project: string;
  readonly agentProfile: string;
  readonly workflowId: string;
  readonly sessionId: string;
  /** A task hint that passed the sensitivity check; absent for the no-keyword startup brief. */
  readonly taskHint?: string;
  readonly limit: number;
}

export interface PreflightCandidate {
  readonly id: string;
  /** A safe one-line summary; never raw content. */
  readonly summary: string;
  readonly kind: string;
  /** A source reference (project-relative path, URL or label); optional. */
  readonly sourceRef?: string;
}

export interface PreflightRecall {
  candidates(query: PreflightQuery): PreflightCandidate[];
}

/** Opens the recall port for a memory root. Swapped in by the store module; absent store -> no memories. */
export type PreflightRecallFactory = (memoryRoot: string) => PreflightRecall;

let factory: PreflightRecallFactory | undefined;

export function setPreflightRecallFactory(f: PreflightRecallFactory | undefined): void {
  factory = f;
}

export const EMPTY_RECALL: PreflightRecall = { candidates: () => [] };

export async function openPreflightRecall(memoryRoot: string): Promise<PreflightRecall> {
  if (factory) return factory(memoryRoot);
  const { storeRecallFactory } = await import('./store-recall.js');
  return storeRecallFactory(memoryRoot);
}
