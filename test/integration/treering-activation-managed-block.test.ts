// The root AGENTS.md is the project's: Tree Ring owns only its marked block. Text the project writes
// above or below that unchanged block must not invalidate init, activate or status (or an existing
// receipt); a changed block or a changed .codex/hooks.json still needs review.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { bridgeFingerprint } from '../../src/core/treering/activation/fingerprint.js';
import { json } from '../support/cli.js';
import { hook, hookInput, snapshotTree, statusOf, tempProject, tr } from '../support/treering-activation.js';

interface InitDoc {
  manifest: string;
  integrations: { harness_id: string; state: string; detail?: string }[];
}

function initCodex(p: string): { manifest: string; state: string; detail?: string } {
  const r = tr(p, ['init', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const doc = json<InitDoc>(r);
  const h = doc.integrations.find((x) => x.harness_id === 'codex')!;
  return { manifest: doc.manifest, state: h.state, ...(h.detail ? { detail: h.detail } : {}) };
}

function activateCodex(p: string): { state: string; detail?: string } {
  const r = tr(p, ['integrations', 'activate', '--harness', 'codex', '--json']);
  assert.equal(r.code, 0, r.stderr);
  return json<{ state: string; detail?: string }>(r);
}

const AGENTS = (p: string) => path.join(p, 'AGENTS.md');

// Each edit leaves our block byte-for-byte and changes the whitespace and text around it.
const EDITS: { name: string; edit: (text: string) => string }[] = [
  { name: 'a line above', edit: (t) => `Project rules above.\n${t}` },
  { name: 'a paragraph above', edit: (t) => `# Team contract\n\nUse small commits.\n\n${t}` },
  { name: 'text on the line before the marker', edit: (t) => `See below: ${t}` },
  { name: 'text below', edit: (t) => `${t}\n## More project rules\n` },
  { name: 'text above and below', edit: (t) => `# Rules\n\n${t}\nTrailing notes.\n` },
];

for (const e of EDITS) {
  test(`editing around the managed AGENTS.md block (${e.name}) keeps init, activate and status`, () => {
    const p = tempProject();
    assert.equal(initCodex(p).state, 'configured-awaiting-proof');
    fs.writeFileSync(AGENTS(p), e.edit(fs.readFileSync(AGENTS(p), 'utf8')));
    const before = snapshotTree(p);

    const again = initCodex(p);
    assert.equal(again.state, 'configured-awaiting-proof', again.detail);
    assert.equal(again.manifest, 'unchanged');
    const act = activateCodex(p);
    assert.equal(act.state, 'configured-awaiting-proof', act.detail);
    assert.equal(statusOf(p, 'codex').state, 'configured-awaiting-proof');
    assert.deepEqual(snapshotTree(p), before, 'nothing written');
  });
}

test('a receipt taken before the project edits around the block still proves activation', () => {
  const p = tempProject();
  initCodex(p);
  const h = hook(p, 'codex', hookInput('SessionStart', p));
  assert.equal(h.code, 0, h.stderr);
  assert.equal(statusOf(p, 'codex').state, 'active');
  fs.writeFileSync(AGENTS(p), `# Team contract\n${fs.readFileSync(AGENTS(p), 'utf8')}\nMore.\n`);
  assert.equal(statusOf(p, 'codex').state, 'active');
  const again = initCodex(p);
  assert.notEqual(again.state, 'needs-user-review', again.detail);
  assert.equal(again.manifest, 'unchanged');
  assert.equal(activateCodex(p).state, 'active');
  // and the lifecycle hook keeps working (the installed material reproduces the fingerprint)
  assert.equal(hook(p, 'codex', hookInput('SessionStart', p)).code, 0);
});

test('an existing AGENTS.md with the block: the project may later change the text above it', () => {
  const first = tempProject();
  initCodex(first);
  const block = fs.readFileSync(AGENTS(first), 'utf8');
  const p = tempProject();
  fs.writeFileSync(AGENTS(p), `# Team contract\n\n${block}`);
  assert.equal(initCodex(p).state, 'configured-awaiting-proof');
  fs.writeFileSync(AGENTS(p), `# Team contract, revised\n${block}`);
  const again = initCodex(p);
  assert.equal(again.state, 'configured-awaiting-proof', again.detail);
  assert.equal(again.manifest, 'unchanged');
  assert.equal(activateCodex(p).state, 'configured-awaiting-proof');
  // The fingerprint depends on our material only: the same as a project whose AGENTS.md we created.
  const fp = (dir: string) => (JSON.parse(fs.readFileSync(path.join(dir, '.tree-ring/activation.json'), 'utf8')) as { harnesses: { codex: { bridge_fingerprint: string } } }).harnesses.codex.bridge_fingerprint;
  assert.equal(fp(p), fp(first));
});

test('a manifest that recorded a leading separator keeps that ownership whatever surrounds the block', () => {
  const p = tempProject();
  initCodex(p);
  const mf = path.join(p, '.tree-ring/activation.json');
  type Rec = { adapter_version: string; bridge_fingerprint: string; owned_files: { path: string; sha256: string }[]; managed_blocks: { path: string; block_id: string; sha256: string; leading_separator?: string }[] };
  const m = JSON.parse(fs.readFileSync(mf, 'utf8')) as { harnesses: { codex: Rec } };
  const rec = m.harnesses.codex;
  rec.managed_blocks = rec.managed_blocks.map((b) => ({ ...b, leading_separator: '\n\n' }));
  rec.bridge_fingerprint = bridgeFingerprint('codex', rec.adapter_version, rec.owned_files, rec.managed_blocks.map((b) => ({ ...b, leading_separator: b.leading_separator ?? '' })));
  fs.writeFileSync(mf, JSON.stringify(m, null, 2) + '\n');
  // the block still starts the file: no whitespace before it at all
  fs.appendFileSync(AGENTS(p), '\nBelow.\n');
  const before = snapshotTree(p);
  const again = initCodex(p);
  assert.equal(again.state, 'configured-awaiting-proof', again.detail);
  assert.equal(again.manifest, 'unchanged');
  assert.equal(activateCodex(p).state, 'configured-awaiting-proof');
  assert.equal(statusOf(p, 'codex').state, 'configured-awaiting-proof');
  assert.deepEqual(snapshotTree(p), before);
});

test('a changed managed block or a changed .codex/hooks.json still needs review everywhere', () => {
  for (const change of ['block', 'hooks'] as const) {
    const p = tempProject();
    initCodex(p);
    if (change === 'block') {
      const t = fs.readFileSync(AGENTS(p), 'utf8');
      fs.writeFileSync(AGENTS(p), 'Above.\n' + t.replace('## Tree Ring Memory', '## Tree Ring Memory (edited)'));
    } else {
      fs.writeFileSync(AGENTS(p), 'Above.\n' + fs.readFileSync(AGENTS(p), 'utf8'));
      // Our own handler changed (whitespace or others' handlers in this shared file would not matter).
      const hooks = path.join(p, '.codex/hooks.json');
      fs.writeFileSync(hooks, fs.readFileSync(hooks, 'utf8').replace('"timeout": 10', '"timeout": 11'));
    }
    const before = snapshotTree(p);
    assert.equal(initCodex(p).state, 'needs-user-review', change);
    assert.equal(activateCodex(p).state, 'needs-user-review', change);
    assert.equal(statusOf(p, 'codex').state, 'needs-user-review', change);
    assert.deepEqual(snapshotTree(p), before, `${change}: nothing written`);
  }
});
