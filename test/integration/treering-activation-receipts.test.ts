import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { json } from '../support/cli.js';
import { hook, hookInput, receiptFiles, snapshotTree, statusOf, tempProject, tr } from '../support/treering-activation.js';

const RDIR = '.tree-ring/activation/receipts';

function readReceipt(p: string, name: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(p, RDIR, name), 'utf8')) as Record<string, unknown>;
}

let seq = 0;
/** Plants a receipt document in a harness's directory (whatever harness_id the document claims). */
function plantIn(p: string, dirHarness: string, r: Record<string, unknown>, when = new Date()): string {
  const rel = plant(p, r, when);
  const target = `${dirHarness}/${rel.split('/').slice(1).join('/')}`;
  if (target !== rel) {
    fs.mkdirSync(path.dirname(path.join(p, RDIR, target)), { recursive: true });
    fs.renameSync(path.join(p, RDIR, rel), path.join(p, RDIR, target));
  }
  return target;
}
function plant(p: string, r: Record<string, unknown>, when = new Date()): string {
  const t = when.toISOString().replace(/[-:]/g, '').replace('.', '');
  const id = `r-${t}-${(++seq).toString(16).padStart(12, '0')}`;
  const doc = { ...r, receipt_id: id, recorded_at: when.toISOString().replace(/\.[0-9]{3}Z$/, 'Z') };
  const rel = `${String(r.harness_id)}/${String(r.worker_key_fingerprint)}/${id}.json`;
  fs.mkdirSync(path.dirname(path.join(p, RDIR, rel)), { recursive: true });
  fs.writeFileSync(path.join(p, RDIR, rel), JSON.stringify(doc, null, 2), { mode: 0o600 });
  return rel;
}

/** A project whose codex harness has exactly one valid receipt; returns it (then removed). */
function withTemplate(): { p: string; template: Record<string, unknown> } {
  const p = tempProject();
  tr(p, ['init']);
  assert.equal(hook(p, 'codex', hookInput('SessionStart', p)).code, 0);
  const [name] = receiptFiles(p);
  const template = readReceipt(p, name!);
  fs.unlinkSync(path.join(p, RDIR, name!));
  return { p, template };
}

test('receipt shape: redacted fields only, no paths, hints or content', () => {
  const p = tempProject();
  fs.mkdirSync(path.join(p, '.pi')); // Pi is published only where the project has .pi
  tr(p, ['init']);
  const r = tr(p, ['integrations', 'preflight', '--harness', 'pi', '--input-json-stdin', '--context-format', 'pi-before-agent-start'], JSON.stringify({ agent_profile: 'pi', workflow_id: 'wf-1', session_id: 'se-1', task_hint: 'deploy checklist for ZEBRA-SECRET-HINT' }));
  assert.equal(r.code, 0, r.stderr);
  const doc = json<{ context: string; state: string; receipt: Record<string, unknown> }>(r);
  assert.equal(doc.state, 'active');
  assert.deepEqual(Object.keys(doc.receipt), [
    'schema_version', 'protocol_version', 'receipt_id', 'harness_id', 'adapter_version', 'bridge_fingerprint', 'store_id',
    'project_root_fingerprint', 'worker_key_fingerprint', 'query_class', 'result_count', 'selected_memory_ids_sha256', 'duration_ms', 'status', 'recorded_at',
  ]);
  assert.equal(doc.receipt.query_class, 'scoped_task_recall');
  assert.equal(doc.receipt.result_count, 0);
  const [name] = receiptFiles(p);
  const raw = fs.readFileSync(path.join(p, RDIR, name!), 'utf8');
  assert.ok(!raw.includes('ZEBRA'), 'the task hint is never persisted');
  assert.ok(!raw.includes(p), 'no absolute path');
  assert.ok(!raw.includes('scoped preflight recall'), 'no context');
  const stored = JSON.parse(raw) as Record<string, unknown>;
  assert.deepEqual(stored.session, { agent_profile: 'pi', workflow_id: 'wf-1', session_id: 'se-1' });
  assert.equal(stored.state, 'active');
  assert.equal((fs.statSync(path.join(p, RDIR, name!)).mode & 0o777), 0o600);
  assert.ok(!doc.context.includes('ZEBRA'), 'the hint is not echoed');
  // Pi's runtime has its proof now
  assert.equal(statusOf(p, 'pi').state, 'active');
});

