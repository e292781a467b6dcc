// Boundaries of the Hub's parts: commands reach the Hub only over HTTP (nothing under src/commands but
// `hub serve` imports src/hub), and the modules the Stop hooks use to read the authority, the native
// store and the Hub's qualification answer never load zod (or any other heavy package).

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../support/cli.js';
import { forbiddenIn, walkImports as walk } from '../support/import-graph.js';

const DIST = path.join(REPO_ROOT, 'dist', 'src');

test('no command module except hub serve reaches src/hub', () => {
  const hubDir = path.join(DIST, 'hub') + path.sep;
  const commands = readdirSync(path.join(DIST, 'commands'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.js'))
    .map((e) => path.join(e.parentPath, e.name));
  assert.ok(commands.length > 10);
  for (const c of commands) {
    if (c === path.join(DIST, 'commands', 'hub', 'serve.js')) continue;
    const reached = [...walk(c).files].filter((f) => f.startsWith(hubDir));
    assert.deepEqual(reached, [], `${path.relative(DIST, c)} must talk to the Hub over HTTP only`);
  }
  assert.ok([...walk(path.join(DIST, 'commands', 'hub', 'serve.js')).files].some((f) => f.startsWith(hubDir)));
});

test('the hook-facing modules load no zod, ink, react, dockerode or execa', () => {
  for (const m of ['core/authority/store.js', 'core/native/workspace.js', 'core/native/snapshot.js', 'core/hub-client/client.js', 'core/contract/qualification-check.js']) {
    assert.deepEqual(forbiddenIn(walk(path.join(DIST, m))), [], m);
  }
});
