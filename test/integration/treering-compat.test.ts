// The texts, keys and options of upstream Tree Ring 0.15 that its clients read: the Stop checkpoint's
// layout (and that its command works from a subdirectory, and without the launcher from PATH), the
// `integrations` key of init and status, the skill bridges, Pi only where the project has .pi,
// activate's next steps and --source-root / --accept-managed-block, the hook's input checks before it
// skips a project without .tree-ring, and the active-isolated / needs-project-mount states.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { json, TREE_RING_BIN } from '../support/cli.js';
import { hook, hookInput, receiptFiles, snapshotTree, statusOf, tempProject, tr } from '../support/treering-activation.js';
import { checkAgentZeroDescriptor } from '../../src/core/treering/activation/agent-zero.js';
import { skillBridge } from '../../src/core/treering/activation/bridges.js';

interface Row {
  id: string;
  harness_id: string;
  state: string;
  detail?: string;
  next_step: string;
}

const PATH_ONLY_SYSTEM = '/usr/bin:/bin';

/** Fills the checkpoint's placeholders the way an agent is asked to, for one candidate. */
function filled(commandLine: string, summary: string): string {
  return commandLine
    .replace('"<concise summary>"', `"${summary}"`)
    .replace('<preference|decision|lesson|warning|correction|seed>', 'lesson')
    .replace('<cambium|scar|seed>', 'cambium')
    .replace('-<1|2|3>', '-1');
}

function checkpoint(p: string): { lines: string[]; reason: string } {
  const r = hook(p, 'claude-code', hookInput('Stop', p));
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { decision: string; reason: string };
  assert.equal(out.decision, 'block');
  return { lines: out.reason.split('\n'), reason: out.reason };
}

function exportedSummaries(p: string): string[] {
  const r = tr(p, ['--root', '.tree-ring', 'export']);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { type: string; memory?: { summary: string } })
    .filter((x) => x.type === 'memory_event')
    .map((x) => x.memory!.summary);
}

test('Stop checkpoint: upstream layout, the capture command on the second line with its placeholders', () => {
  const p = tempProject();
  assert.equal(tr(p, ['init']).code, 0);
  const { lines } = checkpoint(p);
  assert.equal(lines.length, 3);
  assert.match(lines[0]!, /^Tree Ring automatic capture checkpoint [0-9a-f-]{36}\. Before stopping, review only the durable outcomes already available in your working context\./);
  assert.match(lines[0]!, /run one strict capture command per candidate:$/);
  const cmd = lines[1]!;
  assert.match(cmd, /^project_root='[^']+'; tree_ring="\$project_root\/\.tree-ring\/bin\/tree-ring"; if \[ ! -x "\$tree_ring" \]; then tree_ring=tree-ring; fi; /);
  assert.ok(cmd.includes('"$tree_ring" --root "$project_root/.tree-ring" capture "<concise summary>" --event-type <preference|decision|lesson|warning|correction|seed> --ring <cambium|scar|seed> '), cmd);
  assert.match(cmd, / --project "proj" --agent-profile "claude-code" --workflow-id "sess-0001" --session-id "sess-0001" --operation-id auto-([0-9a-f-]{36})-<1\|2\|3> --source-ref agent-checkpoint:\1$/);
  assert.match(lines[2]!, /^Use the same indexed operation ID only when retrying that same candidate\. Use only `tree-ring capture` for this automatic checkpoint;/);
  assert.match(lines[2]!, /After this checkpoint, finish the response\.$/);
});

