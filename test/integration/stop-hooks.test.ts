// The built Stop hooks (skill-workflow task-stop / task-codex-stop) run as a host runs them, against a
// real Hub over HTTP: each blocking cause of seed 000 blocks with the right next, nothing in the data
// dir or the workspace changes, and Codex gets nothing but decision and reason.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { COMMANDS } from '../../src/entries/cli.js';
import { RACY_MARGIN_MS } from '../../src/core/native/snapshot.js';
import { STOP_HOOK_SPECS } from '../../src/entries/stop-hook-spec.js';
import { STOP_GUARD_SCRIPT } from '../../src/core/hooks/install.js';
import { agentscm, json, REPO_ROOT } from '../support/cli.js';
import { assertCodexHookStdout, codexSchemaErrors } from '../support/hosts/schemas.js';
import { adminSetup, checkpointArgs, PROFILE, REPO, startHub, tempDir, type RunningHub, type Setup } from '../support/hub.js';
import { COLLECTOR_SKIP, qualifiedRig } from '../support/qualified.js';
import { STOP_HOOK_BUNDLE, hookArgs, reasonDoc, runAsync, stopPayload, treeDigest, type Host, type HookRun } from '../support/stop-hook.js';
import { copyTree } from '../support/files.js';

const HOSTS: readonly Host[] = ['claude-code', 'codex'];

function env(stateDir: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: stateDir, AGENTSCM_STATE_DIR: stateDir };
}

/** Rewrites a file with other bytes of the same size and puts its mtime back (its ctime still moves). */
function sameSizeEdit(file: string): void {
  const st = fs.statSync(file);
  const text = fs.readFileSync(file, 'utf8');
  fs.writeFileSync(file, text.slice(0, -2) + (text.at(-2) === 'x' ? 'y' : 'x') + text.at(-1));
  fs.utimesSync(file, st.atime, st.mtime);
}

let sessionSeq = 0;
const freshSession = () => `sess-${process.pid}-${++sessionSeq}`;

/** Runs the hook once with a fresh session and checks that data dir and workspace are byte-identical. */
async function hook(s: Setup, url: string, host: Host, o: Parameters<typeof hookArgs>[3] & { session?: string; active?: boolean; state?: string; input?: string } = {}): Promise<HookRun> {
  const roots = [o.dataDir ?? s.dataDir, o.workspace ?? s.workspace];
  const beforeDigest = treeDigest(...roots);
  // Codex runs go through the bundled entry install-stop registers, Claude runs through the launcher: both entries are covered.
  const entry = host === 'codex' ? STOP_HOOK_BUNDLE : undefined;
  const r = await runAsync(hookArgs(s, url, host, o), o.input ?? stopPayload(host, o.session ?? freshSession(), o.active ?? false, s.workspace), env(o.state ?? path.join(s.root, 'state')), entry);
  assert.equal(treeDigest(...roots), beforeDigest, 'the hook changed the data dir or the workspace');
  if (host === 'codex') assertCodexHookStdout('stop.command.output', r.stdout);
  return r;
}

function expectBlock(r: HookRun, host: Host): Record<string, any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  assert.equal(r.code, 0, r.stderr);
  const answer = JSON.parse(r.stdout) as Record<string, unknown>;
  assert.deepEqual(Object.keys(answer).sort(), ['decision', 'reason'], `${host} answer has only decision and reason`);
  assert.equal(answer.decision, 'block');
  assert.ok(typeof answer.reason === 'string' && answer.reason.length > 0);
  assert.ok(!answer.reason.includes('/tmp') && !answer.reason.includes('agentscm_wt1_'), 'no paths or tokens in the reason');
  return reasonDoc(r.stdout);
}

function checkpoint(s: Setup, change = 'c1', workspace = s.workspace): Record<string, any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = agentscm(['checkpoint', change, '--data-dir', s.dataDir, '--repository', REPO, '--profile', PROFILE, '--workspace', workspace, '--json']);
  assert.equal(r.code, 0, r.stderr);
  return json(r);
}

/**
 * A proxy in front of the real Hub that runs `during` once the request has arrived and before it
 * forwards it: the only way to change the workspace exactly inside the hook's Hub call (a timing fault
 * injector).
 */
async function proxyDoing(hubUrl: string, during: () => void): Promise<{ url: string; close: () => Promise<void> }> {
  const target = new URL(hubUrl);
  const proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      during();
      const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers, agent: false }, (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
      });
      up.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, close: () => new Promise((r) => proxy.close(() => r())) };
}

/** One Codex hook run through the bundled entry at `url` (which may change the workspace), expected to block. */
async function hookThrough(s: Setup, url: string): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = await runAsync(hookArgs(s, url, 'codex'), stopPayload('codex', freshSession(), false, s.workspace), env(path.join(s.root, 'state')), STOP_HOOK_BUNDLE);
  assertCodexHookStdout('stop.command.output', r.stdout);
  return expectBlock(r, 'codex');
}

