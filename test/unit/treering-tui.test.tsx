// `tree-ring tui`: its views by frame (ink-testing-library), and the command's terminal check and
// lazy loading through the built CLI.

import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { render } from 'ink-testing-library';
import { COMMANDS } from '../../src/entries/cli.js';
import { TuiApp } from '../../src/commands/tree-ring/tui-view.js';
import type { TuiMemory, TuiSnapshot } from '../../src/core/treering/tui-data.js';
import { REPO_ROOT } from '../support/cli.js';
import { commandModuleFile, walkImports } from '../support/import-graph.js';
import { tempProject, tr } from '../support/treering.js';

const settle = () => new Promise((r) => setTimeout(r, 100));

/** Waits until the last frame matches (ink renders input asynchronously), then returns it. */
async function until(ui: { lastFrame: () => string | undefined }, re: RegExp): Promise<string> {
  for (let i = 0; i < 100 && !re.test(ui.lastFrame() ?? ''); i++) await new Promise((r) => setTimeout(r, 50));
  const frame = ui.lastFrame() ?? '';
  assert.match(frame, re);
  return frame;
}

function mem(id: string, ring: string, summary: string): TuiMemory {
  return { id, ring, scope: 'project', event_type: 'lesson', project: 'p', created_at: '2026-12-01T10:00:00.000000Z', summary };
}

const SNAPSHOT: TuiSnapshot = {
  initialized: true,
  total: 3,
  rings: { cambium: 2, outer: 0, inner: 0, heartwood: 0, scar: 1, seed: 0 },
  recent: [mem('mem_a', 'cambium', 'Use snapshot invalidation.'), mem('mem_b', 'scar', 'Avoid stale cache entries.'), mem('mem_c', 'cambium', 'Prefer small migrations.')],
};

test('the console frame: header, ring counts, newest memories and the selected memory', (t) => {
  const ui = render(<TuiApp root=".tree-ring" load={() => SNAPSHOT} search={() => []} tickMs={5000} />);
  t.after(() => ui.unmount());
  const frame = ui.lastFrame()!;
  assert.match(frame, /Tree Ring Memory · \.tree-ring · 3 memories/);
  assert.match(frame, /1 cambium 2 +2 outer 0 +3 inner 0 +4 heartwood 0 +5 scar 1 +6 seed 0/);
  assert.match(frame, /newest memories/);
  assert.match(frame, /> cambium +Use snapshot invalidation\./);
  assert.match(frame, /mem_a/);
  assert.match(frame, /cambium · project · lesson · project p/);
  assert.match(frame, /q quit/);
});

test('keys move the selection, filter a ring and run a recall search', async (t) => {
  const queries: string[] = [];
  const ui = render(<TuiApp root=".tree-ring" load={() => SNAPSHOT} search={(q) => (queries.push(q), [mem('mem_b', 'scar', 'Avoid stale cache entries.')])} tickMs={5000} />);
  t.after(() => ui.unmount());
  await settle();
  ui.stdin.write('j');
  assert.match(await until(ui, /> scar +Avoid stale cache entries\./), /mem_b/);
  ui.stdin.write('1');
  assert.doesNotMatch(await until(ui, /newest memories · ring cambium/), /Avoid stale cache/);
  ui.stdin.write('0');
  await until(ui, /newest memories\n/);
  ui.stdin.write('/');
  await until(ui, /search: _/);
  ui.stdin.write('stale');
  await until(ui, /search: stale_/);
  ui.stdin.write('\r');
  await until(ui, /recall "stale": 1 results/);
  assert.deepEqual(queries, ['stale']);
  ui.stdin.write('c');
  await until(ui, /newest memories/);
});

test('the console refreshes every tick and shows a missing store without creating one', async (t) => {
  let snap: TuiSnapshot = { initialized: false, total: 0, rings: { cambium: 0, outer: 0, inner: 0, heartwood: 0, scar: 0, seed: 0 }, recent: [] };
  const ui = render(<TuiApp root="mem" load={() => snap} search={() => []} tickMs={50} />);
  t.after(() => ui.unmount());
  assert.match(ui.lastFrame()!, /Tree Ring Memory · mem · no store yet \(run tree-ring init\)/);
  assert.match(ui.lastFrame()!, /No memories to show\./);
  snap = SNAPSHOT;
  await until(ui, /3 memories/);
});

test('tree-ring tui refuses a non-terminal and --json with exit 2, and loads ink only after that check', () => {
  const dir = tempProject();
  const r = tr(dir, ['tui']);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, 'error: tree-ring tui needs an interactive terminal (stdin and stdout must be a TTY)\n');
  assert.equal(tr(dir, ['--json', 'tui']).stderr, 'error: --json is not supported with the interactive TUI\n');
  const spec = COMMANDS.find((c) => c.path.join(' ') === 'tree-ring tui')!;
  const file = commandModuleFile(path.join(REPO_ROOT, 'dist', 'src', 'entries', 'cli.js'), spec.load);
  const statics = walkImports(file, { dynamic: false });
  assert.equal(statics.packages.has('ink') || statics.packages.has('react'), false, 'ink is imported only after the terminal check');
  assert.ok(walkImports(file).packages.has('ink'));
  for (const c of COMMANDS.filter((c) => c.errorPolicy === 'hook' || c.path.join(' ') === 'tree-ring recall')) {
    assert.equal([...walkImports(commandModuleFile(path.join(REPO_ROOT, 'dist', 'src', 'entries', 'cli.js'), c.load)).files].some((f) => f.includes('tui')), false, c.path.join(' '));
  }
});
