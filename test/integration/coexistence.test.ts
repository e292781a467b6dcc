// Tree Ring and the agentscm Stop gate in one project: checkpoints never take tool state (so writing
// memory never makes the workspace dirty), each tool adds and verifies only its own handlers in the
// shared hook files whichever runs first, and the installed Stop command fails closed when its
// program or working directory is gone.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HOOK_CANNOT_RUN } from '../../src/core/hooks/install.js';
import { listWorkspaceFiles } from '../../src/core/native/snapshot.js';
import { agentscm, json, treeRing } from '../support/cli.js';
import { adminSetup, PROFILE, REPO, startHub, tempDir, type RunningHub, type Setup } from '../support/hub.js';
import { hookInput } from '../support/treering-activation.js';
import { reasonDoc, runAsync, STOP_HOOK_BUNDLE, stopPayload } from '../support/stop-hook.js';

const HOSTS = ['claude-code', 'codex'] as const;
const HOOK_FILE = { 'claude-code': '.claude/settings.json', codex: '.codex/hooks.json' } as const;

const tr = (cwd: string, args: string[]) => {
  const r = treeRing(args, { cwd, env: { ...process.env, TREE_RING_AGENT_ZERO_PLUGIN_MANIFEST: '' } });
  assert.equal(r.code, 0, `tree-ring ${args.join(' ')}: ${r.stderr}`);
  return r;
};

function installArgs(s: Setup, host: string, change = 'c1', extra: string[] = []): string[] {
  return [
    'install-stop', change, '--host', host, '--project', s.workspace, '--data-dir', s.dataDir, '--endpoint', 'http://127.0.0.1:9',
    '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile, ...extra,
  ];
}

function install(s: Setup, host: string, change = 'c1'): void {
  const r = agentscm(installArgs(s, host, change));
  assert.equal(r.code, 0, r.stderr);
}

function checkpointRevision(s: Setup): string {
  const r = agentscm(['checkpoint', 'c1', '--data-dir', s.dataDir, '--repository', REPO, '--profile', PROFILE, '--workspace', s.workspace, '--json']);
  assert.equal(r.code, 0, r.stderr);
  return (json(r).subject as { revision: string }).revision;
}

function ourCommands(s: Setup, host: (typeof HOSTS)[number]): string[] {
  const doc = JSON.parse(fs.readFileSync(path.join(s.workspace, HOOK_FILE[host]), 'utf8'));
  return (doc.hooks.Stop as { hooks: { command: string }[] }[]).flatMap((g) => g.hooks.map((h) => h.command)).filter((c) => c.includes(' agentscm-stop-hook '));
}

/** Tree Ring's view of the project: both maintained hook harnesses configured, nothing to review. */
function assertTreeRingConfigured(s: Setup): void {
  const doc = JSON.parse(tr(s.workspace, ['integrations', 'status', '--json']).stdout) as { integrations: { harness_id: string; state: string }[] };
  for (const h of HOSTS) assert.equal(doc.integrations.find((x) => x.harness_id === h)?.state, 'configured-awaiting-proof', `${h} state`);
  // Its lifecycle Stop hook verifies its material and asks for the capture checkpoint (no bridge mismatch).
  for (const h of HOSTS) {
    const r = treeRing(['--root', '.tree-ring', 'integrations', 'hook', '--harness', h, '--input-json-stdin'], {
      cwd: s.workspace,
      input: hookInput('Stop', s.workspace),
      env: { ...process.env, TREE_RING_AGENT_ZERO_PLUGIN_MANIFEST: '' },
    });
    assert.equal(r.code, 0, `${h} tree-ring hook: ${r.stderr}`);
    assert.equal(JSON.parse(r.stdout).decision, 'block');
  }
}

