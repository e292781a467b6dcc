import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { LIFECYCLE_MARKER } from '../../src/core/treering/activation/constants.js';
import { hookCommand } from '../../src/core/treering/activation/bridges.js';
import { initActivation } from '../../src/core/treering/activation/init.js';
import { setDirectorySyncForTests } from '../../src/core/treering/activation/projectfs.js';
import { resolveRoot } from '../../src/core/treering/activation/root.js';
import { json } from '../support/cli.js';
import { snapshotTree, statusOf, tempProject, tr } from '../support/treering-activation.js';

test('init publishes the manifest, bridges, binding and launcher; statuses per harness', () => {
  const p = tempProject();
  fs.mkdirSync(path.join(p, '.pi')); // Pi is published only where the project has .pi
  const r = tr(p, ['init', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const doc = json<{ store_id: string; manifest: string; integrations: { harness_id: string; state: string }[] }>(r);
  assert.match(doc.store_id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(doc.manifest, 'created');
  for (const f of ['.tree-ring/activation.json', '.agents/skills/tree-ring-memory/SKILL.md', '.codex/hooks.json', '.claude/skills/tree-ring-memory/SKILL.md', '.claude/settings.json', 'AGENTS.md', '.pi/extensions/tree-ring-memory.ts', '.tree-ring/activation/agent-zero.json', '.tree-ring/bin/tree-ring'])
    assert.ok(fs.existsSync(path.join(p, f)), f);
  const manifestText = fs.readFileSync(path.join(p, '.tree-ring/activation.json'), 'utf8');
  assert.ok(!manifestText.includes(p), 'no absolute paths in the manifest');
  // Upstream plugins stand down when they find the marker followed by a closing quote.
  assert.ok(fs.readFileSync(path.join(p, '.codex/hooks.json'), 'utf8').includes(`${LIFECYCLE_MARKER}"`));
  const claude = JSON.parse(fs.readFileSync(path.join(p, '.claude/settings.json'), 'utf8')) as { hooks: Record<string, { hooks: { description: string; timeout: number }[] }[]> };
  assert.deepEqual(Object.keys(claude.hooks).sort(), ['SessionStart', 'Stop', 'SubagentStart', 'SubagentStop']);
  for (const groups of Object.values(claude.hooks)) for (const g of groups) for (const h of g.hooks) {
    assert.equal(h.description, LIFECYCLE_MARKER);
    assert.equal(h.timeout, 10);
  }
  const codex = JSON.parse(fs.readFileSync(path.join(p, '.codex/hooks.json'), 'utf8')) as { hooks: Record<string, { hooks: { timeout: number; command: string }[] }[]> };
  assert.deepEqual(Object.keys(codex.hooks).sort(), ['SessionStart', 'Stop', 'SubagentStart', 'SubagentStop']);
  for (const groups of Object.values(codex.hooks)) for (const g of groups) for (const h of g.hooks) {
    assert.equal(h.timeout, 10);
    assert.match(h.command, /--root \.tree-ring integrations hook --harness codex --input-json-stdin/);
  }
  const agents = fs.readFileSync(path.join(p, 'AGENTS.md'), 'utf8');
  assert.ok(agents.startsWith('<!-- tree-ring:begin codex v1 -->\n'));
  assert.ok(agents.trimEnd().endsWith('<!-- tree-ring:end codex -->'));
  const binding = JSON.parse(fs.readFileSync(path.join(p, '.tree-ring/activation/agent-zero.json'), 'utf8')) as Record<string, unknown>;
  assert.equal(binding.memory_root, '.tree-ring');
  assert.equal(binding.store_id, doc.store_id);

  assert.equal(statusOf(p, 'codex').state, 'configured-awaiting-proof');
  assert.equal(statusOf(p, 'claude-code').state, 'configured-awaiting-proof');
  assert.equal(statusOf(p, 'pi').state, 'needs-trust');
  assert.equal(statusOf(p, 'agent-zero').state, 'needs-plugin');
  for (const h of ['hermes', 'opencode', 'goose']) assert.equal(statusOf(p, h).state, 'unsupported');
  assert.equal(statusOf(p, 'codex').last_recall_result_count, undefined, 'no receipt: verbose fields omitted');

  // Re-running init changes nothing: the manifest is semantically unchanged and kept byte-for-byte.
  const before = snapshotTree(p);
  const again = tr(p, ['init', '--json']);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(json<{ manifest: string }>(again).manifest, 'unchanged');
  assert.deepEqual(snapshotTree(p), before);
  // explicit ./.tree-ring and an absolute root are the same store
  assert.equal(json<{ store_id: string }>(tr(p, ['--root', path.join(p, '.tree-ring'), 'init', '--json'])).store_id, doc.store_id);
  assert.equal(json<{ store_id: string }>(tr(p, ['--root', './.tree-ring', 'init', '--json'])).store_id, doc.store_id);
  assert.deepEqual(snapshotTree(p), before);
});

test('init --dry-run writes nothing; status never creates .tree-ring', () => {
  const p = tempProject();
  const d = tr(p, ['init', '--dry-run', '--json']);
  assert.equal(d.code, 0, d.stderr);
  assert.equal(json<{ manifest: string }>(d).manifest, 'would-create');
  assert.deepEqual(fs.readdirSync(p), []);
  const s = tr(p, ['integrations', 'status', '--json']);
  assert.equal(s.code, 0, s.stderr);
  assert.equal(json<{ initialized: boolean }>(s).initialized, false);
  assert.deepEqual(fs.readdirSync(p), []);
  const plain = tr(p, ['integrations', 'status']);
  assert.match(plain.stdout, /not initialized/);
  assert.match(plain.stdout, /run tree-ring init/);
});

function write(p: string, rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(p, rel)), { recursive: true });
  fs.writeFileSync(path.join(p, rel), text);
}

const CONFLICTS: { name: string; harness: string; setup: (p: string) => void }[] = [
  // A shared hook file is merged into (test below) unless it is not a hook document or already holds
  // a Tree Ring handler that is not exactly ours.
  { name: 'existing .claude/settings.json that is not JSON', harness: 'claude-code', setup: (p) => write(p, '.claude/settings.json', '{"permissions":\n') },
  {
    name: 'existing .codex/hooks.json with a changed Tree Ring handler',
    harness: 'codex',
    setup: (p) => write(p, '.codex/hooks.json', JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: hookCommand('codex'), timeout: 99 }] }] } })),
  },
  { name: 'existing project AGENTS.md', harness: 'codex', setup: (p) => write(p, 'AGENTS.md', '# Team contract\n') },
  {
    name: 'AGENTS.md with a changed Tree Ring block',
    harness: 'codex',
    setup: (p) => write(p, 'AGENTS.md', '# Team\n\n<!-- tree-ring:begin codex v1 -->\nedited\n<!-- tree-ring:end codex -->\n'),
  },
  {
    name: 'symlinked bridge target',
    harness: 'claude-code',
    setup: (p) => {
      write(p, 'elsewhere.json', '{}\n');
      fs.mkdirSync(path.join(p, '.claude'));
      fs.symlinkSync('../elsewhere.json', path.join(p, '.claude/settings.json'));
    },
  },
  { name: 'symlinked bridge directory', harness: 'codex', setup: (p) => { fs.mkdirSync(path.join(p, 'real-codex')); fs.symlinkSync('real-codex', path.join(p, '.codex')); } },
  { name: 'existing Pi extension', harness: 'pi', setup: (p) => write(p, '.pi/extensions/tree-ring-memory.ts', 'export default () => {};\n') },
  { name: 'existing Agent Zero binding', harness: 'agent-zero', setup: (p) => write(p, '.tree-ring/activation/agent-zero.json', '{}\n') },
];

