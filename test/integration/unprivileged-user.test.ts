// Permission errors as a user meets them. The suite runs as root, which reads every file whatever its
// mode, so here the CLI, the Stop hook and the Hub run as an unprivileged user (uid and gid 65534,
// "nobody") over a setup that user owns: a workspace file or directory that user cannot read is the
// workspace's error (checkpoint exit 3, BAD_WORKSPACE; the Stop hook blocks as "workspace unavailable"),
// an unreadable store the local store's (exit 9; "local store unavailable"), an unreadable token file
// the token's, and nothing stored changes. With the modes put back, the same commands succeed, so each
// refusal was the mode's. Real processes, real files, a real Hub over HTTP.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { agentscm, AGENTSCM_BIN, json, REPO_ROOT, type RunResult, type User } from '../support/cli.js';
import { adminSetup, checkpointArgs, checkpointState, startHub, type Setup } from '../support/hub.js';
import { STOP_HOOK_BUNDLE, hookArgs, reasonDoc, runAsync, stopPayload, treeDigest } from '../support/stop-hook.js';

const NOBODY: User = { uid: 65534, gid: 65534 };

/** Why this host cannot run the tests (not root, or the unprivileged user cannot run the built CLI), or undefined. */
function cannotSwitch(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root, to run commands as another user';
  const r = spawnSync(process.execPath, [AGENTSCM_BIN, 'authority', '--help'], { ...NOBODY, encoding: 'utf8' });
  return r.status === 0 ? undefined : `uid ${NOBODY.uid} cannot run the build under ${REPO_ROOT}: ${r.stderr.trim()}`;
}
const SKIP = cannotSwitch();

/**
 * A directory for the setups that the unprivileged user can reach: under the nearest directory at or
 * above os.tmpdir() that every user may search (the test runner's own temporary directory is root's alone).
 */
function reachableBase(): string {
  const searchable = (d: string): boolean => (fs.statSync(d).mode & 0o001) !== 0 && (d === '/' || searchable(path.dirname(d)));
  let d = fs.realpathSync(os.tmpdir());
  while (!searchable(d)) d = path.dirname(d);
  const base = fs.mkdtempSync(path.join(d, 'agentscm-unprivileged-'));
  fs.chmodSync(base, 0o711);
  return base;
}

/**
 * adminSetup's files, moved where the unprivileged user can reach them and given to that user (its data
 * dir must be its own, owner-private).
 */
function ownedSetup(base: string): Setup {
  const made = adminSetup();
  const root = path.join(base, path.basename(made.root));
  fs.renameSync(made.root, root);
  const moved = (p: string) => path.join(root, path.relative(made.root, p));
  const s: Setup = { ...made, root, dataDir: moved(made.dataDir), tokenFile: moved(made.tokenFile), workspace: moved(made.workspace) };
  const chown = (p: string) => {
    fs.lchownSync(p, NOBODY.uid, NOBODY.gid);
    if (fs.lstatSync(p).isDirectory()) for (const f of fs.readdirSync(p)) chown(path.join(p, f));
  };
  chown(root);
  return s;
}

const env = (s: Setup): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: s.root, AGENTSCM_STATE_DIR: path.join(s.root, 'state') });
const asNobody = (s: Setup, args: readonly string[]): RunResult => agentscm(args, { env: env(s), user: NOBODY });

/** Runs f with path's mode set to mode, then puts the mode back. */
async function withMode<T>(p: string, mode: number, f: () => T | Promise<T>): Promise<T> {
  const old = fs.lstatSync(p).mode & 0o7777;
  fs.chmodSync(p, mode);
  try {
    return await f();
  } finally {
    fs.chmodSync(p, old);
  }
}

