import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { json } from '../support/cli.js';
import { receiptFiles, snapshotTree, statusOf, tempProject, tr } from '../support/treering-activation.js';

const DESCRIPTOR = {
  schema_version: 1,
  kind: 'tree-ring-agent-zero-plugin-capability',
  plugin_id: 'tree_ring_memory',
  plugin_version: '3.4.1',
  activation_protocol_version: 1,
  tree_ring_version: { min: '0.15.6', minor: '0.15' },
  enabled: true,
};

/** The installed plugin's root outside the project: descriptor + sibling plugin.yaml. */
function plugin(descriptor: Record<string, unknown> = DESCRIPTOR, yaml = `name: tree_ring_memory\ntitle: Tree Ring Memory\nversion: ${String(descriptor.plugin_version)}\n`): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'a0-plugin-')));
  fs.writeFileSync(path.join(dir, 'activation-capability.json'), JSON.stringify(descriptor, null, 2));
  fs.writeFileSync(path.join(dir, 'plugin.yaml'), yaml);
  return path.join(dir, 'activation-capability.json');
}

const REQUEST = JSON.stringify({ agent_profile: 'agent-zero-worker', workflow_id: 'workflow-01', session_id: 'session-01' });
const PREFLIGHT = ['--root', '.tree-ring', 'integrations', 'preflight', '--harness', 'agent-zero', '--input-json-stdin', '--context-format', 'json'];

test('Agent Zero pair check: init -> configured-awaiting-proof -> preflight active -> status active', () => {
  const p = tempProject();
  const env = { TREE_RING_AGENT_ZERO_PLUGIN_MANIFEST: plugin() };
  // a descriptor-scoped init establishes the passive binding but never proof
  const init = tr(p, ['--root', '.tree-ring', 'init', '--json'], undefined, env);
  assert.equal(init.code, 0, init.stderr);
  assert.equal(json<{ integrations: { harness_id: string; state: string }[] }>(init).integrations.find((h) => h.harness_id === 'agent-zero')!.state, 'configured-awaiting-proof', 'the reported state is the one descriptor-scoped status derives (upstream agent_zero_342_acceptance.rs)');
  const manifest = JSON.parse(fs.readFileSync(path.join(p, '.tree-ring/activation.json'), 'utf8')) as { harnesses: Record<string, { state: string }> };
  assert.equal(manifest.harnesses['agent-zero']!.state, 'needs-plugin');
  // the binding matches what the plugin validates
  const binding = JSON.parse(fs.readFileSync(path.join(p, '.tree-ring/activation/agent-zero.json'), 'utf8')) as { command_protocol: { arguments: string[] } };
  assert.deepEqual(binding.command_protocol.arguments, ['--root', '.tree-ring', 'integrations', 'preflight', '--harness', 'agent-zero', '--input-json-stdin', '--context-format', 'json']);

  assert.equal(statusOf(p, 'agent-zero').state, 'needs-plugin', 'host-shell status without the descriptor');
  assert.equal(statusOf(p, 'agent-zero', env).state, 'configured-awaiting-proof');
  const r = tr(p, PREFLIGHT, REQUEST, env);
  assert.equal(r.code, 0, r.stderr);
  const doc = json<{ context: string; state: string; receipt: { harness_id: string; adapter_version: string } }>(r);
  assert.equal(doc.state, 'active');
  assert.equal(doc.receipt.harness_id, 'agent-zero');
  assert.match(doc.context, /^Tree Ring Memory scoped preflight recall:/);
  assert.equal(statusOf(p, 'agent-zero', env).state, 'active');
  assert.equal(statusOf(p, 'agent-zero').state, 'needs-plugin', 'proof never replaces the descriptor');
});