describe('checkpoint and tool state', () => {
  test('the Tree Ring store, its sidecars, receipts and the data dir are never snapshot content', () => {
    const s = adminSetup();
    tr(s.workspace, ['init']);
    tr(s.workspace, ['remember', 'Use reversible migrations.', '--event-type', 'decision', '--scope', 'project', '--project', 'shop']);
    for (const f of ['memory.sqlite-wal', 'memory.sqlite-shm', 'activation/receipts/codex/w/r.json', 'activation/runtime/ctx']) {
      fs.mkdirSync(path.dirname(path.join(s.workspace, '.tree-ring', f)), { recursive: true });
      fs.writeFileSync(path.join(s.workspace, '.tree-ring', f), 'x');
    }
    const inner = path.join(s.workspace, 'state-data');
    fs.mkdirSync(path.join(inner, 'snapshots'), { recursive: true });
    fs.writeFileSync(path.join(inner, 'snapshots', 'blob'), 'y');
    const listed = listWorkspaceFiles(s.workspace, [inner]);
    assert.ok(listed.includes('.tree-ring/activation.json') && listed.includes('.tree-ring/.gitignore'), 'project material of Tree Ring is content');
    for (const p of listed) {
      assert.ok(!/^\.tree-ring\/memory\.sqlite/.test(p) && !p.startsWith('.tree-ring/activation/receipts/') && !p.startsWith('.tree-ring/activation/runtime/'), p);
      assert.ok(!p.startsWith('state-data/'), p);
    }
    assert.ok(listWorkspaceFiles(s.workspace).includes('state-data/snapshots/blob'), 'only a named state dir is left out');

    const first = checkpointRevision(s);
    tr(s.workspace, ['remember', 'Retry flaky network calls once.', '--event-type', 'lesson', '--scope', 'project', '--project', 'shop']);
    assert.equal(checkpointRevision(s), first, 'remembering changes no snapshot');
    fs.appendFileSync(path.join(s.workspace, 'check.sh'), '\n');
    assert.notEqual(checkpointRevision(s), first, 'an edit still does');
  });

  test('in a git work tree, tree-ring init ignores its local state and the file set agrees', () => {
    const s = adminSetup();
    execFileSync('git', ['init', '-q', s.workspace]);
    tr(s.workspace, ['init']);
    tr(s.workspace, ['remember', 'Use reversible migrations.', '--event-type', 'decision', '--scope', 'project', '--project', 'shop']);
    const git = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: s.workspace, encoding: 'utf8' }).split('\n');
    assert.ok(git.includes('.tree-ring/activation.json'));
    assert.ok(!git.some((p) => p.startsWith('.tree-ring/memory.sqlite')), 'git leaves the store out');
    assert.deepEqual(listWorkspaceFiles(s.workspace), git.filter((p) => p !== '').sort(), 'checkpoint lists what git lists');
    // An existing .gitignore of the project's own in .tree-ring is never replaced.
    const other = adminSetup();
    fs.mkdirSync(path.join(other.workspace, '.tree-ring'), { mode: 0o700 });
    fs.writeFileSync(path.join(other.workspace, '.tree-ring', '.gitignore'), 'mine\n');
    tr(other.workspace, ['init']);
    assert.equal(fs.readFileSync(path.join(other.workspace, '.tree-ring', '.gitignore'), 'utf8'), 'mine\n');
  });
});

test("Tree Ring's secret screen refuses agentscm's own workspace token, and never prints it back", () => {
  const s = adminSetup();
  tr(s.workspace, ['init']);
  const token = fs.readFileSync(s.tokenFile, 'utf8').trim();
  assert.match(token, /^agentscm_wt1_/);
  const r = treeRing(['remember', `The Hub token is ${token} for later.`, '--event-type', 'lesson', '--scope', 'project', '--project', 'shop'], { cwd: s.workspace });
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.ok(!r.stderr.includes(token.slice(14)) && !r.stdout.includes(token.slice(14)), 'the secret part is not echoed');
  const exported = treeRing(['export'], { cwd: s.workspace });
  assert.ok(!exported.stdout.includes('agentscm_wt1_'), 'nothing was stored');
});