test('a sensitive task hint is refused (sensitive-task-hint) and leaves no receipt', () => {
  const p = tempProject();
  fs.mkdirSync(path.join(p, '.pi')); // Pi is published only where the project has .pi
  tr(p, ['init']);
  const r = tr(p, ['integrations', 'preflight', '--harness', 'pi', '--input-json-stdin', '--context-format', 'pi-before-agent-start'], JSON.stringify({ agent_profile: 'pi', workflow_id: 'w', session_id: 's', task_hint: 'use password=hunter2hunter2' }));
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /sensitive-task-hint/);
  assert.ok(!r.stderr.includes('hunter2'));
  assert.deepEqual(receiptFiles(p), []);
});

test('stdin requests: capability and claim fields are refused; formats; direct mode', () => {
  const p = tempProject();
  fs.mkdirSync(path.join(p, '.pi')); // Pi is published only where the project has .pi
  tr(p, ['init']);
  const base = { agent_profile: 'pi', workflow_id: 'w', session_id: 's' };
  for (const extra of [{ capability: 'x' }, { coordinator_capability: 'x' }, { TREE_RING_COORDINATOR_TOKEN: 'x' }, { store_id: 'x' }, { memory_root: '/x' }, { receipt: {} }, { state: 'active' }]) {
    const r = tr(p, ['integrations', 'preflight', '--harness', 'pi', '--input-json-stdin'], JSON.stringify({ ...base, ...extra }));
    assert.equal(r.code, 2, JSON.stringify(extra));
    assert.equal(r.stdout, '');
  }
  assert.deepEqual(receiptFiles(p), []);
  const claude = tr(p, ['integrations', 'preflight', '--harness', 'claude-code', '--input-json-stdin', '--context-format', 'claude-session-start'], JSON.stringify({ ...base, agent_profile: 'claude-code' }));
  assert.equal(claude.code, 0, claude.stderr);
  assert.equal(json<{ hookSpecificOutput: { hookEventName: string } }>(claude).hookSpecificOutput.hookEventName, 'SessionStart');
  const direct = tr(p, ['--root', '.tree-ring', 'integrations', 'preflight', '--harness', 'codex']);
  assert.equal(direct.code, 0, direct.stderr);
  assert.match(direct.stdout, /^Tree Ring Memory scoped preflight recall:/);
  const dj = tr(p, ['integrations', 'preflight', '--harness', 'codex', '--json', '--session-id', 'abc']);
  assert.equal(json<{ state: string }>(dj).state, 'active');
  const noInit = tempProject();
  const e = tr(noInit, ['integrations', 'preflight', '--harness', 'codex']);
  assert.equal(e.code, 2);
  assert.match(e.stderr, /^error: .*tree-ring init/);
  assert.deepEqual(fs.readdirSync(noInit), []);
});

test('each receipt verification rule, violated once, keeps the harness configured-awaiting-proof', () => {
  const { p, template } = withTemplate();
  const now = new Date();
  const mutants: [string, Record<string, unknown>, Date?][] = [
    ['rule 1 schema', { ...template, schema_version: 2 }],
    ['rule 1 protocol', { ...template, protocol_version: 2 }],
    ['rule 2 harness', { ...template, harness_id: 'claude-code', plantAs: 'codex' }],
    ['rule 3 adapter', { ...template, adapter_version: '3' }],
    ['rule 4 store', { ...template, store_id: '11111111-1111-4111-8111-111111111111' }],
    ['rule 5 root', { ...template, project_root_fingerprint: 'f'.repeat(64) }],
    ['rule 6 bridge', { ...template, bridge_fingerprint: 'e'.repeat(64) }],
    ['rule 7 status', { ...template, status: 'failure' }],
    ['rule 7 state', { ...template, state: 'configured-awaiting-proof' }],
    ['rule 8 future', template, new Date(now.getTime() + 3_600_000)],
    ['rule 8 expired', template, new Date(now.getTime() - 31 * 86_400_000)],
    ['malformed', { ...template, extra_field: 1 }],
  ];
  for (const [label, doc, when] of mutants) {
    const { plantAs, ...body } = doc as Record<string, unknown> & { plantAs?: string };
    const rel = plantIn(p, plantAs ?? 'codex', body, when);
    const s = statusOf(p, 'codex');
    assert.equal(s.state, 'configured-awaiting-proof', label);
    assert.equal(s.last_recall_result_count, undefined, `${label}: no verbose fields without a valid receipt`);
    fs.unlinkSync(path.join(p, RDIR, rel));
  }
  // the unmutated template is valid proof; a matching receipt for another store is active-isolated
  const rel = plant(p, template);
  assert.equal(statusOf(p, 'codex').state, 'active');
  fs.unlinkSync(path.join(p, RDIR, rel));
  plant(p, { ...template, store_id: '11111111-1111-4111-8111-111111111111', state: 'active-isolated' });
  assert.equal(statusOf(p, 'codex').state, 'active-isolated');
});

