// `npm run demo` must stay true: it runs the main job through the real CLI and exits 0.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../support/cli.js';

test('the demo runs end to end', () => {
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'dist', 'scripts', 'demo.js')], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /^valid: signature verifies over [0-9a-f]{64}$/m);
  assert.match(r.stdout, /signature does not verify[\s\S]*\(exit 10\)/);
  assert.match(r.stdout, /^# Done: /m);
});