test('the checkpoint command, run from a subdirectory, stores the memory; without the launcher it uses tree-ring on PATH', () => {
  const p = tempProject('sub dir project');
  assert.equal(tr(p, ['init']).code, 0);
  const sub = path.join(p, 'src', 'deep');
  fs.mkdirSync(sub, { recursive: true });
  // No git here: the root comes from the command itself, not from the agent's working directory.
  const first = filled(checkpoint(p).lines[1]!, 'Run the integration suite from the repository root.');
  const r1 = spawnSync('/bin/sh', ['-c', first], { cwd: sub, env: { PATH: PATH_ONLY_SYSTEM }, encoding: 'utf8' });
  assert.equal(r1.status, 0, `${first}\n${r1.stderr}`);
  assert.ok(exportedSummaries(p).includes('Run the integration suite from the repository root.'));
  assert.deepEqual(fs.readdirSync(sub), [], 'nothing is created in the working directory');

  // Without .tree-ring/bin the same command falls back to `tree-ring` on PATH.
  fs.rmSync(path.join(p, '.tree-ring/bin'), { recursive: true });
  const second = filled(checkpoint(p).lines[1]!, 'Pin the database image by digest in CI.');
  const missing = spawnSync('/bin/sh', ['-c', second], { cwd: sub, env: { PATH: PATH_ONLY_SYSTEM }, encoding: 'utf8' });
  assert.notEqual(missing.status, 0, 'no launcher and no tree-ring on PATH: the command cannot run');
  const bin = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tr-path-')));
  fs.writeFileSync(path.join(bin, 'tree-ring'), `#!/bin/sh\nexec '${process.execPath}' '${TREE_RING_BIN}' "$@"\n`, { mode: 0o755 });
  const r2 = spawnSync('/bin/sh', ['-c', second], { cwd: sub, env: { PATH: `${bin}:${PATH_ONLY_SYSTEM}` }, encoding: 'utf8' });
  assert.equal(r2.status, 0, `${second}\n${r2.stderr}`);
  assert.ok(exportedSummaries(p).includes('Pin the database image by digest in CI.'));
});

test('init and status list the harnesses under integrations, with upstream\'s id key', () => {
  const p = tempProject();
  const init = tr(p, ['init', '--json']);
  assert.equal(init.code, 0, init.stderr);
  const doc = json<Record<string, unknown>>(init);
  assert.equal(doc.harnesses, undefined);
  assert.deepEqual((doc.integrations as Row[]).map((h) => h.harness_id), ['codex', 'claude-code', 'pi', 'agent-zero']);
  const st = json<Record<string, unknown>>(tr(p, ['integrations', 'status', '--json']));
  assert.equal(st.harnesses, undefined);
  const rows = st.integrations as Row[];
  assert.ok(rows.length >= 4);
  for (const r of rows) assert.equal(r.id, r.harness_id);
});

test('init publishes upstream\'s skill bridges; the Pi extension only where the project has .pi', () => {
  const p = tempProject();
  assert.equal(tr(p, ['init']).code, 0);
  for (const f of ['.agents/skills/tree-ring-memory/SKILL.md', '.claude/skills/tree-ring-memory/SKILL.md']) assert.equal(fs.readFileSync(path.join(p, f), 'utf8'), skillBridge(), f);
  assert.match(skillBridge(), /^---\nname: tree-ring-memory\ndescription: Use the canonical project-local Tree Ring Memory guidance and preflight contract\.\n---\n/);
  assert.equal(fs.existsSync(path.join(p, '.pi')), false, 'no .pi, no Pi extension');
  const pi = statusOf(p, 'pi') as unknown as Row;
  assert.equal(pi.state, 'unsupported');
  assert.match(pi.detail!, /not detected/);
  const m = JSON.parse(fs.readFileSync(path.join(p, '.tree-ring/activation.json'), 'utf8')) as { harnesses: Record<string, { owned_files: { path: string }[] }> };
  assert.equal(m.harnesses.pi, undefined);
  assert.deepEqual(m.harnesses.codex!.owned_files.map((f) => f.path).sort(), ['.agents/skills/tree-ring-memory/SKILL.md', '.codex/hooks.json']);
  assert.deepEqual(m.harnesses['claude-code']!.owned_files.map((f) => f.path).sort(), ['.claude/settings.json', '.claude/skills/tree-ring-memory/SKILL.md']);
  for (const h of ['codex', 'claude-code']) assert.equal((statusOf(p, h) as unknown as Row).state, 'configured-awaiting-proof', h);

  // With .pi, Pi gets its extension and shares Codex's skill bridge (one file, both own it).
  const q = tempProject();
  fs.mkdirSync(path.join(q, '.pi'));
  const init = tr(q, ['init', '--json']);
  assert.equal(init.code, 0, init.stderr);
  assert.ok(fs.existsSync(path.join(q, '.pi/extensions/tree-ring-memory.ts')));
  const rows = json<{ integrations: Row[] }>(init).integrations;
  assert.equal(rows.find((h) => h.harness_id === 'pi')!.state, 'needs-trust');
  assert.equal(rows.find((h) => h.harness_id === 'codex')!.state, 'configured-awaiting-proof');
  assert.equal((statusOf(q, 'pi') as unknown as Row).state, 'needs-trust');
  assert.equal((statusOf(q, 'codex') as unknown as Row).state, 'configured-awaiting-proof');
});