/** A tiny real HTTP server answering every request with fixed bytes: a fault injector for Hub answers. */
function faultServer(status: number, contentType: string, body: string): Promise<{ url: string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server = http.createServer((req, res) => {
    hits++;
    req.resume();
    req.on('end', () => {
      res.writeHead(status, { 'content-type': contentType });
      res.end(body);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}`, hits: () => hits, close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

describe('task-stop hooks against a real Hub', () => {
  let s: Setup;
  let hub: RunningHub;
  let taskId: string;

  before(async () => {
    s = adminSetup();
    const c = checkpoint(s);
    taskId = c.tasks.find((t: { step_id: string }) => t.step_id === 'check').task_id;
    hub = await startHub(s.dataDir);
  });
  after(async () => {
    await hub.stop();
  });

  for (const host of HOSTS) {
    test(`${host}: an unqualified subject blocks with the typed failures and next collector_claim`, async () => {
      const doc = expectBlock(await hook(s, hub.url, host), host);
      assert.equal(doc.verdict, 'not_ready_to_stop');
      assert.equal(doc.qualified, false);
      assert.equal(doc.subject_current, true);
      assert.deepEqual(doc.next, { operation: 'collector_claim', task_id: taskId });
      assert.ok(doc.failures.some((f: { task_id: string; code: string }) => f.task_id === taskId && /^[A-Za-z0-9._-]+$/.test(f.code)));
      // The claim comes first: collect runs only on a claimed attempt.
      assert.match(doc.next_action, /agent-task collector-claim\).*agent-task collect\)/);
      assert.equal(doc.local, undefined);
    });
  }

  test('a workspace named through a symlink is the same workspace', async () => {
    const link = path.join(s.root, 'ws-link');
    if (!fs.existsSync(link)) fs.symlinkSync(s.workspace, link);
    const doc = expectBlock(await hook(s, hub.url, 'claude-code', { workspace: link }), 'claude-code');
    assert.deepEqual(doc.next, { operation: 'collector_claim', task_id: taskId });
    assert.equal(doc.local, undefined);
  });

  test('a Codex-shaped payload (every key, nulls) is accepted and our test payload matches Codex\'s input schema', async () => {
    const payload = JSON.parse(stopPayload('codex', 'x', false, s.workspace));
    assert.deepEqual(codexSchemaErrors('stop.command.input', payload), []);
    expectBlock(await hook(s, hub.url, 'codex'), 'codex');
  });

  test('malformed stdin exits 1 (non-blocking) with empty stdout; so does a bad argument', async () => {
    for (const input of ['', 'not json', '[]', '{"session_id":""}', '{"session_id":"s","stop_hook_active":"yes"}', '{"session_id":"s","hook_event_name":"PreToolUse"}', '{"a":1,"a":2}']) {
      const r = await hook(s, hub.url, 'codex', { input });
      assert.equal(r.code, 1, `input ${JSON.stringify(input)}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /hook error: malformed_stop_payload/);
    }
    const r = await runAsync(['skill-workflow', 'task-codex-stop', 'c1', '--endpoint', hub.url], stopPayload('codex', 's', false, s.workspace), env(path.join(s.root, 'state')));
    assert.equal(r.code, 1, 'a usage error of a hook must not exit 2, which both hosts read as a block');
    assert.equal(r.stdout, '');
  });

  test('the counter: 8 continuations, then the session may stop without asking the Hub; a fresh stop starts again', async () => {
    const fault = await faultServer(200, 'application/json', '{}');
    const state = path.join(s.root, 'counter-state');
    const session = freshSession();
    try {
      for (let i = 0; i < 8; i++) {
        const r = await hook(s, hub.url, 'codex', { session, active: i > 0, state });
        expectBlock(r, 'codex');
      }
      const files = fs.readdirSync(path.join(state, 'agent-stop'));
      assert.equal(files.length, 1, 'one counter file per session and subject');
      assert.equal(fs.statSync(path.join(state, 'agent-stop', files[0]!)).mode & 0o777, 0o600);
      // Exhausted: allowed at once, and qualification is not called (the fault server counts requests).
      const r9 = await hook(s, fault.url, 'codex', { session, active: true, state });
      assert.equal(r9.code, 0, r9.stderr);
      assert.equal(r9.stdout, '');
      assert.equal(fault.hits(), 0);
      // A new user turn (stop_hook_active false) starts a new run of continuations.
      expectBlock(await hook(s, hub.url, 'codex', { session, active: false, state }), 'codex');
      // The Claude counter of the same session is separate.
      expectBlock(await hook(s, hub.url, 'claude-code', { session, active: true, state }), 'claude-code');
    } finally {
      await fault.close();
    }
  });

  test('an unreadable counter exits 1 without calling the Hub', async () => {
    const fault = await faultServer(200, 'application/json', '{}');
    const state = path.join(s.root, 'bad-counter');
    const session = freshSession();
    try {
      expectBlock(await hook(s, hub.url, 'claude-code', { session, state }), 'claude-code');
      const dir = path.join(state, 'agent-stop');
      const file = path.join(dir, fs.readdirSync(dir)[0]!);
      fs.writeFileSync(file, 'garbage');
      const r = await hook(s, fault.url, 'claude-code', { session, active: true, state });
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /counter_unavailable/);
      assert.equal(fault.hits(), 0);
    } finally {
      await fault.close();
    }
  });

  test('a malformed answer blocks as "malformed response", with no server text', async () => {
    const cases: [number, string, string][] = [
      [200, 'application/json', '{"garbage":true}'],
      [200, 'text/plain', 'SECRET server text'],
      [200, 'application/json', '{"capability":"agentscm.agent-workflow-tasks/v1","schema_version":1,"qualified":true,"subject_current":true,"receipt_digest":null,"revision":"00","tasks":[],"failures":[],"next":{"operation":"none"}}'],
      [500, 'application/json', '{"error":{"code":"internal","message":"SECRET stack trace"}}'],
    ];
    for (const [status, ctype, body] of cases) {
      const fault = await faultServer(status, ctype, body);
      try {
        const r = await hook(s, fault.url, 'codex');
        const doc = expectBlock(r, 'codex');
        assert.equal(doc.error, 'malformed response', body);
        assert.equal(doc.next, null);
        assert.ok(!r.stdout.includes('SECRET') && !r.stderr.includes('SECRET'));
        assert.equal(fault.hits(), 1);
      } finally {
        await fault.close();
      }
    }
  });

  test('an answer about another revision is malformed (a qualified answer for other bytes cannot pass)', async () => {
    const q = {
      capability: 'agentscm.agent-workflow-tasks/v1', schema_version: 1, qualified: true, subject_current: true,
      receipt_digest: 'a'.repeat(64), revision: 'b'.repeat(64), tasks: [], failures: [], next: { operation: 'none' },
    };
    const fault = await faultServer(200, 'application/json', JSON.stringify(q));
    try {
      assert.equal(expectBlock(await hook(s, fault.url, 'claude-code'), 'claude-code').error, 'malformed response');
    } finally {
      await fault.close();
    }
  });
});

