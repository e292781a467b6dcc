// NO_COLOR (no-color.org) turns colour off on a terminal too, ink's views included. The terminal is a
// real pseudo-terminal made by util-linux `script`.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { TREE_RING_BIN } from '../support/cli.js';

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

test('tree-ring integrations status on a terminal: coloured, and not with NO_COLOR', { skip: hasScript ? false : 'needs util-linux script for a pseudo-terminal' }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'no-color-'));
  const run = (env: NodeJS.ProcessEnv) =>
    spawnSync('script', ['-qec', `${process.execPath} ${TREE_RING_BIN} integrations status`, '/dev/null'], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: dir, TERM: 'xterm-256color', COLUMNS: '120', ...env } });
  const plain = run({});
  assert.equal(plain.status, 0, plain.stderr);
  assert.match(plain.stdout, /\u001b\[/, 'colour on a terminal');
  const none = run({ NO_COLOR: '1' });
  assert.equal(none.status, 0, none.stderr);
  assert.ok(!/\u001b\[[0-9;]*m/.test(none.stdout), JSON.stringify(none.stdout.slice(0, 200)));
  assert.ok(none.stdout.replace(/\s+/g, '').length > 20, 'the view was still printed');
});
