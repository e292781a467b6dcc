import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import { test } from 'node:test';
import { cacheFileOf, compileBody, readCodeCache } from '../../src/cli/code-cache.js';
import { COMMANDS } from '../../src/entries/cli.js';
import { HOOK_SPEC } from '../../src/entries/treering-hook-spec.js';
import { REPO_ROOT } from '../support/cli.js';
import { codexSchemaErrors, type CodexSchemaName } from '../support/hosts/schemas.js';
import { forbiddenIn, importsOf, walkImports } from '../support/import-graph.js';
import { hook, hookInput, receiptFiles, snapshotTree, statusOf, tempProject, tr } from '../support/treering-activation.js';

const BUILTINS = new Set(builtinModules);

/** The literal specifiers a CommonJS bundle requires, each once. */
function bundleRequires(file: string): string[] {
  return [...new Set([...fs.readFileSync(file, 'utf8').matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]!))];
}

const EVENTS = ['SessionStart', 'SubagentStart', 'Stop', 'SubagentStop'] as const;
const OUTPUT_SCHEMA: Record<string, CodexSchemaName> = {
  SessionStart: 'session-start.command.output',
  SubagentStart: 'subagent-start.command.output',
  Stop: 'stop.command.output',
  SubagentStop: 'subagent-stop.command.output',
};
const INPUT_SCHEMA: Record<string, CodexSchemaName> = {
  SubagentStart: 'subagent-start.command.input',
  Stop: 'stop.command.input',
  SubagentStop: 'subagent-stop.command.input',
};

for (const harness of ['codex', 'claude-code'] as const) {
  test(`${harness}: the plugin's hook invocation for all four events`, () => {
    const p = tempProject();
    assert.equal(tr(p, ['init']).code, 0);
    assert.equal(statusOf(p, harness).state, 'configured-awaiting-proof');
    for (const event of EVENTS) {
      const input = hookInput(event, p);
      if (harness === 'codex' && INPUT_SCHEMA[event]) assert.deepEqual(codexSchemaErrors(INPUT_SCHEMA[event]!, JSON.parse(input)), [], `our ${event} fixture is Codex-shaped`);
      const r = hook(p, harness, input);
      assert.equal(r.code, 0, `${event}: ${r.stderr}`);
      assert.equal(r.stderr, '');
      const out = JSON.parse(r.stdout) as Record<string, unknown>;
      assert.equal(r.stdout.trim().split('\n').length, 1, 'exactly one JSON object');
      if (event === 'SessionStart' || event === 'SubagentStart') {
        const hso = out.hookSpecificOutput as { hookEventName: string; additionalContext: string };
        assert.deepEqual(Object.keys(out), ['hookSpecificOutput']);
        assert.equal(hso.hookEventName, event);
        assert.match(hso.additionalContext, /^Tree Ring Memory scoped preflight recall:\n/);
        assert.ok(!hso.additionalContext.includes(p), 'no path echoed');
        assert.ok(!hso.additionalContext.includes('sess-0001'), 'no hook input echoed');
      } else {
        assert.deepEqual(Object.keys(out).sort(), ['decision', 'reason']);
        assert.equal(out.decision, 'block');
        assert.match(String(out.reason), /Tree Ring automatic capture checkpoint/);
        assert.match(String(out.reason), /zero to three/);
        assert.match(String(out.reason), /capture "<concise summary>" --event-type .* --project "proj" --agent-profile /);
        const cont = hook(p, harness, hookInput(event, p, { stop_hook_active: true }));
        assert.equal(cont.code, 0, cont.stderr);
        assert.equal(cont.stdout, '{}\n');
        if (harness === 'codex') assert.deepEqual(codexSchemaErrors(OUTPUT_SCHEMA[event]!, JSON.parse(cont.stdout)), []);
      }
      if (harness === 'codex') assert.deepEqual(codexSchemaErrors(OUTPUT_SCHEMA[event]!, out), [], `${event} output matches Codex's schema`);
    }
    assert.equal(receiptFiles(p).length, 2, 'one receipt per Start event');
    const s = statusOf(p, harness);
    assert.equal(s.state, 'active');
    assert.equal(s.last_recall_result_count, 0);
    assert.equal(s.last_recall_query_class, 'startup_fallback');
    const other = harness === 'codex' ? 'claude-code' : 'codex';
    assert.equal(statusOf(p, other).state, 'configured-awaiting-proof', 'a receipt proves only its own harness');
  });
}

