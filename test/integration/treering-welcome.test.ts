// `tree-ring welcome` as upstream 0.15 defines it: read-only onboarding, `--init` initializing like
// `tree-ring init` with the adapters listed under `integrations`.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { json } from '../support/cli.js';
import { tempProject, tr } from '../support/treering.js';

const NEXT = [
  'tree-ring --root .tree-ring init',
  'tree-ring --root .tree-ring remember "Use project-scoped recall before risky changes." --event-type lesson --scope project',
  'tree-ring --root .tree-ring tui',
];

test('welcome without --init only looks: nothing is created', () => {
  const dir = tempProject();
  const r = tr(dir, ['welcome', '--no-animation']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(fs.readdirSync(dir), []);
  assert.match(r.stdout, /\nTree Ring Memory is ready\.\nNo memory root yet at \.tree-ring\. Run init when you are ready\.\n/);
  assert.ok(!r.stdout.includes('\x1b['), 'no colour when stdout is not a terminal');
  assert.ok(r.stdout.endsWith(`Next useful commands\n${NEXT.map((c) => `  ${c}\n`).join('')}`));
  const doc = json(tr(dir, ['--json', 'welcome']));
  assert.deepEqual(doc, { ok: true, root: '.tree-ring', sqlite_path: '.tree-ring/memory.sqlite', initialized: false, init_requested: false, agent_awareness: null, next: NEXT });
  assert.deepEqual(fs.readdirSync(dir), []);
});

test('welcome --init initializes the store and lists adapters under integrations', () => {
  const dir = tempProject();
  const r = tr(dir, ['welcome', '--init', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const doc = json<Record<string, any>>(r);
  assert.deepEqual(Object.keys(doc), ['ok', 'root', 'sqlite_path', 'initialized', 'init_requested', 'agent_awareness', 'integrations', 'next']);
  assert.equal(doc.initialized, true);
  assert.equal(doc.init_requested, true);
  assert.equal('harnesses' in doc, false);
  assert.deepEqual(doc.agent_awareness.created, ['.tree-ring/AGENTS.md', '.tree-ring/SKILL.md', '.tree-ring/CLI.md']);
  const ids = (doc.integrations as Array<{ harness_id: string; state: string; next_step: string }>).map((i) => i.harness_id).sort();
  assert.deepEqual(ids, ['agent-zero', 'claude-code', 'codex', 'pi']);
  assert.ok(fs.existsSync(path.join(dir, '.tree-ring', 'memory.sqlite')));
  assert.ok(fs.existsSync(path.join(dir, '.tree-ring', 'activation.json')), 'the activation manifest is published');

  const again = tr(dir, ['welcome', '--init']);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /Project initialized at \.tree-ring\. Fresh memory can start in cambium\.\n/);
  assert.match(again.stdout, /\nAgent awareness\n {2}Existing guidance found in the memory root\.\n/);
  assert.match(again.stdout, /\nIntegrations\n {2}(codex|claude-code|pi|agent-zero): \S+\n {4}next: /);
  const look = tr(dir, ['welcome']);
  assert.match(look.stdout, /Memory root found at \.tree-ring\. You can recall or open the TUI now\.\n/);
});

test('welcome --init with another root initializes the store only (no adapters)', () => {
  const dir = tempProject();
  const doc = json<Record<string, any>>(tr(dir, ['--root', 'mem', 'welcome', '--init', '--json']));
  assert.deepEqual(doc.integrations, []);
  assert.equal(doc.sqlite_path, 'mem/memory.sqlite');
  assert.ok(fs.existsSync(path.join(dir, 'mem', 'memory.sqlite')));
  assert.equal(fs.existsSync(path.join(dir, '.tree-ring')), false);
});
