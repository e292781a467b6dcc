// `npm run demo` must stay true: it runs the main job through the real CLI, a real Hub and a real
// container engine, and exits 0.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../support/cli.js';

test('the demo runs end to end: qualified for the passing check, not for the broken one', () => {
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'dist', 'scripts', 'demo.js')], { encoding: 'utf8', timeout: 300_000 });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  const quals = [...r.stdout.matchAll(/^qualified: (true|false)$/gm)].map((m) => m[1]);
  // Before finalize (false), after finalize (true), then the broken subject (false).
  assert.deepEqual(quals, ['false', 'true', 'false']);
  assert.match(r.stdout, /collected task-[0-9a-f]+: passed \(exit 0\)/);
  assert.match(r.stdout, /collected task-[0-9a-f]+: failed \(exit 1\)[\s\S]*\(exit 0\)/);
  assert.match(r.stdout, /"code":"collector_not_passed"/);
  // Why it failed: collect and transfer show print the end of the check's output; qualification names transfer show.
  assert.match(r.stdout, /collected task-[0-9a-f]+: failed \(exit 1\)\n(stdout|stderr)( \(last lines\))?:\n  \| /);
  assert.match(r.stdout, /^attempt \S+ \(task task-[0-9a-f]+, step check\): failed \(exit 1\)$/m);
  assert.match(r.stdout, /^why: .*agentscm agent-task transfer show --attempt-id/m);
  assert.match(r.stdout, /^# Done: /m);
});
