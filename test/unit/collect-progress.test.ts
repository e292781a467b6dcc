// The collect progress view: pure rows and plain lines by clock value, and the ink frame for a state.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { render } from 'ink-testing-library';
import { createElement as h } from 'react';
import {
  COLLECT_STEPS,
  createProgressReporter,
  formatElapsed,
  formatPlainLine,
  formatProgressRows,
  initialProgress,
  PlainProgress,
  SilentProgress,
  transition,
} from '../../src/collectors/progress.js';
import { ProgressView } from '../../src/collectors/progress-view.js';

const T0 = 1_700_000_000_000;

function midRun() {
  let s = initialProgress();
  s = transition(s, 'reserve', 'active', T0);
  s = transition(s, 'reserve', 'done', T0 + 40);
  s = transition(s, 'materialize', 'active', T0 + 40);
  s = transition(s, 'materialize', 'done', T0 + 1_240, '1000 files');
  s = transition(s, 'run', 'active', T0 + 1_300, 'container 1a2b3c4d5e6f');
  return s;
}

describe('collect progress', () => {
  it('formats elapsed time', () => {
    assert.equal(formatElapsed(0), '0.0s');
    assert.equal(formatElapsed(1_249), '1.2s');
    assert.equal(formatElapsed(59_949), '59.9s');
    assert.equal(formatElapsed(125_000), '2m05s');
    assert.equal(formatElapsed(-5), '0.0s');
  });

  it('lists the six steps in order, all pending at first', () => {
    const rows = formatProgressRows(initialProgress(), T0);
    assert.deepEqual(rows.map((r) => r.text), COLLECT_STEPS.map((s) => `· ${s}`));
  });

  it('shows finished times, the running step counting up, and details', () => {
    const s = midRun();
    const rows = formatProgressRows(s, T0 + 3_700).map((r) => r.text);
    assert.equal(rows[0], '✔ reserve         0.0s');
    assert.equal(rows[1], '✔ materialize     1.2s  1000 files');
    assert.match(rows[2]!, /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] run             2\.4s  container 1a2b3c4d5e6f$/);
    assert.equal(rows[3], '· sign');
    const later = formatProgressRows(s, T0 + 9_300).map((r) => r.text);
    assert.match(later[2]!, / 8\.0s {2}container/);
    assert.equal(later[1], rows[1]);
  });

  it('marks failed and skipped steps', () => {
    let s = midRun();
    s = transition(s, 'run', 'failed', T0 + 2_300, 'exit 1');
    s = transition(s, 'upload', 'skipped', T0 + 2_300);
    const rows = formatProgressRows(s, T0 + 5_000);
    assert.equal(rows[2]!.text, '✖ run             1.0s  exit 1');
    assert.equal(rows[2]!.status, 'failed');
    assert.equal(rows[5]!.text, '- upload');
  });

  it('writes one plain line per transition without a terminal', async () => {
    const lines: string[] = [];
    let now = T0;
    const p = new PlainProgress({ write: (c: string | Uint8Array) => lines.push(String(c)) }, () => now);
    p.start('reserve');
    now += 1_500;
    p.done('reserve', 'execution 7');
    p.skip('upload');
    await p.close();
    assert.deepEqual(lines, ['collect: reserve started\n', 'collect: reserve done (1.5s): execution 7\n', 'collect: upload skipped\n']);
    assert.equal(formatPlainLine({ name: 'run', status: 'failed', startedAt: 0, finishedAt: 61_000 }), 'collect: run failed (1m01s)');
  });

  it('chooses silent for --json (even on a terminal) and plain lines for a non-terminal', async () => {
    const out = { write: () => true, isTTY: false };
    assert.ok((await createProgressReporter({ out, json: true })) instanceof SilentProgress);
    assert.ok((await createProgressReporter({ out: { ...out, isTTY: true }, json: true })) instanceof SilentProgress);
    assert.ok((await createProgressReporter({ out, json: false })) instanceof PlainProgress);
  });

  it('draws the rows as an ink frame', () => {
    const s = midRun();
    const view = render(h(ProgressView, { state: s, now: T0 + 3_700 }));
    const frame = view.lastFrame() ?? '';
    const lines = frame.split('\n');
    assert.equal(lines.length, 6);
    assert.equal(lines[0], '✔ reserve         0.0s');
    assert.match(lines[2]!, /run {13}2\.4s {2}container 1a2b3c4d5e6f/);
    view.rerender(h(ProgressView, { state: transition(s, 'run', 'done', T0 + 4_000), now: T0 + 9_000 }));
    assert.match((view.lastFrame() ?? '').split('\n')[2]!, /^✔ run {13}2\.7s/);
    view.unmount();
  });
});

describe('collect progress imports', () => {
  it('loads ink and react only from progress-view, which only createProgressReporter imports, lazily', async () => {
    const { readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { REPO_ROOT } = await import('../support/cli.js');
    const progress = readFileSync(join(REPO_ROOT, 'src/collectors/progress.ts'), 'utf8');
    assert.doesNotMatch(progress, /^import[^;]*from '(ink|react)'/m);
    assert.match(progress, /await import\('\.\/progress-view\.js'\)/);
    assert.doesNotMatch(progress, /^import[^;]*progress-view/m);
  });
});