describe('shared hook files', () => {
  test('install-stop first, then tree-ring init: both handlers present and both working', () => {
    const s = adminSetup();
    for (const h of HOSTS) install(s, h);
    tr(s.workspace, ['init']);
    for (const h of HOSTS) assert.equal(ourCommands(s, h).length, 1, h);
    assertTreeRingConfigured(s);
    // Installing again changes nothing; tree-ring init again changes nothing either.
    const before = HOSTS.map((h) => fs.readFileSync(path.join(s.workspace, HOOK_FILE[h]), 'utf8'));
    for (const h of HOSTS) assert.match(agentscm(installArgs(s, h)).stdout, /^already installed/m);
    tr(s.workspace, ['init']);
    assert.deepEqual(HOSTS.map((h) => fs.readFileSync(path.join(s.workspace, HOOK_FILE[h]), 'utf8')), before);
  });

  test('tree-ring init first, then install-stop, another Change, --uninstall: Tree Ring stays verified throughout', () => {
    const s = adminSetup();
    tr(s.workspace, ['init']);
    const treeRingBytes = HOSTS.map((h) => fs.readFileSync(path.join(s.workspace, HOOK_FILE[h]), 'utf8'));
    for (const h of HOSTS) install(s, h);
    assertTreeRingConfigured(s);
    // Another Change for the same workspace replaces the handler: one gate per workspace.
    install(s, 'codex', 'c2');
    assert.equal(ourCommands(s, 'codex').length, 1);
    assert.match(ourCommands(s, 'codex')[0]!, / task-codex-stop c2 /);
    for (const h of HOSTS) {
      const r = agentscm(['install-stop', '--host', h, '--project', s.workspace, '--uninstall', '--json']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(json(r).changed, true);
    }
    // What is left is exactly what Tree Ring wrote.
    assert.deepEqual(HOSTS.map((h) => fs.readFileSync(path.join(s.workspace, HOOK_FILE[h]), 'utf8')), treeRingBytes);
    assertTreeRingConfigured(s);
    const again = agentscm(['install-stop', '--host', 'codex', '--project', s.workspace, '--uninstall']);
    assert.match(again.stdout, /^not installed/m);
    // Nothing was there to remove: the document says so.
    const none = agentscm(['install-stop', '--host', 'codex', '--project', s.workspace, '--uninstall', '--json']);
    assert.equal(none.code, 0, none.stderr);
    assert.deepEqual([json(none).changed, json(none).uninstalled], [false, false]);
  });

  test('install-stop refuses a data dir without an authority or without the profile, and notes a Change not checkpointed yet', () => {
    const s = adminSetup();
    const hookFile = path.join(s.workspace, '.codex', 'hooks.json');
    // An existing, private directory that holds no authority (a mistyped path, say).
    const empty = path.join(s.root, 'empty-data');
    fs.mkdirSync(empty, { mode: 0o700 });
    let r = agentscm([...installArgs(s, 'codex').map((a) => (a === s.dataDir ? empty : a)), '--json']);
    assert.equal(r.code, 9, r.stderr);
    assert.equal(json<{ error: { code: string } }>(r).error.code, 'NO_AUTHORITY');
    assert.deepEqual(fs.readdirSync(empty), [], 'nothing created in the data dir');
    assert.equal(fs.existsSync(hookFile), false, 'nothing written');
    // A profile the authority does not have.
    r = agentscm(installArgs(s, 'codex').map((a) => (a === PROFILE ? 'no-such-profile' : a)));
    assert.equal(r.code, 13, r.stderr);
    assert.match(r.stderr, /no agent-task profile no-such-profile/);
    assert.equal(fs.existsSync(hookFile), false, 'nothing written');
    // A Change without a checkpoint yet is installed, with a note; once checkpointed, without.
    r = agentscm([...installArgs(s, 'codex'), '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(json(r).change_checkpointed, false);
    r = agentscm(installArgs(s, 'codex'));
    assert.match(r.stdout, /^note: Change c1 has no checkpoint in .* yet; until it has one, the hook asks for `agentscm checkpoint c1`$/m);
    checkpointRevision(s);
    r = agentscm([...installArgs(s, 'codex'), '--json']);
    assert.equal(json(r).change_checkpointed, true);
    assert.doesNotMatch(agentscm(installArgs(s, 'codex')).stdout, /^note:/m);
  });

  test('install-stop refuses a data dir or workspace that does not exist, and needs CHANGE unless uninstalling', () => {
    const s = adminSetup();
    const missing = path.join(s.root, 'nope');
    let r = agentscm([...installArgs(s, 'codex').map((a) => (a === s.dataDir ? missing : a))]);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /data dir .* is not an existing directory/);
    r = agentscm([...installArgs(s, 'codex'), '--workspace', missing]);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(fs.existsSync(path.join(s.workspace, '.codex')), false, 'nothing written');
    r = agentscm(installArgs(s, 'codex').filter((a) => a !== 'c1'));
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /CHANGE is required/);
  });
});

describe('the installed Stop command fails closed', () => {
  let s: Setup;
  let hub: RunningHub;
  before(async () => {
    s = adminSetup();
    hub = await startHub(s.dataDir);
  });
  after(async () => {
    await hub.stop();
  });

  /** Runs the installed command as the hosts do (through a shell), with `edit` applied to it. */
  function runInstalled(host: (typeof HOSTS)[number], edit: (c: string) => string, cwd = s.workspace, prelude = ''): { code: number; stdout: string; stderr: string } {
    const command = edit(ourCommands(s, host)[0]!);
    const r = spawnSync('sh', ['-c', `${prelude}${command}`], { cwd, input: stopPayload(host, `sess-${process.pid}`, false, s.workspace), encoding: 'utf8', env: { PATH: process.env.PATH, HOME: s.root, AGENTSCM_STATE_DIR: path.join(s.root, 'state') } });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  }

  test('it runs the check when all is there; with node, the entry or the working directory gone it blocks with exit 2', () => {
    tr(s.workspace, ['init']);
    for (const h of HOSTS) {
      const r = agentscm(installArgs(s, h).map((a) => (a === 'http://127.0.0.1:9' ? hub.url : a)));
      assert.equal(r.code, 0, r.stderr);
    }
    // The hook files are project content: checkpointed after both tools wrote theirs.
    checkpointRevision(s);
    for (const h of HOSTS) {
      const ok = runInstalled(h, (c) => c);
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(reasonDoc(ok.stdout).next.operation, 'collector_claim', 'not qualified yet, and the workspace is clean');
      // Remembering (Tree Ring's capture checkpoint) does not make the gate ask for a checkpoint.
      tr(s.workspace, ['remember', `Lesson for ${h}: keep migrations reversible.`, '--event-type', 'lesson', '--scope', 'project', '--project', 'shop']);
      assert.equal(reasonDoc(runInstalled(h, (c) => c).stdout).next.operation, 'collector_claim');

      for (const [what, edit] of [
        ['node removed', (c: string) => c.replace(` ${process.execPath} `, ` ${path.join(s.root, 'gone', 'node')} `)],
        ['program removed', (c: string) => c.replace(STOP_HOOK_BUNDLE, path.join(s.root, 'gone', 'agentscm-stop-hook.cjs'))],
      ] as const) {
        const r = runInstalled(h, edit);
        assert.equal(r.code, 2, `${h}, ${what}: ${r.stderr}`);
        assert.equal(r.stdout, '');
        assert.ok(r.stderr.includes(HOOK_CANNOT_RUN), `${h}, ${what}: ${r.stderr}`);
        assert.match(HOOK_CANNOT_RUN, /agentscm install-stop/);
      }
      const doomed = tempDir('cwd');
      const r = runInstalled(h, (c) => c, doomed, `cd ${doomed} && rmdir ${doomed} && `);
      assert.equal(r.code, 2, `${h}, cwd gone: ${r.stderr}`);
      assert.ok(r.stderr.includes(HOOK_CANNOT_RUN));
    }
  });

  test('a counter directory others can write blocks (local_store) instead of counting', async () => {
    const args = ['--data-dir', s.dataDir, 'skill-workflow', 'task-stop', 'c1', '--endpoint', hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile, '--workspace', s.workspace];
    const open = tempDir('state');
    fs.chmodSync(open, 0o777);
    const loose = tempDir('state');
    fs.mkdirSync(path.join(loose, 'agent-stop'), { mode: 0o700 });
    fs.chmodSync(path.join(loose, 'agent-stop'), 0o770);
    for (const [what, state] of [['world-writable state dir', open], ['group-writable agent-stop', loose]] as const) {
      const r = await runAsync(args, stopPayload('claude-code', `sess-${what}`, true, s.workspace), { PATH: process.env.PATH, HOME: s.root, AGENTSCM_STATE_DIR: state }, STOP_HOOK_BUNDLE);
      assert.equal(r.code, 0, `${what}: ${r.stderr}`);
      assert.equal(reasonDoc(r.stdout).error, 'local store unavailable', what);
      const dir = path.join(state, 'agent-stop');
      assert.equal(fs.existsSync(dir) ? fs.readdirSync(dir).length : 0, 0, `${what}: no counter written`);
    }
  });

  test('the guard passes stdin through and keeps the hook\'s own exit 1 for malformed input', async () => {
    const r = await runAsync(['--data-dir', s.dataDir, 'skill-workflow', 'task-stop', 'c1', '--endpoint', hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile, '--workspace', s.workspace], '{"x":1}', { PATH: process.env.PATH, HOME: s.root, AGENTSCM_STATE_DIR: path.join(s.root, 'state') }, STOP_HOOK_BUNDLE);
    assert.equal(r.code, 1);
    const viaGuard = spawnSync('sh', ['-c', ourCommands(s, 'claude-code')[0]!], { cwd: s.workspace, input: '{"x":1}', encoding: 'utf8', env: { PATH: process.env.PATH, HOME: s.root, AGENTSCM_STATE_DIR: path.join(s.root, 'state') } });
    assert.equal(viaGuard.status, 1, viaGuard.stderr);
  });
});