describe('task-stop hooks: local causes', () => {
  test('edits after the checkpoint (changed, added, removed file) block with next checkpoint', async () => {
    const s = adminSetup();
    checkpoint(s);
    const hub = await startHub(s.dataDir);
    try {
      const edits: [string, () => void][] = [
        ['changed', () => fs.appendFileSync(path.join(s.workspace, 'greet.sh'), '# edit\n')],
        ['added', () => fs.writeFileSync(path.join(s.workspace, 'new.txt'), 'new\n')],
        ['removed', () => fs.rmSync(path.join(s.workspace, 'README.md'))],
        ['mode', () => fs.chmodSync(path.join(s.workspace, 'check.sh'), fs.statSync(path.join(s.workspace, 'check.sh')).mode & 0o111 ? 0o644 : 0o755)],
      ];
      for (const [what, edit] of edits) {
        const saved = fs.mkdtempSync(path.join(s.root, 'saved-'));
        fs.cpSync(s.workspace, saved, { recursive: true });
        edit();
        for (const host of HOSTS) {
          const doc = expectBlock(await hook(s, hub.url, host), host);
          assert.deepEqual(doc.local, ['workspace_dirty'], what);
          assert.deepEqual(doc.next, { operation: 'checkpoint' }, what);
          assert.match(doc.next_action, /Checkpoint the workspace/);
        }
        fs.rmSync(s.workspace, { recursive: true });
        fs.renameSync(saved, s.workspace);
      }
    } finally {
      await hub.stop();
    }
  });

  test('in a git work tree, a tracked file whose directory became a file or a looping symlink blocks as workspace_dirty (its file is deleted), not as a failure', async () => {
    const s = adminSetup();
    const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };
    for (const args of [['init', '-q'], ['add', '-A'], ['commit', '-qm', 'x']]) execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], { cwd: s.workspace, env: gitEnv, stdio: 'ignore' });
    checkpoint(s);
    const hub = await startHub(s.dataDir);
    try {
      const docs = path.join(s.workspace, 'docs');
      fs.rmSync(docs, { recursive: true });
      fs.writeFileSync(docs, 'a file now\n');
      for (const host of HOSTS) assert.deepEqual(expectBlock(await hook(s, hub.url, host), host).local, ['workspace_dirty'], `${host}: a file in place of the directory`);
      fs.rmSync(docs);
      fs.symlinkSync('docs', docs);
      fs.writeFileSync(path.join(s.workspace, '.git', 'info', 'exclude'), '/docs\n');
      for (const host of HOSTS) assert.deepEqual(expectBlock(await hook(s, hub.url, host), host).local, ['workspace_dirty'], `${host}: a looping symlink in place of the directory`);
    } finally {
      await hub.stop();
    }
  });

  test('in a git work tree, the first read stops at the first checkpointed file that changed: a later file the scan would refuse does not change the answer, and every edit is seen', async () => {
    const s = adminSetup();
    const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };
    for (const args of [['init', '-q'], ['add', '-A'], ['commit', '-qm', 'x']]) execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], { cwd: s.workspace, env: gitEnv, stdio: 'ignore' });
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RACY_MARGIN_MS + 100);
    checkpoint(s);
    const hub = await startHub(s.dataDir);
    try {
      for (const host of HOSTS) assert.equal(expectBlock(await hook(s, hub.url, host), host).local, undefined, `${host}: unchanged`);
      // README.md comes first in manifest order, greet.sh last: a FIFO there is refused by a full scan
      // ("workspace unavailable"), and is never reached once README.md is found edited.
      const readme = path.join(s.workspace, 'README.md');
      const greet = path.join(s.workspace, 'greet.sh');
      const saved = fs.readFileSync(readme);
      fs.appendFileSync(readme, '# edit\n');
      fs.renameSync(greet, greet + '.saved');
      execFileSync('mkfifo', [greet]);
      for (const host of HOSTS) {
        const doc = expectBlock(await hook(s, hub.url, host), host);
        assert.deepEqual(doc.local, ['workspace_dirty'], host);
        assert.deepEqual(doc.next, { operation: 'checkpoint' }, host);
      }
      fs.writeFileSync(readme, saved);
      assert.equal(expectBlock(await hook(s, hub.url, 'codex'), 'codex').error, 'workspace unavailable', 'the FIFO alone: the full scan refuses it');
      fs.rmSync(greet);
      fs.renameSync(greet + '.saved', greet);
      checkpoint(s);
      const edits: [string, () => void][] = [
        ['same-size content, mtime put back', () => sameSizeEdit(readme)],
        ['mode', () => fs.chmodSync(path.join(s.workspace, 'docs', 'CHECK.md'), 0o755)],
        ['removed', () => fs.rmSync(greet)],
      ];
      for (const [what, edit] of edits) {
        edit();
        for (const host of HOSTS) assert.deepEqual(expectBlock(await hook(s, hub.url, host), host).local, ['workspace_dirty'], `${host}: ${what}`);
        checkpoint(s);
      }
    } finally {
      await hub.stop();
    }
  });

  test('by the stat cache: a clean workspace passes the local check, and every edit is seen (same-size content with its mtime put back, mode, added, removed, racily clean)', async () => {
    const s = adminSetup();
    // Files older than the racy margin, as a workspace's files mostly are: the cache vouches for them.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RACY_MARGIN_MS + 100);
    checkpoint(s);
    const hub = await startHub(s.dataDir);
    const clean = async (what: string) => assert.equal(expectBlock(await hook(s, hub.url, 'codex'), 'codex').local, undefined, what);
    const dirty = async (what: string, host: Host = 'codex') => {
      const doc = expectBlock(await hook(s, hub.url, host), host);
      assert.deepEqual(doc.local, ['workspace_dirty'], what);
      assert.deepEqual(doc.next, { operation: 'checkpoint' }, what);
    };
    try {
      await clean('unchanged');
      const f = path.join(s.workspace, 'README.md');
      const edits: [string, () => void][] = [
        ['same-size content, mtime put back', () => sameSizeEdit(f)],
        ['mode', () => fs.chmodSync(f, 0o755)],
        ['added', () => fs.writeFileSync(path.join(s.workspace, 'added.txt'), 'new\n')],
        ['removed', () => fs.rmSync(path.join(s.workspace, 'added.txt'))],
      ];
      for (const [what, edit] of edits) {
        edit();
        await dirty(what);
        checkpoint(s);
        await clean(`${what}, checkpointed`);
      }
      // Racily clean: written again right after the checkpoint took its stat, with the same size and
      // the same mtime; only the rule that such an entry is hashed again sees it.
      checkpoint(s);
      sameSizeEdit(f);
      await dirty('racily clean', 'claude-code');
    } finally {
      await hub.stop();
    }
  });

  test('a workspace state of schema 1 (no stat cache): the hook hashes every file, and the next checkpoint migrates it', async () => {
    const s = adminSetup();
    checkpoint(s);
    const file = path.join(s.dataDir, 'workspaces.sqlite');
    // The file as the previous version wrote it: the same workspaces table, no stat_caches, version 1.
    const db = new Database(file);
    db.exec('DROP TABLE stat_caches');
    db.pragma('user_version = 1');
    db.close();
    const hub = await startHub(s.dataDir);
    try {
      assert.equal(expectBlock(await hook(s, hub.url, 'codex'), 'codex').local, undefined, 'clean, by hashing');
      fs.appendFileSync(path.join(s.workspace, 'README.md'), 'more\n');
      assert.deepEqual(expectBlock(await hook(s, hub.url, 'codex'), 'codex').local, ['workspace_dirty']);
      checkpoint(s);
      const after = new Database(file, { readonly: true });
      assert.equal(after.pragma('user_version', { simple: true }), 2);
      assert.equal((after.prepare('SELECT count(*) AS n FROM stat_caches').get() as { n: number }).n, 1);
      after.close();
      assert.equal(expectBlock(await hook(s, hub.url, 'codex'), 'codex').local, undefined, 'clean after the migrating checkpoint');
    } finally {
      await hub.stop();
    }
  });

  test('a stat cache whose bytes changed on disk: the hook blocks (local store), the next checkpoint reads every file and writes a good one', async () => {
    const s = adminSetup();
    checkpoint(s);
    const file = path.join(s.dataDir, 'workspaces.sqlite');
    const db = new Database(file);
    const row = db.prepare('SELECT workspace_key, entries FROM stat_caches').get() as { workspace_key: string; entries: Buffer };
    // The first entry's digest (after its path and its fixed stat fields), one bit flipped.
    const entries = Buffer.from(row.entries);
    const at = 12 + 4 + entries.readUInt32LE(12) + 4 + 8 * 4 + 31;
    entries[at] = entries[at]! ^ 0x01;
    db.prepare('UPDATE stat_caches SET entries = ? WHERE workspace_key = ?').run(entries, row.workspace_key);
    db.close();
    const hub = await startHub(s.dataDir);
    try {
      const doc = expectBlock(await hook(s, hub.url, 'codex'), 'codex');
      assert.equal(doc.error, 'local store unavailable');
      checkpoint(s);
      const after = new Database(file, { readonly: true });
      assert.notDeepEqual((after.prepare('SELECT entries FROM stat_caches').get() as { entries: Buffer }).entries, entries, 'a new cache');
      after.close();
      assert.equal(expectBlock(await hook(s, hub.url, 'codex'), 'codex').local, undefined, 'clean after the checkpoint');
      assert.equal(expectBlock(await hook(s, hub.url, 'codex'), 'codex').error, undefined);
    } finally {
      await hub.stop();
    }
  });

  test('a workspace whose base is not the Change\'s revision blocks with next checkpoint', async () => {
    const s = adminSetup();
    checkpoint(s);
    // The same Change checkpointed from another directory: the Change moves on, this workspace stays at its base.
    const other = path.join(s.root, 'other');
    fs.cpSync(s.workspace, other, { recursive: true });
    fs.writeFileSync(path.join(other, 'extra.txt'), 'x\n');
    checkpoint(s, 'c1', other);
    const hub = await startHub(s.dataDir);
    try {
      const doc = expectBlock(await hook(s, hub.url, 'codex'), 'codex');
      assert.ok(doc.local.includes('base_not_subject_revision'), JSON.stringify(doc));
      assert.deepEqual(doc.next, { operation: 'checkpoint' });
    } finally {
      await hub.stop();
    }
  });

  test('a qualified answer does not let uncheckpointed edits through: next is checkpoint', async () => {
    const s = adminSetup();
    const subject = checkpoint(s).subject;
    // A fault injector answering "qualified" for exactly this subject's revision: the only way to see
    // the local check overrule a qualified answer without the collector.
    const q = {
      capability: 'agentscm.agent-workflow-tasks/v1', schema_version: 1, qualified: true, subject_current: true,
      receipt_digest: 'c'.repeat(64), revision: subject.revision, tasks: [], failures: [], next: { operation: 'none' },
    };
    const fault = await faultServer(200, 'application/json', JSON.stringify(q));
    try {
      fs.writeFileSync(path.join(s.workspace, 'after-checkpoint.txt'), 'edit\n');
      for (const host of HOSTS) {
        const doc = expectBlock(await hook(s, fault.url, host), host);
        assert.equal(doc.qualified, true);
        assert.deepEqual(doc.local, ['workspace_dirty']);
        assert.deepEqual(doc.next, { operation: 'checkpoint' });
      }
    } finally {
      await fault.close();
    }
  });

  test('a pending operation blocks with next checkpoint', async () => {
    const s = adminSetup();
    checkpoint(s);
    // A checkpoint that crashed after marking itself pending cannot be produced on demand: write the
    // row state it leaves behind directly (a fault injection into the workspace state).
    const db = new Database(path.join(s.dataDir, 'workspaces.sqlite'));
    db.prepare("UPDATE workspaces SET status = 'pending', pending_operation = 'checkpoint'").run();
    db.close();
    const hub = await startHub(s.dataDir);
    try {
      const doc = expectBlock(await hook(s, hub.url, 'claude-code'), 'claude-code');
      assert.ok(doc.local.includes('pending_operation') && doc.local.includes('workspace_not_ready'), JSON.stringify(doc));
      assert.deepEqual(doc.next, { operation: 'checkpoint' });
    } finally {
      await hub.stop();
    }
  });

  test('a superseded subject (the Hub knows a newer version) blocks with next checkpoint', async () => {
    const s = adminSetup();
    checkpoint(s);
    // A second native installation synchronized before the Change moved on: the hook reads it.
    const stale = path.join(s.root, 'stale-data');
    copyTree(s.dataDir, stale);
    const other = path.join(s.root, 'other');
    fs.cpSync(s.workspace, other, { recursive: true });
    fs.writeFileSync(path.join(other, 'extra.txt'), 'x\n');
    checkpoint(s, 'c1', other);
    const hub = await startHub(s.dataDir);
    try {
      for (const host of HOSTS) {
        const doc = expectBlock(await hook(s, hub.url, host, { dataDir: stale }), host);
        assert.equal(doc.subject_current, false);
        assert.equal(doc.qualified, false);
        assert.deepEqual(doc.next, { operation: 'checkpoint' });
        assert.equal(doc.local, undefined, 'the local bytes are clean: the Hub said checkpoint');
      }
    } finally {
      await hub.stop();
    }
  });

  test('a subject that changes while the hook waits for the Hub blocks with next checkpoint', async () => {
    const s = adminSetup();
    checkpoint(s);
    const hub = await startHub(s.dataDir);
    const proxy = await proxyDoing(hub.url, () => {
      fs.writeFileSync(path.join(s.workspace, 'late.txt'), 'late\n');
      checkpoint(s);
    });
    try {
      const doc = await hookThrough(s, proxy.url);
      assert.ok(doc.local.includes('subject_changed') && doc.local.includes('changed_during_run'), JSON.stringify(doc));
      assert.deepEqual(doc.next, { operation: 'checkpoint' });
    } finally {
      await proxy.close();
      await hub.stop();
    }
  });

  test('files edited while the hook waits for the Hub are seen by its second read; files already edited at the first read block as dirty whatever the second would find', async () => {
    const s = adminSetup();
    checkpoint(s);
    const file = path.join(s.workspace, 'README.md');
    const original = fs.readFileSync(file);
    const hub = await startHub(s.dataDir);
    // Clean at the first read, edited during the call: the second read scans the files and finds the edit.
    let proxy = await proxyDoing(hub.url, () => fs.appendFileSync(file, '# late edit\n'));
    try {
      const doc = await hookThrough(s, proxy.url);
      assert.deepEqual([...doc.local].sort(), ['changed_during_run', 'workspace_dirty'], JSON.stringify(doc));
      assert.deepEqual(doc.next, { operation: 'checkpoint' });
    } finally {
      await proxy.close();
    }
    // Edited at the first read, put back during the call: the first read's finding stands (the second
    // read takes the recorded state only), so the hook blocks as dirty and nothing else.
    proxy = await proxyDoing(hub.url, () => fs.writeFileSync(file, original));
    try {
      const doc = await hookThrough(s, proxy.url);
      assert.deepEqual(doc.local, ['workspace_dirty'], JSON.stringify(doc));
      assert.deepEqual(doc.next, { operation: 'checkpoint' });
      assert.deepEqual(fs.readFileSync(file), original);
      // Now clean at both reads: no local finding.
      const again = await hookThrough(s, hub.url);
      assert.equal(again.local, undefined, JSON.stringify(again));
    } finally {
      await proxy.close();
      await hub.stop();
    }
  });

  test('a missing workspace directory, workspace state or data dir blocks, and nothing is created', async () => {
    const s = adminSetup();
    checkpoint(s);
    const hub = await startHub(s.dataDir);
    try {
      const gone = path.join(s.root, 'no-such-ws');
      let doc = expectBlock(await runAsync(hookArgs(s, hub.url, 'codex', { workspace: gone }), stopPayload('codex', freshSession(), false, s.root), env(path.join(s.root, 'state'))), 'codex');
      assert.equal(doc.error, 'workspace unavailable');
      assert.equal(fs.existsSync(gone), false);

      const noData = path.join(s.root, 'no-such-data');
      doc = expectBlock(await runAsync(hookArgs(s, hub.url, 'codex', { dataDir: noData }), stopPayload('codex', freshSession(), false, s.root), env(path.join(s.root, 'state'))), 'codex');
      assert.equal(doc.error, 'local store unavailable');
      assert.equal(fs.existsSync(noData), false);

      // A copy of the data dir without the workspace state (the store's per-workspace lock and record).
      const copy = path.join(s.root, 'data-without-state');
      copyTree(s.dataDir, copy);
      for (const f of fs.readdirSync(copy)) if (f.startsWith('workspaces.sqlite')) fs.rmSync(path.join(copy, f));
      doc = expectBlock(await hook(s, hub.url, 'claude-code', { dataDir: copy }), 'claude-code');
      assert.equal(doc.error, 'workspace unavailable');
      assert.equal(fs.existsSync(path.join(copy, 'workspaces.sqlite')), false);
      assert.equal(doc.next, null);
      assert.match(doc.next_action, /could not run/);
    } finally {
      await hub.stop();
    }
  });

  test('an installed requirement whose bytes no longer match its digests blocks as "local store unavailable", whatever the Hub answers', async () => {
    const s = adminSetup();
    checkpoint(s);
    const hub = await startHub(s.dataDir);
    try {
      // The hook's copy of the data dir is damaged, the Hub's is not: the Hub answers as ever, and the
      // hook's own integrity check of the requirement (run while the request is out) decides.
      const copy = path.join(s.root, 'data-damaged');
      copyTree(s.dataDir, copy);
      const db = new Database(path.join(copy, 'authority.sqlite'));
      db.prepare("UPDATE requirements SET canonical = CAST(CAST(canonical AS TEXT) || ' ' AS BLOB)").run();
      db.close();
      for (const host of HOSTS) {
        const doc = expectBlock(await hook(s, hub.url, host, { dataDir: copy }), host);
        assert.equal(doc.error, 'local store unavailable', host);
        assert.equal(doc.next, null);
      }
      // The undamaged data dir, same Hub: an ordinary block.
      const ok = expectBlock(await hook(s, hub.url, 'codex'), 'codex');
      assert.equal(ok.error, undefined);
    } finally {
      await hub.stop();
    }
  });

  test('a relative or missing token file blocks as "token unavailable"', async () => {
    const s = adminSetup();
    checkpoint(s);
    const hub = await startHub(s.dataDir);
    try {
      for (const tokenFile of ['token', path.join(s.root, 'no-token')]) {
        const doc = expectBlock(await hook(s, hub.url, 'codex', { tokenFile }), 'codex');
        assert.equal(doc.error, 'token unavailable');
      }
    } finally {
      await hub.stop();
    }
  });

  test('a Change with no checkpoint yet blocks with next checkpoint, without asking the Hub', async () => {
    const s = adminSetup();
    // A server that would answer "qualified" to anything: it must not be asked.
    const server = await faultServer(200, 'application/json', '{}');
    try {
      for (const host of HOSTS) {
        const doc = expectBlock(await hook(s, server.url, host), host);
        assert.equal(doc.verdict, 'not_ready_to_stop');
        assert.equal(doc.error, undefined);
        assert.deepEqual(doc.local, ['change_not_checkpointed']);
        assert.deepEqual(doc.next, { operation: 'checkpoint' });
        assert.match(doc.next_action, /^Checkpoint the workspace/);
      }
      assert.equal(server.hits(), 0);
    } finally {
      await server.close();
    }
  });

  test('an offline Hub blocks as "service request failed"; a revoked token as "token rejected"', async () => {
    const s = adminSetup();
    checkpoint(s);
    const hub = await startHub(s.dataDir);
    const url = hub.url;
    // Revocation while the Hub runs: its next request answers 401.
    const rv = agentscm(['authority', 'token', 'revoke', '--data-dir', s.dataDir, '--token-id', s.tokenId]);
    assert.equal(rv.code, 0, rv.stderr);
    for (const host of HOSTS) assert.equal(expectBlock(await hook(s, url, host), host).error, 'token rejected');
    await hub.stop();
    for (const host of HOSTS) {
      const doc = expectBlock(await hook(s, url, host), host);
      assert.equal(doc.error, 'service request failed');
      assert.equal(doc.next, null);
    }
  });
});