test('activate: a dry run names the reviewed plan; with valid proof it is active with "No action required"', () => {
  const p = tempProject();
  assert.equal(tr(p, ['init']).code, 0);
  const manifest = fs.readFileSync(path.join(p, '.tree-ring/activation.json'));
  const preview = json<Row & { dry_run: boolean }>(tr(p, ['integrations', 'activate', '--harness', 'codex', '--dry-run', '--json']));
  assert.equal(preview.dry_run, true);
  assert.match(preview.next_step, /^Apply the reviewed bridge plan, then complete adapter-specific preflight and receipt verification\.$/);
  for (const cmd of ['activate', 'link']) {
    const r = json<Row & { changed_paths: string[] }>(tr(p, ['integrations', cmd, '--harness', 'codex', '--json']));
    assert.equal(r.state, 'configured-awaiting-proof');
    assert.deepEqual(r.changed_paths, []);
    assert.match(r.next_step, /new Codex session/);
    assert.match(r.next_step, /integrations status --verbose/);
    assert.doesNotMatch(r.next_step, /Apply the reviewed bridge plan/);
  }
  assert.equal(tr(p, ['integrations', 'preflight', '--harness', 'codex', '--agent-profile', 'w', '--workflow-id', 'f', '--session-id', 's']).code, 0);
  const receipts = receiptFiles(p);
  for (const cmd of ['activate', 'link']) {
    const r = json<Row>(tr(p, ['integrations', cmd, '--harness', 'codex', '--json']));
    assert.equal(r.state, 'active');
    assert.match(r.next_step, /^No action required/);
  }
  assert.match((statusOf(p, 'codex') as unknown as Row).next_step, /^No action required/);
  assert.deepEqual(receiptFiles(p), receipts, 'activation writes no receipt');
  assert.deepEqual(fs.readFileSync(path.join(p, '.tree-ring/activation.json')), manifest);
});

test('activate, link, deactivate and status take --source-root; a --root naming another store is a usage error', () => {
  const p = tempProject();
  assert.equal(tr(p, ['init']).code, 0);
  const elsewhere = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tr-else-')));
  for (const cmd of ['activate', 'link']) assert.equal(json<Row>(tr(elsewhere, ['integrations', cmd, '--harness', 'codex', '--source-root', p, '--json'])).state, 'configured-awaiting-proof', cmd);
  const d = json<Row & { reconcile: string[] }>(tr(elsewhere, ['integrations', 'deactivate', '--harness', 'codex', '--source-root', p, '--json']));
  assert.equal(d.state, 'needs-user-review');
  assert.ok(d.reconcile.some((s) => s.includes('.codex/hooks.json')));
  assert.ok((json<{ integrations: Row[] }>(tr(elsewhere, ['integrations', 'status', '--source-root', p, '--json'])).integrations).some((h) => h.state === 'configured-awaiting-proof'));
  const other = tempProject('other');
  for (const cmd of ['activate', 'link', 'deactivate', 'status']) {
    const base = ['integrations', cmd, ...(cmd === 'status' ? [] : ['--harness', 'codex']), '--source-root', p, '--json'];
    // Both naming the same store, as the Agent Zero plugin passes them: accepted.
    const same = tr(elsewhere, ['--root', path.join(p, '.tree-ring'), ...base]);
    assert.equal(same.code, 0, `${cmd}: ${same.stderr}`);
    const r = tr(elsewhere, ['--root', path.join(other, '.tree-ring'), ...base]);
    assert.equal(r.code, 2, `${cmd}: ${r.stderr}`);
    assert.match(r.stderr, /--root names another store than the \.tree-ring of --source-root/);
  }
  assert.deepEqual(fs.readdirSync(elsewhere), []);
});