for (const c of CONFLICTS) {
  test(`conflicting bridge (${c.name}) -> needs-user-review, bytes unchanged`, () => {
    const p = tempProject();
    c.setup(p);
    const before = snapshotTree(p);
    const r = tr(p, ['init', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const h = json<{ integrations: { harness_id: string; state: string }[] }>(r).integrations.find((x) => x.harness_id === c.harness)!;
    assert.equal(h.state, 'needs-user-review');
    const after = snapshotTree(p);
    for (const [k, v] of Object.entries(before)) assert.equal(after[k], v, `${k} unchanged`);
    const s = statusOf(p, c.harness);
    assert.equal(s.state, 'needs-user-review');
    assert.ok(typeof s.next_step === 'string' && s.next_step.length > 0);
    // activation cannot override it either, and changes nothing
    const snap = snapshotTree(p);
    const a = tr(p, ['integrations', 'activate', '--harness', c.harness, '--json']);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(json<{ state: string }>(a).state, 'needs-user-review');
    assert.deepEqual(snapshotTree(p), snap);
  });
}

test('an existing hook file of another tool gets our handlers beside its own; edits outside ours are accepted', () => {
  const p = tempProject();
  write(p, '.claude/settings.json', '{"permissions":{},"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo other"}]}]}}\n');
  write(p, '.codex/hooks.json', '{"hooks":{}}\n');
  const r = tr(p, ['init', '--json']);
  assert.equal(r.code, 0, r.stderr);
  for (const h of ['claude-code', 'codex']) assert.equal(json<{ integrations: { harness_id: string; state: string }[] }>(r).integrations.find((x) => x.harness_id === h)!.state, 'configured-awaiting-proof', h);
  const settings = JSON.parse(fs.readFileSync(path.join(p, '.claude/settings.json'), 'utf8'));
  assert.deepEqual(settings.permissions, {});
  assert.equal(settings.hooks.Stop.length, 2);
  assert.equal(settings.hooks.Stop[0].hooks[0].command, 'echo other');
  assert.equal(settings.hooks.Stop[1].hooks[0].command, hookCommand('claude-code'));
  // Re-indenting the file or adding another tool's handler leaves our handlers verified.
  settings.hooks.SessionStart.unshift({ matcher: 'startup', hooks: [{ type: 'command', command: 'echo hi' }] });
  fs.writeFileSync(path.join(p, '.claude/settings.json'), JSON.stringify(settings));
  assert.equal(statusOf(p, 'claude-code').state, 'configured-awaiting-proof');
});

test('AGENTS.md that already holds the exact block is accepted; text around it may change', () => {
  const p = tempProject();
  const first = tempProject();
  tr(first, ['init']);
  const block = fs.readFileSync(path.join(first, 'AGENTS.md'), 'utf8');
  write(p, 'AGENTS.md', `# Team contract\n\n${block}`);
  const r = tr(p, ['init', '--json']);
  assert.equal(json<{ integrations: { harness_id: string; state: string }[] }>(r).integrations.find((h) => h.harness_id === 'codex')!.state, 'configured-awaiting-proof');
  fs.appendFileSync(path.join(p, 'AGENTS.md'), '\n## More project rules\n');
  assert.equal(statusOf(p, 'codex').state, 'configured-awaiting-proof');
});

test('changed owned material after init -> needs-user-review; missing material is re-created by activate', () => {
  const p = tempProject();
  tr(p, ['init']);
  // Our own handler changed (a shared hook file is checked by its Tree Ring handlers, not its bytes).
  const settingsFile = path.join(p, '.claude/settings.json');
  fs.writeFileSync(settingsFile, fs.readFileSync(settingsFile, 'utf8').replace('"timeout": 10', '"timeout": 11'));
  assert.equal(statusOf(p, 'claude-code').state, 'needs-user-review');
  const before = snapshotTree(p);
  const a = tr(p, ['integrations', 'activate', '--harness', 'claude-code', '--json']);
  assert.equal(json<{ state: string }>(a).state, 'needs-user-review');
  assert.deepEqual(snapshotTree(p), before);

  fs.unlinkSync(path.join(p, '.codex/hooks.json'));
  assert.equal(statusOf(p, 'codex').state, 'needs-user-review');
  const dry = tr(p, ['integrations', 'activate', '--harness', 'codex', '--dry-run', '--json']);
  assert.deepEqual(json<{ changed_paths: string[] }>(dry).changed_paths, ['.codex/hooks.json']);
  assert.ok(!fs.existsSync(path.join(p, '.codex/hooks.json')));
  const act = tr(p, ['integrations', 'link', '--harness', 'codex', '--json']);
  const doc = json<{ state: string; next_step: string }>(act);
  assert.equal(doc.state, 'configured-awaiting-proof');
  assert.match(doc.next_step, /new Codex session/);
  assert.equal(statusOf(p, 'codex').state, 'configured-awaiting-proof');
});

test('deactivate changes nothing and lists reconciliation steps', () => {
  const p = tempProject();
  fs.mkdirSync(path.join(p, '.pi')); // Pi is published only where the project has .pi
  tr(p, ['init']);
  const before = snapshotTree(p);
  for (const h of ['codex', 'claude-code', 'pi', 'agent-zero']) {
    const r = tr(p, ['integrations', 'deactivate', '--harness', h, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const d = json<{ state: string; reconcile: string[] }>(r);
    assert.equal(d.state, 'needs-user-review');
    assert.ok(d.reconcile.length > 0);
  }
  assert.deepEqual(snapshotTree(p), before);
});

test('an invalid or older-version manifest is kept byte-for-byte and every harness needs review', () => {
  const p = tempProject();
  fs.mkdirSync(path.join(p, '.pi')); // Pi is published only where the project has .pi
  tr(p, ['init']);
  const mf = path.join(p, '.tree-ring/activation.json');
  const m = JSON.parse(fs.readFileSync(mf, 'utf8')) as { harnesses: Record<string, { adapter_version: string }> };
  m.harnesses.codex!.adapter_version = '3';
  fs.writeFileSync(mf, JSON.stringify(m));
  const before = snapshotTree(p);
  const r = tr(p, ['init', '--json']);
  const doc = json<{ manifest: string; integrations: { harness_id: string; state: string }[] }>(r);
  assert.equal(doc.manifest, 'needs-user-review');
  assert.equal(doc.integrations.find((h) => h.harness_id === 'codex')!.state, 'needs-user-review');
  assert.deepEqual(snapshotTree(p), before);
  assert.equal(statusOf(p, 'codex').state, 'needs-user-review');

  fs.writeFileSync(mf, '{"schema_version":1,');
  const b2 = snapshotTree(p);
  const r2 = tr(p, ['init', '--json']);
  assert.ok(json<{ integrations: { state: string }[] }>(r2).integrations.every((h) => h.state === 'needs-user-review'));
  assert.deepEqual(snapshotTree(p), b2);
});

test('a directory sync failure after publication keeps everything and reports needs-user-review', () => {
  const p = tempProject();
  setDirectorySyncForTests(() => {
    throw new Error('EIO');
  });
  try {
    const r = initActivation(resolveRoot(p, undefined), { dryRun: false });
    assert.ok(r.integrations.every((h) => h.state === 'needs-user-review'));
  } finally {
    setDirectorySyncForTests(undefined);
  }
  for (const f of ['.tree-ring/activation.json', '.codex/hooks.json', '.claude/settings.json']) assert.ok(fs.existsSync(path.join(p, f)), `${f} kept`);
});

test('status on a TTY renders the ink table with next steps', async () => {
  const p = tempProject();
  tr(p, ['init']);
  const { deriveStatus } = await import('../../src/core/treering/activation/status.js');
  const { renderStatusTable } = await import('../../src/commands/tree-ring/status-view.js');
  const text = await renderStatusTable(deriveStatus(resolveRoot(p, undefined), {}, new Date(), true), 120);
  assert.match(text, /Claude Code/);
  assert.match(text, /configured-awaiting-proof/);
  assert.match(text, /needs-plugin/);
  assert.match(text, /next: /);
});
