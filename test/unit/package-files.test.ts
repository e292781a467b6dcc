// Every document that --help, the man pages or the README names is in the package (`npm pack`), so a
// globally installed agentscm can be followed without a checkout.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { COMMANDS, GROUPS } from '../../src/entries/cli.js';
import { REPO_ROOT } from '../support/cli.js';

test('the package ships every docs/*.md the command table, the man pages and the README name, and the LICENSE', () => {
  const texts = [
    JSON.stringify([COMMANDS, GROUPS]),
    readFileSync(path.join(REPO_ROOT, 'man', 'agentscm.1'), 'utf8'),
    readFileSync(path.join(REPO_ROOT, 'man', 'tree-ring.1'), 'utf8'),
    readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8'),
  ];
  const named = new Set(texts.flatMap((t) => [...t.matchAll(/\bdocs\/[A-Za-z0-9_.-]+\.md\b/g)].map((m) => m[0])));
  assert.ok(named.has('docs/COLLECTOR.md') && named.has('docs/HUB.md'), [...named].join(', '));
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  const files = new Set((JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path));
  const missing = [...named, 'LICENSE', 'README.md'].filter((f) => !files.has(f));
  assert.deepEqual(missing, [], `named but not packed: ${missing.join(', ')}`);
});