test('--accept-managed-block: the project\'s own AGENTS.md is never edited; the block to add is returned', () => {
  const p = tempProject();
  fs.writeFileSync(path.join(p, 'AGENTS.md'), '# Team contract\n');
  assert.equal(tr(p, ['init']).code, 0);
  const before = snapshotTree(p);
  const plain = json<Row>(tr(p, ['integrations', 'activate', '--harness', 'codex', '--json']));
  assert.equal(plain.state, 'needs-user-review');
  assert.match(plain.next_step, /tree-ring integrations activate --harness codex --accept-managed-block/);
  const accepted = json<Row & { managed_block: string }>(tr(p, ['integrations', 'activate', '--harness', 'codex', '--accept-managed-block', '--json']));
  assert.equal(accepted.state, 'needs-user-review');
  assert.match(accepted.managed_block, /^<!-- tree-ring:begin codex v1 -->\n[\s\S]*<!-- tree-ring:end codex -->$/);
  assert.match(accepted.next_step, /by hand/);
  assert.deepEqual(snapshotTree(p), before, 'nothing changed');
  assert.equal(fs.readFileSync(path.join(p, 'AGENTS.md'), 'utf8'), '# Team contract\n');
});

test('hook without .tree-ring: {} , a memory_root field and a cwd outside the project are refused before the skip', () => {
  const p = tempProject();
  const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tr-out-')));
  const cases: [string, string][] = [
    ['{}', '{}'],
    ['memory_root', hookInput('SessionStart', p, { memory_root: '/tmp/other' })],
    ['cwd outside', hookInput('SessionStart', outside)],
    ['not JSON', 'not json'],
  ];
  for (const [name, input] of cases) {
    for (const harness of ['codex', 'claude-code']) {
      const r = hook(p, harness, input);
      assert.equal(r.code, 1, `${name}: ${r.stderr}`);
      assert.equal(r.stdout, '', name);
      assert.match(r.stderr, /hook error: /, name);
    }
  }
  for (const ev of ['SessionStart', 'Stop', 'SubagentStart', 'SubagentStop']) {
    const r = hook(p, 'codex', hookInput(ev, p));
    assert.equal(r.code, 0, `${ev}: ${r.stderr}`);
    assert.equal(r.stdout, '');
  }
  assert.deepEqual(fs.readdirSync(p), [], 'nothing created');
});

