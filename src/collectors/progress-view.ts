// The ink view of collect's progress. Imported only by createProgressReporter when stderr is a terminal
// (see progress.ts); the rows come from the pure formatProgressRows, so this file only draws them.

import { Box, render, Text, type Instance } from 'ink';
import { createElement as h, type ReactElement } from 'react';
import { formatProgressRows, StatefulReporter, type ProgressReporter, type ProgressState, type ProgressWriter, type StepState, type StepStatus } from './progress.js';

const COLOR: Record<StepStatus, string | undefined> = { pending: 'gray', active: 'cyan', done: 'green', failed: 'red', skipped: 'yellow' };

export function ProgressView(props: { state: ProgressState; now: number }): ReactElement {
  return h(
    Box,
    { flexDirection: 'column' },
    ...formatProgressRows(props.state, props.now).map((row, i) => {
      const color = COLOR[row.status];
      return h(Text, { key: String(i), ...(color ? { color } : {}) }, row.text);
    }),
  );
}

/** How often the elapsed time of the active step is redrawn. */
const TICK_MS = 100;

class InkProgress extends StatefulReporter {
  private readonly instance: Instance;
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  constructor(out: ProgressWriter) {
    super();
    this.instance = render(this.element(), {
      // Only a terminal gets here (createProgressReporter): the writer is the terminal's stream.
      stdout: out as unknown as NodeJS.WriteStream,
      patchConsole: false,
      exitOnCtrlC: false,
    });
    this.timer = setInterval(() => this.redraw(), TICK_MS);
    this.timer.unref();
  }

  private element(): ReactElement {
    return h(ProgressView, { state: this.state, now: Date.now() });
  }

  private redraw(): void {
    if (!this.closed) this.instance.rerender(this.element());
  }

  protected changed(_step: StepState): void {
    this.redraw();
  }

  override async close(): Promise<void> {
    if (this.closed) return;
    this.redraw();
    this.closed = true;
    clearInterval(this.timer);
    this.instance.unmount();
    await this.instance.waitUntilExit().catch(() => undefined);
  }
}

export function createInkProgress(out: ProgressWriter): ProgressReporter {
  return new InkProgress(out);
}
