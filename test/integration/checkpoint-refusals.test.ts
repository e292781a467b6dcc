// What a checkpoint refuses rather than record another file set or other bytes than the workspace
// holds, each with exit 3 and a stable code, and no state changed: a symlink target or a file name that
// is not UTF-8 (outside git and in a git work tree), a git work tree git cannot be run on or refuses, and
// a path too long to read. Real CLI processes, real git.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { agentscm, json } from '../support/cli.js';
import { adminSetup, checkpointArgs, checkpointState, tempDir, type Setup } from '../support/hub.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], { cwd, env: GIT_ENV, stdio: 'ignore' });

function refused(s: Setup, code: string, message: RegExp, env?: NodeJS.ProcessEnv): void {
  const before = checkpointState(s);
  const r = agentscm(checkpointArgs(s), env === undefined ? undefined : { env });
  assert.equal(r.code, 3, r.stdout + r.stderr);
  const e = json<Doc>(r).error;
  assert.equal(e.code, code, e.message);
  assert.match(e.message, message);
  assert.deepEqual(checkpointState(s), before, 'a refused checkpoint changes no state');
}

/** A name in dir whose last byte (0xff) is not UTF-8. */
const notUtf8 = (dir: string, stem: string) => Buffer.concat([Buffer.from(path.join(dir, stem)), Buffer.from([0xff])]);