const REFUSED: [string, () => string][] = [
  ['relative path', () => 'plugin/activation-capability.json'],
  ['wrong file name', () => { const d = plugin(); const other = path.join(path.dirname(d), 'capability.json'); fs.renameSync(d, other); return other; }],
  ['symlinked descriptor', () => { const d = plugin(); const l = path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'a0-link-'))), 'activation-capability.json'); fs.symlinkSync(d, l); return l; }],
  ['extra field', () => plugin({ ...DESCRIPTOR, token: 'x' })],
  ['disabled', () => plugin({ ...DESCRIPTOR, enabled: false })],
  ['wrong kind', () => plugin({ ...DESCRIPTOR, kind: 'other' })],
  ['other plugin', () => plugin({ ...DESCRIPTOR, plugin_id: 'memory' })],
  ['old release that does not pair with this CLI', () => plugin({ ...DESCRIPTOR, plugin_version: '3.1.0', tree_ring_version: { min: '0.14.0', minor: '0.14' } })],
  ['unknown release', () => plugin({ ...DESCRIPTOR, plugin_version: '9.9.9' })],
  ['series not matching the table row', () => plugin({ ...DESCRIPTOR, tree_ring_version: { min: '0.15.3', minor: '0.15' } })],
  ['plugin.yaml version mismatch', () => plugin(DESCRIPTOR, 'name: tree_ring_memory\nversion: 3.4.0\n')],
  ['plugin.yaml duplicate name', () => plugin(DESCRIPTOR, 'name: tree_ring_memory\nname: other\nversion: 3.4.1\n')],
  ['plugin.yaml missing', () => { const d = plugin(); fs.unlinkSync(path.join(path.dirname(d), 'plugin.yaml')); return d; }],
];

test('refused descriptors stay needs-plugin and leave receipts untouched', () => {
  const p = tempProject();
  const good = { TREE_RING_AGENT_ZERO_PLUGIN_MANIFEST: plugin() };
  tr(p, ['init']);
  assert.equal(tr(p, PREFLIGHT, REQUEST, good).code, 0);
  const inside = path.join(p, 'a0');
  fs.mkdirSync(inside);
  fs.writeFileSync(path.join(inside, 'activation-capability.json'), JSON.stringify(DESCRIPTOR));
  fs.writeFileSync(path.join(inside, 'plugin.yaml'), 'name: tree_ring_memory\nversion: 3.4.1\n');
  const cases: [string, () => string][] = [...REFUSED, ['inside the project', () => path.join(inside, 'activation-capability.json')]];
  for (const [label, make] of cases) {
    const env = { TREE_RING_AGENT_ZERO_PLUGIN_MANIFEST: make() };
    const before = snapshotTree(path.join(p, '.tree-ring'));
    assert.equal(statusOf(p, 'agent-zero', env).state, 'needs-plugin', label);
    const r = tr(p, PREFLIGHT, REQUEST, env);
    assert.equal(r.code, 2, label);
    assert.equal(r.stdout, '', label);
    assert.deepEqual(snapshotTree(path.join(p, '.tree-ring')), before, `${label}: receipts untouched`);
  }
  assert.equal(receiptFiles(p).length, 1);
});

test('the descriptor is never a flag or a stdin field', () => {
  const p = tempProject();
  tr(p, ['init']);
  const d = plugin();
  const flag = tr(p, [...PREFLIGHT, '--plugin-manifest', d], REQUEST);
  assert.equal(flag.code, 2);
  const field = tr(p, PREFLIGHT, JSON.stringify({ ...JSON.parse(REQUEST), descriptor: d }));
  assert.equal(field.code, 2);
  const hint = tr(p, PREFLIGHT, JSON.stringify({ ...JSON.parse(REQUEST), task_hint: 'x' }), { TREE_RING_AGENT_ZERO_PLUGIN_MANIFEST: d });
  assert.equal(hint.code, 2, 'Agent Zero sends no task hint');
  assert.deepEqual(receiptFiles(p), []);
});

test('a non-passive Agent Zero record does not qualify', () => {
  const p = tempProject();
  tr(p, ['init']);
  const mf = path.join(p, '.tree-ring/activation.json');
  fs.writeFileSync(mf, fs.readFileSync(mf, 'utf8').replace('"state": "needs-plugin"', '"state": "configured-awaiting-proof"'));
  const env = { TREE_RING_AGENT_ZERO_PLUGIN_MANIFEST: plugin() };
  assert.equal(statusOf(p, 'agent-zero', env).state, 'needs-user-review');
  assert.equal(tr(p, PREFLIGHT, REQUEST, env).code, 2);
});