describe('as an unprivileged user', { skip: SKIP }, () => {
  let base = '';
  before(() => {
    base = reachableBase();
  });
  after(() => fs.rmSync(base, { recursive: true, force: true }));

  test('checkpoint: an unreadable workspace file or directory is the workspace\'s error (exit 3), an unreadable store the local store\'s (exit 9), and no state changes', async () => {
    const s = ownedSetup(base);
    const first = asNobody(s, checkpointArgs(s));
    assert.equal(first.code, 0, first.stdout + first.stderr);
    fs.writeFileSync(path.join(s.workspace, 'docs', 'notes.md'), 'new\n');
    fs.chownSync(path.join(s.workspace, 'docs', 'notes.md'), NOBODY.uid, NOBODY.gid);
    const before = checkpointState(s);
    const refused = (code: number, errorCode: string, message: RegExp, r: RunResult) => {
      assert.equal(r.code, code, r.stdout + r.stderr);
      const e = json<{ error: { code: string; message: string } }>(r).error;
      assert.equal(e.code, errorCode, e.message);
      assert.match(e.message, message);
      assert.deepEqual(checkpointState(s), before, 'a refused checkpoint changes no state');
    };
    await withMode(path.join(s.workspace, 'docs', 'notes.md'), 0o000, () =>
      refused(3, 'BAD_WORKSPACE', /^workspace path docs\/notes\.md cannot be read \(EACCES\)$/, asNobody(s, checkpointArgs(s))));
    await withMode(path.join(s.workspace, 'docs'), 0o000, () =>
      refused(3, 'BAD_WORKSPACE', /^workspace path docs cannot be read \(EACCES\)$/, asNobody(s, checkpointArgs(s))));
    // A directory that can be listed but not searched: its files cannot be looked at.
    await withMode(path.join(s.workspace, 'docs'), 0o644, () =>
      refused(3, 'BAD_WORKSPACE', /^workspace path docs\/\S+ cannot be read \(EACCES\)$/, asNobody(s, checkpointArgs(s))));
    await withMode(path.join(s.dataDir, 'workspaces.sqlite'), 0o000, () =>
      refused(9, 'STORE_UNAVAILABLE', /a local store cannot be used/, asNobody(s, checkpointArgs(s))));

    const ok = asNobody(s, checkpointArgs(s));
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.equal(json<{ subject: { change_version: number } }>(ok).subject.change_version, 2, 'the modes put back, the new file is checkpointed');
  });

  test('the Stop hook: an unreadable workspace file, token file or authority blocks with its own category, and changes nothing', async () => {
    const s = ownedSetup(base);
    const first = asNobody(s, checkpointArgs(s));
    assert.equal(first.code, 0, first.stdout + first.stderr);
    fs.mkdirSync(path.join(s.root, 'state'), { mode: 0o700 });
    fs.chownSync(path.join(s.root, 'state'), NOBODY.uid, NOBODY.gid);
    const hub = await startHub(s.dataDir, [], [], NOBODY);
    let session = 0;
    const stop = async () => {
      const digest = treeDigest(s.dataDir, s.workspace);
      const r = await runAsync(hookArgs(s, hub.url, 'codex'), stopPayload('codex', `nobody-${++session}`, false, s.workspace), env(s), STOP_HOOK_BUNDLE, NOBODY);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).decision, 'block');
      assert.equal(treeDigest(s.dataDir, s.workspace), digest, 'the hook changed the data dir or the workspace');
      return reasonDoc(r.stdout);
    };
    try {
      const unavailable = async (p: string, error: string) => {
        const doc = await withMode(p, 0o000, stop);
        assert.equal(doc.error, error, JSON.stringify(doc));
        assert.equal(doc.next, null);
      };
      await unavailable(path.join(s.workspace, 'README.md'), 'workspace unavailable');
      await unavailable(path.join(s.workspace, 'docs'), 'workspace unavailable');
      await unavailable(s.tokenFile, 'token unavailable');
      await unavailable(path.join(s.dataDir, 'authority.sqlite'), 'local store unavailable');
      // The modes put back: the hook reaches the Hub and blocks on its answer (no collector ran).
      const doc = await stop();
      assert.equal(doc.error, undefined, JSON.stringify(doc));
      assert.equal(doc.verdict, 'not_ready_to_stop');
    } finally {
      await hub.stop();
    }
  });
});
