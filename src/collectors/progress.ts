// Progress of `agent-task collect`: reserve, materialize, run, sign, retain, upload, each with its
// elapsed time. Three renderers over one state: nothing in --json mode, plain lines when stderr is not a
// terminal, and an ink view on a terminal. ink and react are loaded only for the last (lazily, from
// progress-view.ts): they cost ~300-400 ms to import and must never reach the hook path or --json runs.
// Progress always goes to stderr; stdout belongs to the command's result.

/**
 * Where progress goes: a text sink, and whether it is a terminal. The ink view draws only on a terminal,
 * and then on the writer itself (the process's stderr stream). Defined here so that the collectors name
 * no type of the command layer; a command passes its stderr, which has this shape.
 */
export interface ProgressWriter {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export const COLLECT_STEPS = ['reserve', 'materialize', 'run', 'sign', 'retain', 'upload'] as const;
export type CollectStep = (typeof COLLECT_STEPS)[number];

export type StepStatus = 'pending' | 'active' | 'done' | 'failed' | 'skipped';

export interface StepState {
  readonly name: CollectStep;
  readonly status: StepStatus;
  /** Milliseconds since the epoch, set when the step became active. */
  readonly startedAt?: number;
  readonly finishedAt?: number;
  /** A short fact worth seeing, e.g. "1000 files" or "container 1a2b3c4d5e6f". Never a secret. */
  readonly detail?: string;
}

export interface ProgressState {
  readonly steps: readonly StepState[];
}

export function initialProgress(): ProgressState {
  return { steps: COLLECT_STEPS.map((name) => ({ name, status: 'pending' as const })) };
}

/** Pure transition: the new state after `step` changes to `status` at time `at`. */
export function transition(state: ProgressState, step: CollectStep, status: StepStatus, at: number, detail?: string): ProgressState {
  return {
    steps: state.steps.map((s) => {
      if (s.name !== step) return s;
      const next: StepState = {
        name: s.name,
        status,
        ...(status === 'active' ? { startedAt: at } : s.startedAt !== undefined ? { startedAt: s.startedAt } : {}),
        ...(status === 'done' || status === 'failed' || status === 'skipped' ? { finishedAt: at } : {}),
        ...(detail !== undefined ? { detail } : s.detail !== undefined ? { detail: s.detail } : {}),
      };
      return next;
    }),
  };
}

/** "0.4s", "12.0s", "2m05s". */
export function formatElapsed(ms: number): string {
  const clamped = Math.max(0, ms);
  if (clamped < 60_000) return `${(clamped / 1000).toFixed(1)}s`;
  const total = Math.floor(clamped / 1000);
  return `${Math.floor(total / 60)}m${String(total % 60).padStart(2, '0')}s`;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const MARK: Record<Exclude<StepStatus, 'active'>, string> = { pending: '·', done: '✔', failed: '✖', skipped: '-' };
const NAME_WIDTH = Math.max(...COLLECT_STEPS.map((s) => s.length)) + 2;

export interface ProgressRow {
  readonly status: StepStatus;
  readonly text: string;
}

/** The terminal view as rows of text; a pure function of the state and the clock, so frames are testable. */
export function formatProgressRows(state: ProgressState, now: number): ProgressRow[] {
  return state.steps.map((s) => {
    const mark = s.status === 'active' ? SPINNER[Math.floor(now / 80) % SPINNER.length]! : MARK[s.status];
    let elapsed = '';
    if (s.startedAt !== undefined) elapsed = formatElapsed((s.finishedAt ?? now) - s.startedAt);
    const text = `${mark} ${s.name.padEnd(NAME_WIDTH)}${elapsed.padStart(7)}${s.detail ? `  ${s.detail}` : ''}`;
    return { status: s.status, text: text.trimEnd() };
  });
}

/** One plain line for a transition, for logs and non-terminal stderr. */
export function formatPlainLine(step: StepState): string {
  const took = step.startedAt !== undefined && step.finishedAt !== undefined ? ` (${formatElapsed(step.finishedAt - step.startedAt)})` : '';
  const verb = { pending: 'pending', active: 'started', done: 'done', failed: 'failed', skipped: 'skipped' }[step.status];
  return `collect: ${step.name} ${verb}${took}${step.detail ? `: ${step.detail}` : ''}`;
}

export interface ProgressReporter {
  start(step: CollectStep, detail?: string): void;
  done(step: CollectStep, detail?: string): void;
  fail(step: CollectStep, detail?: string): void;
  skip(step: CollectStep, detail?: string): void;
  /** Renders the final state and releases the terminal. */
  close(): Promise<void>;
}

/** Holds the state; renderers decide what to show on each change. */
abstract class StatefulReporter implements ProgressReporter {
  protected state = initialProgress();
  constructor(protected readonly clock: () => number = Date.now) {}
  protected abstract changed(step: StepState): void;
  private set(step: CollectStep, status: StepStatus, detail?: string): void {
    this.state = transition(this.state, step, status, this.clock(), detail);
    this.changed(this.state.steps.find((s) => s.name === step)!);
  }
  start(step: CollectStep, detail?: string): void {
    this.set(step, 'active', detail);
  }
  done(step: CollectStep, detail?: string): void {
    this.set(step, 'done', detail);
  }
  fail(step: CollectStep, detail?: string): void {
    this.set(step, 'failed', detail);
  }
  skip(step: CollectStep, detail?: string): void {
    this.set(step, 'skipped', detail);
  }
  async close(): Promise<void> {}
}

/** --json mode: the one JSON document on stdout is the only output. */
export class SilentProgress implements ProgressReporter {
  start(): void {}
  done(): void {}
  fail(): void {}
  skip(): void {}
  async close(): Promise<void> {}
}

/** Without a terminal: one line per transition. */
export class PlainProgress extends StatefulReporter {
  constructor(
    private readonly out: ProgressWriter,
    clock?: () => number,
  ) {
    super(clock);
  }
  protected changed(step: StepState): void {
    this.out.write(`${formatPlainLine(step)}\n`);
  }
}

/**
 * The reporter for a run: silent with --json, plain lines unless `out` is a terminal, the ink view on a
 * terminal. The ink module is imported here and only here.
 */
export async function createProgressReporter(opts: { out: ProgressWriter; json: boolean }): Promise<ProgressReporter> {
  if (opts.json) return new SilentProgress();
  if (opts.out.isTTY !== true) return new PlainProgress(opts.out);
  const view = await import('./progress-view.js');
  return view.createInkProgress(opts.out);
}

export { StatefulReporter };