test('active-isolated: a preflight against a store that is not the canonical project\'s one', () => {
  const canonical = tempProject('canonical');
  const other = tempProject('other');
  assert.equal(tr(canonical, ['init']).code, 0);
  assert.equal(tr(other, ['init']).code, 0);
  const args = ['integrations', 'preflight', '--harness', 'codex', '--agent-profile', 'w', '--workflow-id', 'f', '--session-id', 's', '--json'];
  const iso = tr(other, [...args, '--canonical-project-root', canonical]);
  assert.equal(iso.code, 0, iso.stderr);
  assert.equal(json<{ state: string }>(iso).state, 'active-isolated');
  const written = receiptFiles(other).map((n) => JSON.parse(fs.readFileSync(path.join(other, '.tree-ring/activation/receipts', n), 'utf8')) as { state: string });
  assert.deepEqual(written.map((r) => r.state), ['active-isolated']);
  assert.equal((statusOf(other, 'codex') as unknown as Row).state, 'active-isolated');
  assert.equal((statusOf(canonical, 'codex') as unknown as Row).state, 'configured-awaiting-proof', 'the canonical store has no proof');
  // Naming the project itself (or a project of the same store) is the canonical case: active.
  const self = tr(other, [...args, '--canonical-project-root', '.']);
  assert.equal(json<{ state: string }>(self).state, 'active');
  assert.equal((statusOf(other, 'codex') as unknown as Row).state, 'active');
});

test('needs-project-mount: a root this runtime cannot reach', () => {
  const gone = path.join(fs.realpathSync(os.tmpdir()), `tr-gone-${process.pid}-${Date.now()}`);
  const here = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tr-here-')));
  for (const args of [['--source-root', gone], ['--root', path.join(gone, '.tree-ring')]]) {
    const r = tr(here, ['integrations', 'status', '--json', ...args]);
    assert.equal(r.code, 0, r.stderr);
    const rows = json<{ integrations: Row[] }>(r).integrations;
    for (const h of ['codex', 'claude-code', 'pi', 'agent-zero']) assert.equal(rows.find((x) => x.harness_id === h)!.state, 'needs-project-mount', h);
  }
  assert.equal(fs.existsSync(gone), false, 'status creates nothing');
  const p = tempProject();
  assert.equal(tr(p, ['init']).code, 0);
  const pre = tr(p, ['integrations', 'preflight', '--harness', 'codex', '--canonical-project-root', gone]);
  assert.equal(pre.code, 2);
  assert.equal(pre.stdout, '');
  assert.match(pre.stderr, /needs-project-mount/);
  assert.deepEqual(receiptFiles(p), [], 'no receipt without a reachable canonical root');
});

test('Agent Zero compatibility table: plugin 3.4.2 pairs with CLI 0.15.12 exactly; 3.4.0 declares 0.15.5', () => {
  const project = tempProject();
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'a0-plugin-')));
  const write = (plugin: string, min: string) => {
    fs.writeFileSync(path.join(dir, 'plugin.yaml'), `name: tree_ring_memory\nversion: ${plugin}\n`);
    fs.writeFileSync(
      path.join(dir, 'activation-capability.json'),
      JSON.stringify({ schema_version: 1, kind: 'tree-ring-agent-zero-plugin-capability', plugin_id: 'tree_ring_memory', plugin_version: plugin, activation_protocol_version: 1, tree_ring_version: { min, minor: '0.15' }, enabled: true }),
    );
  };
  const env = { TREE_RING_AGENT_ZERO_PLUGIN_MANIFEST: path.join(dir, 'activation-capability.json') };
  write('3.4.2', '0.15.12');
  assert.equal(checkAgentZeroDescriptor(env, project, '0.15.12').ok, true);
  assert.equal(checkAgentZeroDescriptor(env, project, '0.15.13').ok, true);
  assert.equal(checkAgentZeroDescriptor(env, project, '0.15.11').ok, false);
  assert.equal(checkAgentZeroDescriptor(env, project, '0.16.0').ok, false);
  for (const min of ['0.15.11', '0.15.13']) {
    write('3.4.2', min);
    assert.equal(checkAgentZeroDescriptor(env, project, '0.15.12').ok, false, min);
  }
  write('3.4.3', '0.15.12');
  assert.equal(checkAgentZeroDescriptor(env, project, '0.15.12').ok, false);
  write('3.4.0', '0.15.5');
  assert.equal(checkAgentZeroDescriptor(env, project, '0.15.7').ok, true);
  write('3.4.0', '0.15.6');
  assert.equal(checkAgentZeroDescriptor(env, project, '0.15.7').ok, false);
});