describe('checkpoint refusals', () => {
  test('a symlink whose target is not UTF-8 is refused, not recorded as other bytes', () => {
    const s = adminSetup();
    assert.equal(agentscm(checkpointArgs(s)).code, 0);
    fs.symlinkSync(notUtf8('', 'missing'), path.join(s.workspace, 'lnk'));
    refused(s, 'BAD_WORKSPACE', /symlink lnk has a target that is not UTF-8/);
    fs.unlinkSync(path.join(s.workspace, 'lnk'));
    fs.symlinkSync('README.md', path.join(s.workspace, 'lnk'));
    assert.equal(agentscm(checkpointArgs(s)).code, 0, 'a UTF-8 target is recorded');
  });

  test('a file name that is not UTF-8 is refused, outside git and in a git work tree, not left out or blamed on a change', () => {
    const s = adminSetup();
    fs.writeFileSync(notUtf8(path.join(s.workspace, 'docs'), 'bad'), 'b\n');
    refused(s, 'BAD_WORKSPACE', /file name in workspace directory docs is not UTF-8/);
    git(s.workspace, 'init', '-q');
    git(s.workspace, 'add', '-A');
    git(s.workspace, 'commit', '-qm', 'x');
    refused(s, 'BAD_WORKSPACE', /a path git lists in the workspace is not UTF-8/);
    fs.unlinkSync(notUtf8(path.join(s.workspace, 'docs'), 'bad'));
    git(s.workspace, 'add', '-A');
    // A name with U+FFFD itself is UTF-8, and is recorded.
    fs.writeFileSync(path.join(s.workspace, 'docs', 'odd\uFFFD.md'), 'c\n');
    const ok = agentscm(checkpointArgs(s));
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  });

  test('a git work tree is listed by git or not at all: git missing from PATH, or a .git that git refuses', () => {
    const s = adminSetup();
    git(s.workspace, 'init', '-q');
    fs.writeFileSync(path.join(s.workspace, '.gitignore'), 'secret\n');
    fs.writeFileSync(path.join(s.workspace, 'secret'), 'ignored\n');
    const noGit = tempDir('no-git-path');
    refused(s, 'GIT_UNAVAILABLE', /git cannot be run/, { PATH: noGit, HOME: process.env.HOME });
    const ok = json<Doc>(agentscm(checkpointArgs(s)));
    assert.equal(ok.subject.change_id, 'c1', 'with git on PATH it checkpoints');

    const t = adminSetup();
    fs.mkdirSync(path.join(t.workspace, '.git'));
    refused(t, 'BAD_WORKSPACE', /\.git that git refuses: .*not a git repository/);
  });

  test('a tracked file whose directory became a file, a symlink or a looping symlink is absent, as git has it: not read through the link, not an error', () => {
    const s = adminSetup();
    git(s.workspace, 'init', '-q');
    git(s.workspace, 'add', '-A');
    git(s.workspace, 'commit', '-qm', 'x');
    assert.equal(agentscm(checkpointArgs(s)).code, 0);
    const docs = path.join(s.workspace, 'docs');
    const outside = tempDir('outside');
    fs.writeFileSync(path.join(outside, 'CHECK.md'), 'outside the workspace\n');
    let rev = '';
    /** The paths of the snapshot a checkpoint records now (its revision: rev). */
    const recorded = (): string[] => {
      const r = agentscm(checkpointArgs(s));
      assert.equal(r.code, 0, r.stdout + r.stderr);
      rev = json<Doc>(r).subject.revision as string;
      return (JSON.parse(fs.readFileSync(path.join(s.dataDir, 'snapshots', 'manifests', `${rev}.json`), 'utf8')) as Doc).entries.map((e: Doc) => e.path);
    };
    fs.rmSync(docs, { recursive: true });
    fs.writeFileSync(docs, 'a file now\n');
    assert.deepEqual(recorded(), ['README.md', 'check.sh', 'docs', 'greet.sh'], 'a file in place of the directory (ENOTDIR before)');
    fs.rmSync(docs);
    fs.writeFileSync(path.join(s.workspace, '.gitignore'), '/docs\n');
    fs.symlinkSync('docs', docs);
    assert.deepEqual(recorded(), ['.gitignore', 'README.md', 'check.sh', 'greet.sh'], 'a looping symlink (ELOOP before)');
    fs.rmSync(docs);
    fs.symlinkSync(outside, docs);
    assert.deepEqual(recorded(), ['.gitignore', 'README.md', 'check.sh', 'greet.sh'], 'a symlink out of the workspace: its file is not recorded');

    // A symlink to a copy of the directory: the link and the copy's file, never both a link and a file under it.
    fs.rmSync(docs);
    fs.rmSync(path.join(s.workspace, '.gitignore'));
    fs.mkdirSync(path.join(s.workspace, 'docs2'));
    fs.writeFileSync(path.join(s.workspace, 'docs2', 'CHECK.md'), 'copy\n');
    fs.symlinkSync('docs2', docs);
    assert.deepEqual(recorded(), ['README.md', 'check.sh', 'docs', 'docs2/CHECK.md', 'greet.sh']);
    const out = path.join(s.root, 'out');
    const exported = agentscm(['snapshot', 'export', '--data-dir', s.dataDir, '--revision', rev, '--out', out, '--json']);
    assert.equal(exported.code, 0, exported.stdout + exported.stderr);
    assert.equal(fs.readlinkSync(path.join(out, 'docs')), 'docs2');
    assert.equal(fs.readFileSync(path.join(out, 'docs2', 'CHECK.md'), 'utf8'), 'copy\n');
  });

  test('a path git tracks that the file system cannot look up (a name past its length limit) is the workspace\'s error (exit 3), not the local store\'s', () => {
    const s = adminSetup();
    git(s.workspace, 'init', '-q');
    git(s.workspace, 'add', '-A');
    const blob = execFileSync('git', ['hash-object', '-w', 'README.md'], { cwd: s.workspace, encoding: 'utf8' }).trim();
    git(s.workspace, 'update-index', '--add', '--cacheinfo', `100644,${blob},docs/${'n'.repeat(300)}.md`);
    refused(s, 'BAD_WORKSPACE', /cannot be read \(ENAMETOOLONG\)/);
  });

  test('a workspace path too long to read is the workspace\'s error (exit 3), not the local store\'s', () => {
    const s = adminSetup();
    // 24 levels of 200-byte names: past PATH_MAX (4,096) from the workspace, made one level at a time.
    const name = 'd'.repeat(200);
    const cwd = process.cwd();
    try {
      process.chdir(s.workspace);
      for (let i = 0; i < 24; i++) {
        fs.mkdirSync(name);
        process.chdir(name);
      }
      fs.writeFileSync('deep.txt', 'x\n');
    } finally {
      process.chdir(cwd);
    }
    try {
      refused(s, 'BAD_WORKSPACE', /cannot be read \(ENAMETOOLONG\)/);
    } finally {
      // Removed one level at a time too: no path to its depth can be named at once.
      try {
        process.chdir(s.workspace);
        for (let i = 0; i < 23; i++) process.chdir(name);
        fs.rmSync(path.join(name, 'deep.txt'));
        for (let i = 0; i < 23; i++) {
          fs.rmdirSync(name);
          process.chdir('..');
        }
        fs.rmdirSync(name);
      } finally {
        process.chdir(cwd);
      }
    }
  });
});