test('worker identity: distinct per agent_id, never accepted as a store identity', () => {
  const p = tempProject();
  tr(p, ['init']);
  hook(p, 'claude-code', hookInput('SubagentStart', p, { agent_id: 'a-1' }));
  hook(p, 'claude-code', hookInput('SubagentStart', p, { agent_id: 'a-2' }));
  hook(p, 'claude-code', hookInput('SessionStart', p));
  const receipts = receiptFiles(p).map((n) => JSON.parse(fs.readFileSync(path.join(p, '.tree-ring/activation/receipts', n), 'utf8')) as { worker_key_fingerprint: string; session: { agent_profile: string } });
  assert.equal(new Set(receipts.map((r) => r.worker_key_fingerprint)).size, 3);
  assert.ok(receipts.some((r) => r.session.agent_profile === 'claude-code'));
  assert.ok(receipts.filter((r) => r.session.agent_profile.startsWith('claude-code-reviewer-')).length === 2);
});

test('hook input: benign metadata ignored; capability, root and store claims and outside cwd rejected', () => {
  const p = tempProject();
  tr(p, ['init']);
  const ok = hook(p, 'codex', hookInput('SessionStart', p, { transcript_path: '/tmp/secret-transcript.jsonl', effort: 'high', prompt_id: 'x' }));
  assert.equal(ok.code, 0, ok.stderr);
  assert.ok(!ok.stdout.includes('secret-transcript'));
  const n = receiptFiles(p).length;
  for (const extra of [{ capability: 'VAL-cap' }, { token: 'VAL-tok' }, { TREE_RING_COORDINATOR_TOKEN: 'VAL-coord' }, { authorization: 'Bearer VAL-auth' }, { store_id: 'VAL-store' }, { root: '/VAL-elsewhere' }, { bridge_fingerprint: 'a'.repeat(64) }, { harness_id: 'VAL-pi' }, { receipt_state: 'VAL-active' }]) {
    const r = hook(p, 'codex', hookInput('SessionStart', p, extra));
    assert.notEqual(r.code, 0, JSON.stringify(extra));
    assert.equal(r.stdout, '');
    assert.ok(!r.stderr.includes(Object.values(extra)[0] as string), 'the value is not echoed');
  }
  const outside = hook(p, 'codex', hookInput('SessionStart', '/'));
  assert.notEqual(outside.code, 0);
  assert.equal(outside.stdout, '');
  const sub = hook(p, 'codex', hookInput('SessionStart', path.join(p, '.codex')));
  assert.equal(sub.code, 0, 'a cwd inside the project is fine');
  const badEvent = hook(p, 'codex', hookInput('UserPromptSubmit', p));
  assert.notEqual(badEvent.code, 0);
  assert.equal(receiptFiles(p).length, n + 1, 'refused inputs leave no receipt');
});

test('host identifiers shaped like secrets or capabilities never reach a receipt or the capture command', () => {
  const p = tempProject();
  tr(p, ['init']);
  const secrets = [`trcap_v1_${'a'.repeat(64)}`, 'ghp_abcdefghijklmnopqrstuvwxyz0123456789', 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD'];
  for (const secret of secrets) {
    const start = hook(p, 'codex', hookInput('SessionStart', p, { session_id: secret }));
    assert.equal(start.code, 0, start.stderr);
    const stop = hook(p, 'codex', hookInput('Stop', p, { session_id: secret }));
    assert.equal(stop.code, 0, stop.stderr);
    assert.ok(!stop.stdout.includes(secret), 'the capture command does not carry it');
    const sub = hook(p, 'claude-code', hookInput('SubagentStart', p, { agent_type: secret }));
    assert.equal(sub.code, 0, sub.stderr);
  }
  const stored = receiptFiles(p).map((n) => fs.readFileSync(path.join(p, '.tree-ring/activation/receipts', n), 'utf8'));
  assert.equal(stored.length, secrets.length * 2);
  for (const text of stored) {
    for (const secret of secrets) assert.ok(!text.includes(secret.slice(0, 24)), `a receipt keeps no part of ${secret.slice(0, 12)}…`);
  }
  // A readable session id is kept as it is.
  hook(p, 'codex', hookInput('SessionStart', p, { session_id: 'sess-readable-1' }));
  assert.ok(receiptFiles(p).some((n) => fs.readFileSync(path.join(p, '.tree-ring/activation/receipts', n), 'utf8').includes('"sess-readable-1"')));
});

test('Stop and SubagentStop without stop_hook_active are refused (exit 1, nothing on stdout)', () => {
  const p = tempProject();
  tr(p, ['init']);
  for (const event of ['Stop', 'SubagentStop']) {
    const input = JSON.parse(hookInput(event, p)) as Record<string, unknown>;
    delete input.stop_hook_active;
    const r = hook(p, 'claude-code', JSON.stringify(input));
    assert.equal(r.code, 1, `${event}: ${r.stdout}`);
    assert.equal(r.stdout, '');
  }
});

test('absent .tree-ring: exit 0 silently and create nothing; file, symlink, bad manifest are errors', () => {
  const p = tempProject();
  for (const ev of ['SessionStart', 'Stop']) {
    const r = hook(p, 'codex', hookInput(ev, p));
    assert.equal(r.code, 0);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, '');
  }
  assert.deepEqual(fs.readdirSync(p), []);

  fs.writeFileSync(path.join(p, '.tree-ring'), 'not a dir');
  let r = hook(p, 'codex', hookInput('SessionStart', p));
  assert.notEqual(r.code, 0);
  assert.equal(r.stdout, '');
  fs.unlinkSync(path.join(p, '.tree-ring'));
  fs.symlinkSync(path.join(p, 'missing'), path.join(p, '.tree-ring'));
  r = hook(p, 'codex', hookInput('SessionStart', p));
  assert.notEqual(r.code, 0);
  fs.unlinkSync(path.join(p, '.tree-ring'));
  fs.mkdirSync(path.join(p, '.tree-ring'));
  r = hook(p, 'codex', hookInput('SessionStart', p));
  assert.notEqual(r.code, 0, 'missing activation is an error');
  fs.writeFileSync(path.join(p, '.tree-ring/activation.json'), '{}');
  r = hook(p, 'codex', hookInput('Stop', p));
  assert.notEqual(r.code, 0, 'invalid activation is an error');
  assert.equal(r.stdout, '');
});

