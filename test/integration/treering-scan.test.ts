// `tree-ring integrations scan` (upstream 0.15): read-only marker discovery with next steps.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { json } from '../support/cli.js';
import { tempProject, tr } from '../support/treering.js';

interface Scan {
  ok: boolean;
  report: {
    root: string;
    detected_count: number;
    integrations: Array<{ id: string; name: string; status: string; confidence: number; markers: Array<{ path: string; origin: string }>; next_step: string }>;
  };
}

test('integrations scan finds project and home markers, ranks them, and writes nothing', () => {
  const dir = tempProject();
  const home = tempProject('tr-home-');
  fs.writeFileSync(path.join(dir, 'AGENTS.md'), '# Rules\n');
  fs.writeFileSync(path.join(dir, 'CLAUDE.md'), '# Claude\n');
  fs.mkdirSync(path.join(dir, '.codex'));
  fs.mkdirSync(path.join(dir, 'revolve'));
  fs.mkdirSync(path.join(home, '.claude'));
  const before = fs.readdirSync(dir).sort();
  const r = tr(dir, ['integrations', 'scan', '--json'], { HOME: home });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(fs.readdirSync(dir).sort(), before, 'the scan creates nothing (no .tree-ring)');
  const scan = json<Scan>(r);
  assert.equal(scan.ok, true);
  assert.deepEqual(Object.keys(scan.report), ['root', 'detected_count', 'integrations']);
  assert.equal(scan.report.root, '.');
  assert.equal(scan.report.detected_count, 4);
  assert.equal(scan.report.integrations.length, 9);
  const [first, second] = scan.report.integrations;
  assert.equal(first!.id, 'claude-code', 'two markers rank first');
  assert.deepEqual(first!.markers, [
    { path: './CLAUDE.md', origin: 'project' },
    { path: `${home}/.claude`, origin: 'home' },
  ].sort((a, b) => (a.path < b.path ? -1 : 1)));
  assert.match(r.stdout, /"confidence":0\.85/);
  assert.equal(second!.id, 'codex');
  const opencode = scan.report.integrations.find((i) => i.id === 'opencode')!;
  assert.equal(opencode.status, 'available');
  assert.match(r.stdout, /"id":"opencode","name":"OpenCode","status":"available","confidence":0\.0,"markers":\[\]/);
  assert.equal(scan.report.integrations.at(-1)!.id, 'pi', 'undetected ones by name');

  const text = tr(dir, ['integrations', 'scan', '--source-root', dir], { HOME: home });
  assert.equal(text.code, 0);
  assert.match(text.stdout, new RegExp(`^Tree Ring Memory integrations: root=${dir} detected=4\\nClaude Code \\[Detected\\] confidence=0\\.85\\n  markers: `));
  assert.match(text.stdout, /\nOpenCode \[Available\] confidence=0\.00\n  next: Reference the Tree Ring CLI from OpenCode project configuration or instructions\.\n/);
});
