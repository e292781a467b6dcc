// The upstream plugins' own invocations of the tree-ring CLI, run against ours: argv, stdin and
// environment as their current releases build them, with the exit codes and JSON they then read.
//
//   Claude Code plugin (tree-ring-memory-claude-plugin): hooks/claude-hook.sh and hooks/claude-hooks.json,
//     scripts/smoke_v015.sh, commands/tree-ring-{capture,recall,status}.md.
//   Codex plugin (tree-ring-memory-codex-plugin): hooks/codex-hook.sh, scripts/smoke_v015.sh (CLI 0.15.12).
//   Agent Zero plugin (tree-ring-memory-agent-zero): helpers/cli.py (`<bin> --root R --json <args>`, the
//     descriptor only in activation children) and helpers/activation.py.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { TREE_RING_BIN } from '../support/cli.js';
import { hookInput, tempProject } from '../support/treering-activation.js';
import { TREE_RING_VERSION } from '../../src/version.js';

interface Step {
  readonly name: string;
  readonly argv: readonly string[];
  readonly stdin?: string;
  /** Added to a clean environment (PATH, HOME); never the test runner's own. */
  readonly env?: Record<string, string>;
  readonly cwd?: string;
  readonly expect: (r: { code: number; stdout: string; stderr: string }) => void;
}

/** The plugins find `tree-ring` on PATH: a directory holding a launcher for this CLI. */
const PATH_DIR = (() => {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tr-plugin-path-')));
  fs.writeFileSync(path.join(d, 'tree-ring'), `#!/bin/sh\nexec '${process.execPath}' '${TREE_RING_BIN}' "$@"\n`, { mode: 0o755 });
  return d;
})();