describe('task-stop hooks: the passing case', () => {
  // A pass needs a real v2 receipt, which only the collector flow creates; the Hub is never faked here.
  test('a qualified subject with a clean workspace at its revision lets both hosts stop; an edit after it blocks', { skip: COLLECTOR_SKIP }, async () => {
    const rig = await qualifiedRig();
    const s = { root: rig.root, dataDir: rig.dataDir, workspace: rig.workspace, tokenFile: rig.tokenFile, tokenId: '' };
    try {
      for (const host of HOSTS) {
        const r = await hook(s, rig.hub.url, host);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, '', `${host}: a qualified, clean subject passes with empty stdout`);
      }
      fs.appendFileSync(path.join(rig.workspace, 'README.md'), 'late edit\n');
      for (const host of HOSTS) {
        const doc = expectBlock(await hook(s, rig.hub.url, host), host);
        assert.equal(doc.qualified, true);
        assert.deepEqual(doc.local, ['workspace_dirty']);
        assert.deepEqual(doc.next, { operation: 'checkpoint' });
      }
    } finally {
      await rig.stop();
    }
  });
});

describe('install-stop and init-repo', () => {
  test('the bundled Stop hook entry has the table\'s specs, and install-stop registers it', () => {
    for (const spec of STOP_HOOK_SPECS) {
      const table = COMMANDS.find((c) => c.path.join(' ') === spec.path.join(' '))!;
      assert.deepEqual(spec.options, table.options, spec.path.join(' '));
      assert.deepEqual(spec.args, table.args);
      assert.equal(spec.errorPolicy, table.errorPolicy);
      assert.equal(spec.json, table.json);
    }
    assert.ok(fs.existsSync(path.join(REPO_ROOT, 'dist', 'bundles', 'agentscm-stop-hook.cjs')), 'npm run build bundles the Stop hook');
  });

  test('install-stop merges into existing configs, is idempotent and refuses a relative token file', () => {
    const s = adminSetup();
    const project = tempDir('project');
    fs.mkdirSync(path.join(project, '.claude'));
    const existing = { model: 'x', hooks: { Stop: [{ hooks: [{ type: 'command', command: 'echo other', timeout: 5 }] }], SessionStart: [{ matcher: 'startup', hooks: [{ type: 'command', command: 'echo hi' }] }] } };
    fs.writeFileSync(path.join(project, '.claude', 'settings.json'), JSON.stringify(existing));
    const args = (host: string, extra: string[] = [], endpoint = 'http://127.0.0.1:9') => [
      'install-stop', 'c1', '--host', host, '--project', project, '--data-dir', s.dataDir, '--endpoint', endpoint, '--repository', REPO,
      '--profile', PROFILE, '--token-file', s.tokenFile, ...extra,
    ];
    let r = agentscm(args('claude-code'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^installed: Claude Code Stop hook/m);
    assert.match(r.stdout, /^instructions: .*agent-task capabilities/m);
    const settings = JSON.parse(fs.readFileSync(path.join(project, '.claude', 'settings.json'), 'utf8'));
    assert.equal(settings.model, 'x');
    assert.deepEqual(settings.hooks.SessionStart, existing.hooks.SessionStart);
    assert.equal(settings.hooks.Stop.length, 2);
    assert.deepEqual(settings.hooks.Stop[0], existing.hooks.Stop[0]);
    const cmd: string = settings.hooks.Stop[1].hooks[0].command;
    assert.ok(cmd.startsWith(`sh -c '${STOP_GUARD_SCRIPT}' agentscm-stop-hook ${process.execPath} ${path.join(REPO_ROOT, 'dist', 'bundles', 'agentscm-stop-hook.cjs')} `), cmd);
    assert.match(cmd, / skill-workflow task-stop c1 /);
    assert.ok(cmd.includes(`--workspace ${project}`));
    const bytes = fs.readFileSync(path.join(project, '.claude', 'settings.json'));
    r = agentscm(args('claude-code'));
    assert.match(r.stdout, /^already installed/m);
    assert.deepEqual(fs.readFileSync(path.join(project, '.claude', 'settings.json')), bytes);
    // Another endpoint replaces the handler of the same Change in place.
    r = agentscm(args('claude-code', [], 'http://127.0.0.1:10'));
    const again = JSON.parse(fs.readFileSync(path.join(project, '.claude', 'settings.json'), 'utf8'));
    assert.equal(again.hooks.Stop.length, 2);
    assert.match(again.hooks.Stop[1].hooks[0].command, /127\.0\.0\.1:10 /);
    // A handler written by an earlier release names the former bundle path dist/hook/…: it is ours, and
    // replaced in place (that path still hands over to dist/bundles/ until then).
    const formerEntry = path.join(REPO_ROOT, 'dist', 'hook', 'agentscm-stop-hook.cjs');
    assert.match(fs.readFileSync(formerEntry, 'utf8'), /require\("\.\.\/bundles\/agentscm-stop-hook\.cjs"\)/);
    again.hooks.Stop[1].hooks[0].command = again.hooks.Stop[1].hooks[0].command.replace(path.join(REPO_ROOT, 'dist', 'bundles'), path.join(REPO_ROOT, 'dist', 'hook'));
    assert.ok(again.hooks.Stop[1].hooks[0].command.includes(formerEntry));
    fs.writeFileSync(path.join(project, '.claude', 'settings.json'), JSON.stringify(again));
    r = agentscm(args('claude-code', [], 'http://127.0.0.1:10'));
    assert.match(r.stdout, /^installed: /m);
    const replaced = JSON.parse(fs.readFileSync(path.join(project, '.claude', 'settings.json'), 'utf8'));
    assert.equal(replaced.hooks.Stop.length, 2);
    assert.ok(replaced.hooks.Stop[1].hooks[0].command.startsWith(`sh -c '${STOP_GUARD_SCRIPT}' agentscm-stop-hook ${process.execPath} ${path.join(REPO_ROOT, 'dist', 'bundles', 'agentscm-stop-hook.cjs')} `));

    r = agentscm([...args('codex'), '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = json(r);
    assert.match(String(out.trust), /\/hooks/);
    const codex = JSON.parse(fs.readFileSync(path.join(project, '.codex', 'hooks.json'), 'utf8'));
    assert.match(codex.hooks.Stop[0].hooks[0].command, / skill-workflow task-codex-stop c1 /);
    assert.equal(codex.hooks.Stop[0].hooks[0].type, 'command');

    r = agentscm([...args('codex').filter((a) => a !== s.tokenFile && a !== '--token-file'), '--token-file', 'token']);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /absolute/);
    fs.writeFileSync(path.join(project, '.codex', 'hooks.json'), '{"hooks": 1}');
    r = agentscm(args('codex'));
    assert.equal(r.code, 3, 'a config of the wrong shape is not overwritten');
  });

  test('install-stop keeps every value and group of the user, takes a blank file as empty, and writes only into the project', () => {
    const s = adminSetup();
    const args = (project: string) => [
      'install-stop', 'c1', '--host', 'claude-code', '--project', project, '--data-dir', s.dataDir, '--endpoint', 'http://127.0.0.1:9',
      '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile,
    ];
    const project = tempDir('project');
    fs.mkdirSync(path.join(project, '.claude'));
    const file = path.join(project, '.claude', 'settings.json');
    fs.writeFileSync(file, '  \n');
    let r = agentscm(args(project));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).hooks.Stop.length, 1);
    // An integer beyond 2^53 and an empty group of the user's are kept as they are.
    fs.writeFileSync(file, '{"big": 12345678901234567890, "hooks": {"Stop": [{"matcher": "", "hooks": [], "note": "user group"}]}}');
    r = agentscm(args(project));
    assert.equal(r.code, 0, r.stderr);
    const text = fs.readFileSync(file, 'utf8');
    assert.match(text, /"big": 12345678901234567890,/);
    const doc = JSON.parse(text);
    assert.equal(doc.hooks.Stop.length, 2);
    assert.deepEqual(doc.hooks.Stop[0], { matcher: '', hooks: [], note: 'user group' });
    r = agentscm(args(project));
    assert.match(r.stdout, /^already installed/m);
    assert.equal(fs.readFileSync(file, 'utf8'), text);
    // A symlinked .claude would send the write elsewhere: refused, nothing written there.
    const other = tempDir('project');
    const elsewhere = tempDir('elsewhere');
    fs.symlinkSync(elsewhere, path.join(other, '.claude'));
    r = agentscm(args(other));
    assert.equal(r.code, 3, r.stdout + r.stderr);
    assert.deepEqual(fs.readdirSync(elsewhere), []);
  });

  test('init-repo checks every file before it writes any; nothing goes through a symlinked directory', () => {
    const dir = tempDir('repo');
    fs.writeFileSync(path.join(dir, 'AGENTS.md'), '# user\n');
    fs.mkdirSync(path.join(dir, '.cursor/rules/agentscm-workflow-tasks.mdc'), { recursive: true });
    let r = agentscm(['init-repo', '--dir', dir]);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(fs.readFileSync(path.join(dir, 'AGENTS.md'), 'utf8'), '# user\n');
    const fileDir = tempDir('repo');
    fs.writeFileSync(path.join(fileDir, '.github'), 'x');
    r = agentscm(['init-repo', '--dir', fileDir]);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(fs.existsSync(path.join(fileDir, 'AGENTS.md')), false);
    const linked = tempDir('repo');
    const elsewhere = tempDir('elsewhere');
    fs.symlinkSync(elsewhere, path.join(linked, '.cursor'));
    r = agentscm(['init-repo', '--dir', linked]);
    assert.equal(r.code, 3, r.stderr);
    assert.deepEqual(fs.readdirSync(elsewhere), []);
    assert.equal(fs.existsSync(path.join(linked, 'AGENTS.md')), false);
    // The block names the claim before the collection.
    const ok = tempDir('repo');
    assert.equal(agentscm(['init-repo', '--dir', ok]).code, 0);
    assert.match(fs.readFileSync(path.join(ok, 'AGENTS.md'), 'utf8'), /`collector_claim` → `agentscm agent-task collector-claim` for that task, then\n`agentscm agent-task collect`/);
  });

  test('init-repo writes the managed block and replaces it in place, other bytes untouched', () => {
    const dir = tempDir('repo');
    const agents = '# Project\r\n\r\nKeep this.\r\n';
    fs.writeFileSync(path.join(dir, 'AGENTS.md'), agents);
    let r = agentscm(['init-repo', '--dir', dir, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(json(r).files, [
      { path: 'AGENTS.md', changed: true },
      { path: '.cursor/rules/agentscm-workflow-tasks.mdc', changed: true },
      { path: '.github/copilot-instructions.md', changed: true },
    ]);
    const a1 = fs.readFileSync(path.join(dir, 'AGENTS.md'), 'utf8');
    assert.ok(a1.startsWith(agents));
    for (const word of ['## Workflow tasks', 'capabilities', 'next', 'instructions', 'reference']) assert.ok(a1.includes(word), word);
    assert.ok(fs.readFileSync(path.join(dir, '.cursor/rules/agentscm-workflow-tasks.mdc'), 'utf8').startsWith('---\n'));
    // Content after the block, and an edit inside it, then a re-run: only the block changes back.
    const tail = '\nMore notes.\n';
    const edited = a1.replace('Discover, then fetch', 'Discover, then SOMETHING ELSE') + tail;
    fs.writeFileSync(path.join(dir, 'AGENTS.md'), edited);
    r = agentscm(['init-repo', '--dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(fs.readFileSync(path.join(dir, 'AGENTS.md'), 'utf8'), a1 + tail);
    r = agentscm(['init-repo', '--dir', dir]);
    assert.match(r.stdout, /unchanged: AGENTS.md/);
    fs.writeFileSync(path.join(dir, '.github/copilot-instructions.md'), '<!-- agentscm:end workflow-tasks -->\n');
    r = agentscm(['init-repo', '--dir', dir]);
    assert.equal(r.code, 3, 'a damaged block is refused, not guessed');
  });
});