test('a bridge change invalidates prior receipts', () => {
  const p = tempProject();
  tr(p, ['init']);
  hook(p, 'claude-code', hookInput('SessionStart', p));
  assert.equal(statusOf(p, 'claude-code').state, 'active');
  const file = path.join(p, '.claude/settings.json');
  // Another tool's edit of the shared file (here only whitespace) leaves Tree Ring's own handlers as
  // they were: still active.
  fs.appendFileSync(file, '\n');
  assert.equal(statusOf(p, 'claude-code').state, 'active');
  // A change of Tree Ring's own handler is a bridge change.
  const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as { hooks: Record<string, { hooks: { command: string }[] }[]> };
  const ours = Object.values(doc.hooks).flat().flatMap((g) => g.hooks).find((h) => h.command.includes('tree-ring'));
  assert.ok(ours, 'Tree Ring has a handler in the file');
  ours.command += ' --changed';
  fs.writeFileSync(file, JSON.stringify(doc, null, 2) + '\n');
  assert.equal(statusOf(p, 'claude-code').state, 'needs-user-review');
});

test('retention: at most 100 receipts per harness/worker, none older than 30 days', () => {
  const { p, template } = withTemplate();
  const now = Date.now();
  for (let i = 0; i < 105; i++) plant(p, template, new Date(now - (i + 1) * 60_000));
  const old = plant(p, { ...template, worker_key_fingerprint: 'd'.repeat(64) }, new Date(now - 40 * 86_400_000));
  const otherWorker = plant(p, { ...template, worker_key_fingerprint: 'c'.repeat(64) }, new Date(now - 60_000));
  const foreign = `codex/${String(template.worker_key_fingerprint)}/not-ours.json`;
  fs.writeFileSync(path.join(p, RDIR, foreign), '{}');
  assert.equal(hook(p, 'codex', hookInput('SessionStart', p)).code, 0);
  const names = receiptFiles(p);
  const mine = names.filter((n) => n !== foreign).map((n) => readReceipt(p, n)).filter((r) => r.worker_key_fingerprint === template.worker_key_fingerprint);
  assert.equal(mine.length, 100);
  assert.ok(!names.includes(old), 'the 40-day-old receipt is gone');
  assert.ok(names.includes(otherWorker), 'other workers keep theirs');
  assert.ok(names.includes(foreign), 'foreign files are left alone');
});

test('certify records JSON and Markdown evidence', () => {
  const p = tempProject();
  tr(p, ['init']);
  hook(p, 'codex', hookInput('SessionStart', p));
  const r = tr(p, ['integrations', 'certify', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const doc = json<{ json_path: string; markdown_path: string; active: string[] }>(r);
  assert.deepEqual(doc.active, ['codex']);
  const ev = JSON.parse(fs.readFileSync(path.join(p, doc.json_path), 'utf8')) as { harnesses: { harness_id: string; receipt_id?: string }[] };
  assert.ok(ev.harnesses.find((h) => h.harness_id === 'codex')!.receipt_id);
  assert.match(fs.readFileSync(path.join(p, doc.markdown_path), 'utf8'), /\| codex \| active \|/);
  assert.ok(!fs.readFileSync(path.join(p, doc.json_path), 'utf8').includes(p));
  const before = snapshotTree(p);
  assert.equal(tr(p, ['integrations', 'status']).code, 0);
  assert.deepEqual(snapshotTree(p), before, 'status writes nothing');
});