function run(step: Step, cwd: string): { code: number; stdout: string; stderr: string } {
  const env: NodeJS.ProcessEnv = { PATH: `${PATH_DIR}:/usr/bin:/bin`, HOME: path.join(cwd, '.fixture-home'), ...step.env };
  const r = spawnSync('tree-ring', step.argv, { cwd: step.cwd ?? cwd, env, input: step.stdin ?? '', encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw r.error;
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

async function scenario(t: { test: (name: string, opts: { skip?: string | false }, fn: () => void) => Promise<void> }, cwd: string, steps: readonly Step[]): Promise<void> {
  for (const step of steps) {
    await t.test(step.name, {}, () => {
      const r = run(step, cwd);
      step.expect(r);
    });
  }
}

const ok = (check?: (doc: unknown) => void) => (r: { code: number; stdout: string; stderr: string }) => {
  assert.equal(r.code, 0, r.stderr);
  if (check) check(JSON.parse(r.stdout));
};
const okText = (r: { code: number; stderr: string }) => assert.equal(r.code, 0, r.stderr);
const refused = (pattern?: RegExp) => (r: { code: number; stdout: string; stderr: string }) => {
  assert.notEqual(r.code, 0, r.stdout);
  if (pattern) assert.match(r.stderr, pattern);
};
type Rows = { integrations: { id?: string; harness_id?: string; state: string; next_step: string }[] };
const rows = (doc: unknown) => (doc as Rows).integrations;
const row = (doc: unknown, id: string) => rows(doc).find((x) => x.id === id || x.harness_id === id)!;

/** hooks/claude-hook.sh and hooks/codex-hook.sh end in this exec (after choosing the launcher). */
const hookArgv = (harness: string) => ['--root', '.tree-ring', 'integrations', 'hook', '--harness', harness, '--input-json-stdin'];

/** The version check every plugin makes before anything else (VERSION_RE in helpers/cli.py). */
const versionStep: Step = {
  name: 'tree-ring --version',
  argv: ['--version'],
  expect: (r) => {
    assert.equal(r.code, 0);
    assert.match(r.stdout.trim(), /^tree-ring (\d+)\.(\d+)\.(\d+)$/);
    assert.equal(r.stdout.trim(), `tree-ring ${TREE_RING_VERSION}`);
  },
};

test('Claude Code plugin: its smoke, slash commands and lifecycle hook', async (t) => {
  const p = tempProject('claude project');
  const missing = path.join(p, 'missing-store');
  const worker = { TREE_RING_AGENT_PROFILE: 'worker-storage', TREE_RING_WORKFLOW_ID: 'release-smoke', TREE_RING_SESSION_ID: 'attempt-1' };
  const store = path.join(p, 'coordinated-project', '.tree-ring');
  await scenario(t, p, [
    versionStep,
    { name: 'init --json', argv: ['--root', '.tree-ring', '--json', 'init'], expect: ok((d) => assert.ok(rows(d).length > 0)) },
    {
      name: 'integrations status --json --verbose: entries, none active',
      argv: ['--root', '.tree-ring', 'integrations', 'status', '--json', '--verbose'],
      expect: ok((d) => {
        assert.ok(rows(d).length > 0);
        assert.ok(rows(d).every((x) => x.state !== 'active'));
        assert.equal(row(d, 'claude-code').state, 'configured-awaiting-proof');
      }),
    },
    { name: 'hook SessionStart', argv: hookArgv('claude-code'), stdin: hookInput('SessionStart', p), expect: ok((d) => assert.equal((d as { hookSpecificOutput: { hookEventName: string } }).hookSpecificOutput.hookEventName, 'SessionStart')) },
    { name: 'integrations status after the hook: active', argv: ['integrations', 'status', '--json', '--verbose'], expect: ok((d) => assert.equal(row(d, 'claude-code').state, 'active')) },
    { name: 'hook SubagentStart', argv: hookArgv('claude-code'), stdin: hookInput('SubagentStart', p), expect: ok((d) => assert.equal((d as { hookSpecificOutput: { hookEventName: string } }).hookSpecificOutput.hookEventName, 'SubagentStart')) },
    { name: 'hook Stop: one checkpoint', argv: hookArgv('claude-code'), stdin: hookInput('Stop', p), expect: ok((d) => assert.equal((d as { decision: string }).decision, 'block')) },
    { name: 'hook Stop continuation: {}', argv: hookArgv('claude-code'), stdin: hookInput('Stop', p, { stop_hook_active: true }), expect: (r) => assert.deepEqual([r.code, r.stdout.trim()], [0, '{}']) },
    { name: 'hook SubagentStop', argv: hookArgv('claude-code'), stdin: hookInput('SubagentStop', p), expect: ok((d) => assert.equal((d as { decision: string }).decision, 'block')) },
    { name: '/tree-ring-capture (open mode)', argv: ['remember', 'Prefer small reviewed migrations.', '--event-type', 'lesson', '--scope', 'project'], expect: okText },
    { name: '/tree-ring-recall', argv: ['recall', 'reviewed migrations'], expect: (r) => assert.match(r.stdout, /Prefer small reviewed migrations/) },
    { name: 'policy status on a missing root fails', argv: ['--root', missing, 'policy', 'status'], expect: refused() },
    { name: 'policy audit on a missing root fails', argv: ['--root', missing, 'policy', 'audit', '--limit', '100'], expect: (r) => (refused()(r), assert.equal(fs.existsSync(missing), false)) },
    { name: 'init a coordinated store', argv: ['--root', store, 'init'], expect: okText },
    { name: 'policy enable', argv: ['--root', store, '--json', 'policy', 'enable', '--coordinator', 'smoke-coordinator'], expect: ok((d) => assert.ok(String((d as { capability: string }).capability).length > 20)) },
    {
      name: 'worker remember with operation id',
      argv: ['--root', store, '--json', 'remember', 'Storage validation completed.', '--event-type', 'lesson', '--scope', 'agent', '--operation-id', 'validate-storage-v1', '--source-ref', 'runs/release-smoke/worker-storage.json'],
      env: worker,
      expect: ok((d) => assert.match(String((d as { id: string }).id), /./)),
    },
    {
      name: 'conflicting retry fails with upstream\'s text',
      argv: ['--root', store, 'remember', 'Conflicting retry.', '--event-type', 'lesson', '--scope', 'agent', '--operation-id', 'validate-storage-v1', '--source-ref', 'runs/release-smoke/worker-storage.json'],
      env: worker,
      expect: refused(/operation_id validate-storage-v1 is already bound to a different memory write/),
    },
    { name: 'unauthorized shared write fails', argv: ['--root', store, 'remember', 'Unauthorized shared result.', '--event-type', 'lesson', '--scope', 'project', '--operation-id', 'worker-shared-v1', '--source-ref', 'runs/release-smoke/worker-shared.json'], env: worker, expect: refused() },
    {
      name: 'coordinator fan-in recall',
      argv: ['--root', store, '--json', 'recall', 'storage validation', '--scope', 'agent'],
      env: { TREE_RING_WORKFLOW_ID: 'release-smoke', TREE_RING_SESSION_ID: 'attempt-1' },
      expect: ok((d) => assert.equal((Array.isArray(d) ? d : (d as { results: unknown[] }).results).length, 1)),
    },
    { name: 'audit --audit-type sensitive', argv: ['--root', store, 'audit', '--audit-type', 'sensitive'], expect: okText },
    { name: 'consolidate --period-type manual --dry-run', argv: ['--root', store, 'consolidate', '--period-type', 'manual', '--dry-run'], expect: okText },
    { name: 'maintain', argv: ['--root', store, 'maintain'], expect: okText },
  ]);
});

test('Codex plugin: its smoke and lifecycle hook, from a subdirectory of the project', async (t) => {
  const p = tempProject('codex project');
  const sub = path.join(p, 'src');
  fs.mkdirSync(sub);
  const doxStore = path.join(p, 'dox-store', '.tree-ring');
  const doxFirst = path.join(p, 'dox-first');
  fs.mkdirSync(doxFirst);
  fs.writeFileSync(path.join(doxFirst, 'AGENTS.md'), '# Rules\n\nKeep the original source guidance.\n');
  await scenario(t, p, [
    versionStep,
    { name: 'init --json', argv: ['--root', '.tree-ring', '--json', 'init'], expect: ok((d) => assert.equal(row(d, 'codex').state, 'configured-awaiting-proof')) },
    { name: 'integrations status --json --verbose', argv: ['--root', '.tree-ring', 'integrations', 'status', '--json', '--verbose'], expect: ok((d) => assert.ok(rows(d).every((x) => x.state !== 'active'))) },
    // codex-hook.sh first cds to the git top level (none here: it stays in the hook's cwd, the project).
    { name: 'hook SessionStart (cwd: a subdirectory)', argv: hookArgv('codex'), stdin: hookInput('SessionStart', sub), expect: ok((d) => assert.match((d as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext, /^Tree Ring Memory scoped preflight recall:/)) },
    { name: 'hook Stop (cwd: a subdirectory)', argv: hookArgv('codex'), stdin: hookInput('Stop', sub), expect: ok((d) => assert.match((d as { reason: string }).reason.split('\n')[1]!, / capture "<concise summary>" /)) },
    { name: 'hook SubagentStop continuation', argv: hookArgv('codex'), stdin: hookInput('SubagentStop', p, { stop_hook_active: true }), expect: (r) => assert.deepEqual([r.code, r.stdout.trim()], [0, '{}']) },
    { name: 'hook refuses a model-supplied root', argv: hookArgv('codex'), stdin: hookInput('SessionStart', p, { memory_root: '/tmp/other' }), expect: (r) => (assert.notEqual(r.code, 0), assert.equal(r.stdout, '')) },
    { name: 'dox sync --dry-run', argv: ['--root', doxStore, '--json', 'dox', 'sync', '--source-root', doxFirst, '--project', 'release-dox', '--dry-run'], expect: ok() },
  ]);
});

test('Agent Zero plugin: helpers/cli.py invocations from the mounted project', async (t) => {
  const p = tempProject('Agent Zero Project');
  // The Revolve state directory the plugin's sync_revolve points at (empty: nothing to import).
  fs.mkdirSync(path.join(p, 'revolve'));
  // The plugin's installed root, outside the project: descriptor and sibling plugin.yaml. Its release
  // pairs with this CLI's series (3.4.2 needs CLI 0.15.12; 3.4.1 pairs with 0.15.6 and later).
  const pluginDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'a0-installed-')));
  const [pluginVersion, min] = newerOrEqual(TREE_RING_VERSION, '0.15.12') ? ['3.4.2', '0.15.12'] : ['3.4.1', '0.15.6'];
  fs.writeFileSync(path.join(pluginDir, 'plugin.yaml'), `name: tree_ring_memory\nversion: ${pluginVersion}\n`);
  const descriptor = path.join(pluginDir, 'activation-capability.json');
  fs.writeFileSync(descriptor, JSON.stringify({ schema_version: 1, kind: 'tree-ring-agent-zero-plugin-capability', plugin_id: 'tree_ring_memory', plugin_version: pluginVersion, activation_protocol_version: 1, tree_ring_version: { min, minor: '0.15' }, enabled: true }));
  const withDescriptor = { TREE_RING_AGENT_ZERO_PLUGIN_MANIFEST: descriptor };
  const identity = JSON.stringify({ agent_profile: 'agent-zero-worker', session_id: 'chat-01', workflow_id: 'chat-01' });
  // _invoke: [binary, "--root", root, "--json", *args]; the root is the mounted project's .tree-ring.
  const root = path.join(p, '.tree-ring');
  const a0 = (args: string[]) => ['--root', root, '--json', ...args];
  await scenario(t, p, [
    versionStep,
    { name: 'initialize_project_activation: init (root .tree-ring, descriptor)', argv: ['--root', '.tree-ring', '--json', 'init'], env: withDescriptor, expect: ok((d) => assert.equal(row(d, 'agent-zero').state, 'configured-awaiting-proof')) },
    {
      name: 'the passive binding is what helpers/activation.py validates',
      argv: ['--root', '.tree-ring', '--json', 'integrations', 'status', '--source-root', p],
      expect: ok(() => {
        const b = JSON.parse(fs.readFileSync(path.join(p, '.tree-ring/activation/agent-zero.json'), 'utf8')) as Record<string, unknown>;
        assert.equal(b.memory_root, '.tree-ring');
        assert.deepEqual(b.command_protocol, { command: 'tree-ring', arguments: ['--root', '.tree-ring', 'integrations', 'preflight', '--harness', 'agent-zero', '--input-json-stdin', '--context-format', 'json'], stdin: 'json', stdout: 'json' });
      }),
    },
    { name: 'activation_status without the descriptor: needs-plugin', argv: a0(['integrations', 'status', '--source-root', p]), expect: ok((d) => assert.equal(row(d, 'agent-zero').state, 'needs-plugin')) },
    { name: 'activation_status with the descriptor', argv: a0(['integrations', 'status', '--source-root', p]), env: withDescriptor, expect: ok((d) => assert.equal(row(d, 'agent-zero').state, 'configured-awaiting-proof')) },
    {
      name: 'preflight_activation',
      argv: a0(['integrations', 'preflight', '--harness', 'agent-zero', '--input-json-stdin', '--context-format', 'json']),
      stdin: identity,
      env: withDescriptor,
      expect: ok((d) => {
        const doc = d as { context: string; state: string; receipt: Record<string, unknown> };
        assert.equal(doc.state, 'active');
        assert.equal(doc.receipt.harness_id, 'agent-zero');
        assert.equal(doc.receipt.session, undefined);
      }),
    },
    { name: 'activation_status after preflight: active', argv: a0(['integrations', 'status', '--source-root', p]), env: withDescriptor, expect: ok((d) => assert.equal(row(d, 'agent-zero').state, 'active')) },
    {
      name: 'capture',
      argv: a0(['capture', 'Use the staging database for migration rehearsals.', '--event-type', 'lesson', '--ring', 'cambium', '--project', 'Agent Zero Project', '--agent-profile', 'agent-zero-worker', '--workflow-id', 'chat-01', '--session-id', 'chat-01', '--operation-id', 'auto-cp1-1', '--source-ref', 'agent-checkpoint:cp1']),
      expect: ok((d) => assert.equal((d as { scope: string }).scope, 'agent')),
    },
    {
      name: 'remember',
      argv: a0(['remember', 'Release notes list every schema change.', '--event-type', 'decision', '--ring', 'cambium', '--scope', 'agent', '--project', 'Agent Zero Project', '--agent-profile', 'agent-zero-worker', '--workflow-id', 'chat-01', '--session-id', 'chat-01', '--operation-id', 'op-1', '--source-ref', 'chat-01']),
      expect: ok((d) => assert.match(String((d as { id: string }).id), /./)),
    },
    {
      name: 'evidence',
      argv: a0(['evidence', 'Migration rehearsal passed.', '--outcome', 'observed', '--evidence-ref', 'runs/rehearsal-1', '--project', 'Agent Zero Project', '--agent-profile', 'agent-zero-worker', '--workflow-id', 'chat-01', '--session-id', 'chat-01']),
      expect: ok(),
    },
    {
      name: 'evidence with --operation-id',
      argv: a0(['evidence', 'Migration rehearsal passed twice.', '--outcome', 'observed', '--evidence-ref', 'runs/rehearsal-2', '--project', 'Agent Zero Project', '--agent-profile', 'agent-zero-worker', '--workflow-id', 'chat-01', '--session-id', 'chat-01', '--operation-id', 'ev-1']),
      expect: ok(),
    },
    {
      name: 'recall (list of {memory, score})',
      argv: a0(['recall', 'staging database', '--limit', '100', '--project', 'Agent Zero Project', '--agent-profile', 'agent-zero-worker', '--workflow-id', 'chat-01', '--session-id', 'chat-01']),
      expect: ok((d) => {
        assert.ok(Array.isArray(d));
        assert.ok((d as { memory: { summary: string } }[]).some((e) => e.memory.summary === 'Use the staging database for migration rehearsals.'));
      }),
    },
    {
      name: 'list_memories: export JSONL',
      argv: a0(['export']),
      expect: (r) => {
        assert.equal(r.code, 0, r.stderr);
        const records = r.stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { type: string });
        assert.ok(records.filter((x) => x.type === 'memory_event').length >= 3);
      },
    },
    { name: 'policy_status', argv: a0(['policy', 'status']), expect: ok((d) => assert.equal((d as { mode: string }).mode, 'open')) },
    { name: 'policy_audit', argv: a0(['policy', 'audit', '--limit', '100']), expect: ok((d) => assert.ok(Array.isArray(d))) },
    { name: 'audit', argv: a0(['audit', '--audit-type', 'all']), expect: ok() },
    { name: 'consolidate --dry-run', argv: a0(['consolidate', '--period-type', 'daily', '--project', 'Agent Zero Project', '--dry-run']), expect: ok() },
    { name: 'maintain', argv: a0(['maintain', '--project', 'Agent Zero Project']), expect: ok() },
    { name: 'sync_dox --dry-run', argv: a0(['dox', 'sync', '--source-root', p, '--project', 'Agent Zero Project', '--dry-run']), expect: ok() },
    { name: 'sync_revolve --dry-run', argv: a0(['revolve', 'sync', '--source-root', path.join(p, 'revolve'), '--project', 'Agent Zero Project', '--dry-run']), expect: ok() },
    { name: 'integrations_scan', argv: a0(['integrations', 'scan', '--source-root', p]), expect: ok() },
  ]);
});

/** a >= b for x.y.z versions. */
function newerOrEqual(a: string, b: string): boolean {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i]! > pb[i]!;
  return true;
}