test('the generated hook command and the launcher work with PATH=/usr/bin:/bin', () => {
  const p = tempProject();
  tr(p, ['init']);
  const launcher = path.join(p, '.tree-ring/bin/tree-ring');
  assert.ok((fs.statSync(launcher).mode & 0o111) !== 0, 'launcher is executable');
  const env = { PATH: '/usr/bin:/bin', HOME: p };
  const v = spawnSync(launcher, ['--version'], { env, encoding: 'utf8' });
  assert.equal(v.status, 0, v.stderr);
  assert.match(v.stdout, /^tree-ring /);
  for (const file of ['.codex/hooks.json', '.claude/settings.json']) {
    const cfg = JSON.parse(fs.readFileSync(path.join(p, file), 'utf8')) as { hooks: { SessionStart: { hooks: { command: string }[] }[] } };
    const cmd = cfg.hooks.SessionStart[0]!.hooks[0]!.command;
    const sub = path.join(p, 'sub');
    fs.mkdirSync(sub, { recursive: true });
    const r = spawnSync('/bin/sh', ['-c', cmd], { cwd: p, env, input: hookInput('SessionStart', p), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(JSON.parse(r.stdout).hookSpecificOutput.additionalContext as string, /scoped preflight recall/);
  }
  // Outside any project (no .tree-ring): exits 0 without output.
  const empty = tempProject();
  const cmd = (JSON.parse(fs.readFileSync(path.join(p, '.codex/hooks.json'), 'utf8')) as { hooks: { Stop: { hooks: { command: string }[] }[] } }).hooks.Stop[0]!.hooks[0]!.command;
  const r = spawnSync('/bin/sh', ['-c', cmd], { cwd: empty, env, input: hookInput('Stop', empty), encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.equal(r.stdout, '');
  assert.deepEqual(snapshotTree(empty), {});
});

test('the bundled hook entry parses like the command table and loads no forbidden package', () => {
  const table = COMMANDS.find((c) => c.path.join(' ') === 'tree-ring integrations hook')!;
  assert.deepEqual(HOOK_SPEC.options, table.options);
  assert.equal(HOOK_SPEC.errorPolicy, table.errorPolicy);
  assert.equal(HOOK_SPEC.json, table.json);
  assert.deepEqual(forbiddenIn(walkImports(path.join(REPO_ROOT, 'dist/src/entries/treering-hook.js'))), []);
  // The CommonJS bundle carries better-sqlite3's JavaScript; at run time it requires only built-ins,
  // better-sqlite3's package.json and addon (by variable), and `bindings` (better-sqlite3's own fallback).
  // The entry is a loader that runs the body with its code cache (src/cli/code-cache.ts).
  const required = [...new Set(['tree-ring-hook.cjs', 'tree-ring-hook.body.cjs'].flatMap((f) => bundleRequires(path.join(REPO_ROOT, 'dist/bundles', f))))];
  assert.ok(required.length > 0);
  const packages = required.filter((s) => !BUILTINS.has(s.replace(/^node:/, '')));
  assert.deepEqual(packages, ['bindings'], `bundle requires only built-ins (and bindings): ${packages.join(', ')}`);
  const body = path.join(REPO_ROOT, 'dist/bundles/tree-ring-hook.body.cjs');
  const cache = readCodeCache(cacheFileOf(body));
  assert.ok(cache && cache.length > 0, 'npm run build writes the code cache');
  assert.equal(compileBody(body, cache).cachedDataRejected, false, 'and this Node accepts it');
  // Launchers from earlier releases name dist/hook/tree-ring-hook.js (the former ES module bundle) or
  // dist/hook/tree-ring-hook.cjs: both hand over to the bundle under dist/bundles.
  assert.deepEqual(importsOf(path.join(REPO_ROOT, 'dist/hook/tree-ring-hook.js')).static, ['node:module']);
  assert.deepEqual(bundleRequires(path.join(REPO_ROOT, 'dist/hook/tree-ring-hook.cjs')), ['../bundles/tree-ring-hook.cjs']);
  // Through the launcher (which runs the bundle), refused input fails without stdout.
  const p = tempProject();
  tr(p, ['init']);
  const launcher = path.join(p, '.tree-ring/bin/tree-ring');
  assert.match(fs.readFileSync(launcher, 'utf8'), /exec '[^']+' '[^']+\/dist\/bundles\/tree-ring-hook\.cjs' "\$@"/);
  const args = ['--root', '.tree-ring', 'integrations', 'hook', '--harness', 'codex', '--input-json-stdin'];
  const bad = spawnSync(launcher, args, { cwd: p, env: { PATH: '/usr/bin:/bin' }, input: hookInput('Stop', p, { token: 'VAL-x' }), encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.equal(bad.stdout, '');
  assert.match(bad.stderr, /hook error: capability_field/);
  const stop = spawnSync(launcher, args, { cwd: p, env: { PATH: '/usr/bin:/bin' }, input: hookInput('Stop', p), encoding: 'utf8' });
  assert.equal(stop.status, 0, stop.stderr);
  assert.equal(JSON.parse(stop.stdout).decision, 'block');
  for (const former of ['dist/hook/tree-ring-hook.js', 'dist/hook/tree-ring-hook.cjs']) {
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, former), ...args], { cwd: p, env: { PATH: '/usr/bin:/bin' }, input: hookInput('Stop', p), encoding: 'utf8' });
    assert.equal(r.status, 0, `${former}: ${r.stderr}`);
    assert.equal(JSON.parse(r.stdout).decision, 'block', former);
  }
});

test('capture round trip: the checkpoint\'s command stores a memory that a new session\'s SessionStart shows', () => {
  const p = tempProject('round trip');
  assert.equal(tr(p, ['init']).code, 0);
  const remembered = tr(p, ['remember', 'Use reversible migrations for schema changes.', '--event-type', 'decision', '--scope', 'project', '--project', 'round trip']);
  assert.equal(remembered.code, 0, remembered.stderr);
  const first = hook(p, 'claude-code', hookInput('SessionStart', p));
  assert.equal(first.code, 0, first.stderr);
  assert.match(JSON.parse(first.stdout).hookSpecificOutput.additionalContext as string, /Use reversible migrations/);

  const stop = hook(p, 'claude-code', hookInput('Stop', p));
  const reason = JSON.parse(stop.stdout).reason as string;
  const line = reason.split('\n')[1]!;
  // Do what the agent is asked to: fill in one candidate and run the command with the identity given.
  const args = line
    .replace('"<concise summary>"', '"Run the flaky login test twice before filing a bug."')
    .replace('<preference|decision|lesson|warning|correction|seed>', 'lesson')
    .replace('<cambium|scar|seed>', 'cambium')
    .replace('-<1|2|3>', '-1');
  const captured = spawnSync('/bin/sh', ['-c', args], { cwd: p, env: { PATH: '/usr/bin:/bin' }, encoding: 'utf8' });
  assert.equal(captured.status, 0, `${args}\n${captured.stderr}`);

  const next = hook(p, 'claude-code', hookInput('SessionStart', p, { session_id: 'sess-0002' }));
  const ctx = JSON.parse(next.stdout).hookSpecificOutput.additionalContext as string;
  assert.match(ctx, /Run the flaky login test twice before filing a bug\./);
  assert.match(ctx, /Use reversible migrations/);
  const receipts = receiptFiles(p).map((n) => JSON.parse(fs.readFileSync(path.join(p, '.tree-ring/activation/receipts', n), 'utf8')) as { result_count: number; session: { session_id: string } });
  assert.equal(receipts.find((r) => r.session.session_id === 'sess-0002')!.result_count, 2);
  // Agent-scoped: another harness and a new worker do not inherit it; the project memory they do.
  const codex = JSON.parse(hook(p, 'codex', hookInput('SessionStart', p, { session_id: 'sess-0003' })).stdout).hookSpecificOutput.additionalContext as string;
  assert.doesNotMatch(codex, /flaky login/);
  assert.match(codex, /Use reversible migrations/);
  const worker = JSON.parse(hook(p, 'claude-code', hookInput('SubagentStart', p, { session_id: 'sess-0004' })).stdout).hookSpecificOutput.additionalContext as string;
  assert.doesNotMatch(worker, /flaky login/);
});
