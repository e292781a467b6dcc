import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { generateKeyPair, toHex, verificationKeyId } from '../../src/core/crypto/ed25519.js';
import { agentscm, AGENTSCM_BIN, json } from '../support/cli.js';
import { adminSetup, callArgs, checkpointArgs, EXAMPLE_REQUIREMENT, PROFILE, REPO, startHub, tempDir } from '../support/hub.js';
import { downgradeToV2 } from '../support/authority-v2.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const enrollArgs = (dataDir: string, key: string, ...extra: string[]) => [
  'authority', 'enroll', '--data-dir', dataDir, '--repository', REPO, '--profile', PROFILE, '--step', 'check', '--executor-id', 'laptop-1', '--public-key', key, ...extra, '--json',
];

function countRows(dataDir: string, table: string): number {
  const db = new Database(path.join(dataDir, 'authority.sqlite'), { readonly: true });
  try {
    return (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('authority administration', () => {
  test('init is idempotent and makes a private data dir', () => {
    const d = path.join(tempDir('init'), 'data');
    const a = agentscm(['authority', 'init', '--data-dir', d, '--json']);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(json(a).created, true);
    assert.equal(fs.statSync(d).mode & 0o777, 0o700);
    const b = agentscm(['authority', 'init', '--data-dir', d, '--json']);
    assert.equal(json(b).created, false);
    assert.equal(json(b).authority_id, json(a).authority_id);
  });

  test('profile add prints the requirement digest; the same file is a no-op, a new one a new policy epoch', () => {
    const s = adminSetup();
    const add = (file: string) => json<Doc>(agentscm(['authority', 'profile', 'add', '--data-dir', s.dataDir, '--repository', REPO, '--profile', PROFILE, '--target', 'main', '--requirement', file, '--json']));
    const same = add(EXAMPLE_REQUIREMENT);
    assert.equal(same.changed, false);
    assert.equal(same.policy_epoch, 1);
    assert.match(same.requirement_digest, /^[0-9a-f]{64}$/);
    const doc = JSON.parse(fs.readFileSync(EXAMPLE_REQUIREMENT, 'utf8'));
    doc.steps[0].summary = 'A different summary.';
    const f = path.join(s.root, 'req2.json');
    fs.writeFileSync(f, JSON.stringify(doc, null, 2));
    const changed = add(f);
    assert.equal(changed.changed, true);
    assert.equal(changed.policy_epoch, 2);
    assert.notEqual(changed.requirement_digest, same.requirement_digest);
  });

  test('profile add refuses every bad reference path form of the seed, and duplicate keys', () => {
    const s = adminSetup();
    const doc = JSON.parse(fs.readFileSync(EXAMPLE_REQUIREMENT, 'utf8'));
    for (const p of ['', '/abs/path', 'a//b', './a', '../up', 'a/../b', 'a\\b', 'C:/drive', 'a:b', 'nul\u0000', 'del\u007f', 'tab\t', 'caf\u00e9']) {
      const d = structuredClone(doc);
      d.steps[0].references[0].path = p;
      const f = path.join(s.root, 'bad.json');
      fs.writeFileSync(f, JSON.stringify(d));
      const r = agentscm(['authority', 'profile', 'add', '--data-dir', s.dataDir, '--repository', REPO, '--profile', 'p2', '--target', 'main', '--requirement', f, '--json']);
      assert.equal(r.code, 3, `path ${JSON.stringify(p)}: ${r.stderr}`);
      assert.equal(json<Doc>(r).error.code, 'INVALID_REQUIREMENT');
    }
    const f = path.join(s.root, 'dup.json');
    fs.writeFileSync(f, '{"version":1,"version":1}');
    const r = agentscm(['authority', 'profile', 'add', '--data-dir', s.dataDir, '--repository', REPO, '--profile', 'p2', '--target', 'main', '--requirement', f, '--json']);
    assert.equal(json<Doc>(r).error.code, 'DUPLICATE_KEY');
  });

  test('token issue never overwrites and needs an absolute --out; revoke of an unknown token is NOT_FOUND', () => {
    const s = adminSetup();
    const again = agentscm(['authority', 'token', 'issue', '--data-dir', s.dataDir, '--owner', 'alice', '--agent', 'x', '--out', s.tokenFile, '--json']);
    assert.equal(again.code, 9);
    const rel = agentscm(['authority', 'token', 'issue', '--data-dir', s.dataDir, '--owner', 'alice', '--agent', 'x', '--out', 'tok', '--json']);
    assert.equal(rel.code, 3);
    assert.equal(countRows(s.dataDir, 'tokens'), 1);
    assert.equal(agentscm(['authority', 'token', 'revoke', '--data-dir', s.dataDir, '--token-id', '0'.repeat(24)]).code, 13);
  });

  test('enroll: bad keys refused before anything is written; --yes enrolls; epochs grow; revoke', () => {
    const s = adminSetup();
    const small = '0100000000000000000000000000000000000000000000000000000000000000'; // the identity: small order
    for (const bad of ['zz', 'A'.repeat(64), small, 'ff'.repeat(32) /* not canonical */]) {
      const r = agentscm(enrollArgs(s.dataDir, bad, '--yes'));
      assert.equal(r.code, 3, `${bad}: ${r.stderr}`);
      assert.equal(json<Doc>(r).error.code, 'BAD_PUBLIC_KEY');
    }
    assert.equal(countRows(s.dataDir, 'enrollments'), 0);
    const kp = generateKeyPair();
    const hex = toHex(kp.publicKey);
    const noTty = agentscm(enrollArgs(s.dataDir, hex));
    assert.equal(noTty.code, 2, 'without a terminal, --yes is required');
    assert.equal(countRows(s.dataDir, 'enrollments'), 0);
    const e1 = json<Doc>(agentscm(enrollArgs(s.dataDir, hex, '--yes')));
    assert.equal(e1.registration_epoch, 1);
    assert.equal(e1.verification_key_id, verificationKeyId(kp.publicKey));
    const e2 = json<Doc>(agentscm(enrollArgs(s.dataDir, hex, '--yes')));
    assert.equal(e2.registration_epoch, 2);
    assert.notEqual(e2.registration_id, e1.registration_id);
    const unknownStep = agentscm(enrollArgs(s.dataDir, hex, '--yes').map((a) => (a === 'check' ? 'nope' : a)));
    assert.equal(unknownStep.code, 3);
    const rv = agentscm(['authority', 'revoke-enrollment', '--yes', '--data-dir', s.dataDir, '--registration-id', e1.registration_id, '--json']);
    assert.equal(json(rv).revoked, true);
    assert.equal(json(agentscm(['authority', 'revoke-enrollment', '--yes', '--data-dir', s.dataDir, '--registration-id', e1.registration_id, '--json'])).revoked, false);
    assert.equal(agentscm(['authority', 'revoke-enrollment', '--yes', '--data-dir', s.dataDir, '--registration-id', 'reg-none', '--json']).code, 13);
  });

  test('enroll at a terminal shows the key id and scope and asks first', (t) => {
    if (spawnSync('script', ['--version']).status !== 0) return t.skip('script(1) is not installed');
    const s = adminSetup();
    const kp = generateKeyPair();
    const hex = toHex(kp.publicKey);
    const cmd = (answer: string) =>
      spawnSync('script', ['-qec', [process.execPath, AGENTSCM_BIN, ...enrollArgs(s.dataDir, hex)].map((a) => `'${a}'`).join(' '), '/dev/null'], {
        input: `${answer}\n`,
        encoding: 'utf8',
        timeout: 30_000,
      });
    const no = cmd('n');
    assert.notEqual(no.status, 0);
    assert.match(no.stdout, new RegExp(verificationKeyId(kp.publicKey)));
    assert.match(no.stdout, /repository acme\/demo, profile default, step check/);
    assert.equal(countRows(s.dataDir, 'enrollments'), 0);
    const yes = cmd('y');
    assert.equal(yes.status, 0, yes.stdout);
    assert.equal(countRows(s.dataDir, 'enrollments'), 1);
  });
});

describe('checkpoint and the native store', () => {
  test('a git work tree records exactly ls-files -co --exclude-standard; revision is content-addressed', () => {
    const s = adminSetup();
    execFileSync('git', ['init', '-q', s.workspace]);
    fs.writeFileSync(path.join(s.workspace, '.gitignore'), 'build/\n*.log\n');
    fs.mkdirSync(path.join(s.workspace, 'build'));
    fs.writeFileSync(path.join(s.workspace, 'build', 'out.bin'), 'ignored');
    fs.writeFileSync(path.join(s.workspace, 'debug.log'), 'ignored');
    const a = json<Doc>(agentscm(checkpointArgs(s)));
    assert.equal(a.file_count, 5); // 4 example files + .gitignore
    const manifest = JSON.parse(fs.readFileSync(path.join(s.dataDir, 'snapshots', 'manifests', `${a.subject.revision}.json`), 'utf8'));
    const paths = manifest.entries.map((e: Doc) => e.path);
    assert.ok(!paths.some((p: string) => p.startsWith('build/') || p.endsWith('.log')));
    assert.ok(paths.includes('.gitignore') && paths.includes('docs/CHECK.md'));
    assert.equal(manifest.entries.find((e: Doc) => e.path === 'check.sh').mode, 0o100755);
    const blob = manifest.entries.find((e: Doc) => e.path === 'greet.sh');
    assert.equal(blob.sha256, createHash('sha256').update(fs.readFileSync(path.join(s.workspace, 'greet.sh'))).digest('hex'));
    // Ignored files do not change the revision; a tracked edit does.
    fs.writeFileSync(path.join(s.workspace, 'debug.log'), 'more');
    const b = json<Doc>(agentscm(checkpointArgs(s)));
    assert.equal(b.subject.revision, a.subject.revision);
    assert.equal(b.subject.change_version, 2);
    assert.notEqual(b.subject.context_digest, a.subject.context_digest);
    fs.chmodSync(path.join(s.workspace, 'README.md'), 0o755);
    assert.notEqual(json<Doc>(agentscm(checkpointArgs(s))).subject.revision, a.subject.revision, 'the mode is bound');
  });

  test('symlinks leaving the workspace are refused; inner ones are recorded; a refusal changes no state', () => {
    const s = adminSetup();
    const rows = (): Doc[] => {
      const db = new Database(path.join(s.dataDir, 'workspaces.sqlite'), { readonly: true });
      try {
        return db.prepare('SELECT * FROM workspaces ORDER BY workspace_key').all() as Doc[];
      } finally {
        db.close();
      }
    };
    const versions = () => countRows(s.dataDir, 'change_versions');
    // The first checkpoint of a workspace refused: no row is left behind.
    fs.symlinkSync('/etc/passwd', path.join(s.workspace, 'abs'));
    assert.equal(json<Doc>(agentscm(checkpointArgs(s))).error.code, 'SYMLINK_ESCAPES');
    assert.deepEqual(rows(), []);
    fs.unlinkSync(path.join(s.workspace, 'abs'));

    fs.symlinkSync('docs/CHECK.md', path.join(s.workspace, 'GUIDE.md'));
    assert.equal(agentscm(checkpointArgs(s)).code, 0);
    const ready = rows();
    assert.equal(ready.length, 1);
    assert.equal(ready[0]!.status, 'ready');
    const recorded = versions();
    fs.symlinkSync('../../etc/passwd', path.join(s.workspace, 'docs', 'escape'));
    // Under another Change too: the refused command neither marks the workspace pending nor moves it.
    for (const change of ['c1', 'c9']) {
      const r = agentscm(checkpointArgs(s, change));
      assert.equal(r.code, 3);
      assert.equal(json<Doc>(r).error.code, 'SYMLINK_ESCAPES');
      assert.deepEqual(rows(), ready);
      assert.equal(versions(), recorded);
    }
    fs.unlinkSync(path.join(s.workspace, 'docs', 'escape'));
    fs.symlinkSync('/etc/passwd', path.join(s.workspace, 'abs'));
    assert.equal(json<Doc>(agentscm(checkpointArgs(s))).error.code, 'SYMLINK_ESCAPES');
    assert.deepEqual(rows(), ready);
    fs.unlinkSync(path.join(s.workspace, 'abs'));
    // Through another link on the way: a/b/d -> .., so a/b/e -> d/../../.. is two levels above the
    // workspace, though its text normalizes to the workspace itself. A link loop is refused too.
    fs.mkdirSync(path.join(s.workspace, 'a', 'b'), { recursive: true });
    fs.symlinkSync('..', path.join(s.workspace, 'a', 'b', 'd'));
    assert.equal(agentscm(checkpointArgs(s)).code, 0, 'a link to a directory inside is fine');
    fs.symlinkSync('d/../../..', path.join(s.workspace, 'a', 'b', 'e'));
    assert.equal(json<Doc>(agentscm(checkpointArgs(s))).error.code, 'SYMLINK_ESCAPES');
    fs.unlinkSync(path.join(s.workspace, 'a', 'b', 'e'));
    fs.symlinkSync('loop2', path.join(s.workspace, 'loop1'));
    fs.symlinkSync('loop1', path.join(s.workspace, 'loop2'));
    assert.equal(json<Doc>(agentscm(checkpointArgs(s))).error.code, 'SYMLINK_ESCAPES');
  });

  test('store files of the data dir: a symlink or group/world access is refused (exit 9), a damaged one too', () => {
    const s = adminSetup();
    const elsewhere = tempDir('elsewhere');
    // A symlinked snapshot store would publish the workspace's blobs elsewhere.
    fs.symlinkSync(elsewhere, path.join(s.dataDir, 'snapshots'));
    let r = agentscm(checkpointArgs(s));
    assert.equal(r.code, 9, r.stdout);
    assert.deepEqual(fs.readdirSync(elsewhere), []);
    fs.unlinkSync(path.join(s.dataDir, 'snapshots'));
    // A symlinked workspace state: SQLite would write its database where the link points.
    for (const f of fs.readdirSync(s.dataDir)) if (f.startsWith('workspaces.sqlite')) fs.rmSync(path.join(s.dataDir, f));
    fs.writeFileSync(path.join(elsewhere, 'ws.sqlite'), '');
    fs.symlinkSync(path.join(elsewhere, 'ws.sqlite'), path.join(s.dataDir, 'workspaces.sqlite'));
    r = agentscm(checkpointArgs(s));
    assert.equal(r.code, 9, r.stdout);
    assert.equal(json<Doc>(r).error.code, 'SYMLINK');
    assert.equal(fs.statSync(path.join(elsewhere, 'ws.sqlite')).size, 0);
    fs.unlinkSync(path.join(s.dataDir, 'workspaces.sqlite'));
    assert.equal(agentscm(checkpointArgs(s)).code, 0);
    // Loose modes on a database file.
    const authority = path.join(s.dataDir, 'authority.sqlite');
    fs.chmodSync(authority, 0o644);
    r = agentscm(['authority', 'profile', 'add', '--data-dir', s.dataDir, '--repository', REPO, '--profile', 'p2', '--target', 'main', '--requirement', EXAMPLE_REQUIREMENT, '--json']);
    assert.equal(r.code, 9, r.stdout);
    assert.equal(json<Doc>(r).error.code, 'LOOSE_PERMISSIONS');
    fs.chmodSync(authority, 0o600);
    // A file that is not a database is a local state error, not a bug.
    const garbage = adminSetup();
    fs.writeFileSync(path.join(garbage.dataDir, 'authority.sqlite'), 'garbage, not a database'.repeat(100));
    r = agentscm(['authority', 'init', '--data-dir', garbage.dataDir, '--json']);
    r = agentscm(['authority', 'profile', 'add', '--data-dir', garbage.dataDir, '--repository', REPO, '--profile', PROFILE, '--target', 'main', '--requirement', EXAMPLE_REQUIREMENT, '--json']);
    assert.equal(r.code, 9, r.stdout);
    assert.equal(json<Doc>(r).error.kind, 'LOCAL_STATE');
  });

  test('without --json, checkpoint prints the subject, its policy epoch and each task id', () => {
    const s = adminSetup();
    const r = agentscm(checkpointArgs(s).filter((a) => a !== '--json'));
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines[0], 'change c1 version 1');
    assert.match(lines[1]!, /^revision [0-9a-f]{64}$/);
    assert.match(lines[2]!, /^context_digest [0-9a-f]{64}$/);
    assert.equal(lines[3], 'policy_epoch 1');
    assert.equal(lines[4], 'files 4');
    assert.equal(lines[5], 'tasks 2');
    // The example requirement: check (required), then notes (optional).
    assert.match(lines[6]!, /^ {2}task-[0-9a-f]{40} check$/);
    assert.match(lines[7]!, /^ {2}task-[0-9a-f]{40} notes \(optional\)$/);
    assert.equal(lines.length, 8);
  });

  test('checkpoint of an unknown profile or a missing data dir fails without creating anything', () => {
    const s = adminSetup();
    const r = agentscm(checkpointArgs(s).map((a) => (a === PROFILE ? 'other' : a)));
    assert.equal(r.code, 13);
    const missing = path.join(s.root, 'nodata');
    const m = agentscm(checkpointArgs({ ...s, dataDir: missing }));
    assert.equal(m.code, 9);
    assert.equal(fs.existsSync(missing), false);
  });
});

describe('reference outcomes over the Hub', () => {
  test('limit (128 KiB + 1, refused before reading), missing and uncertain stay distinct', async () => {
    const s = adminSetup();
    const big = Buffer.alloc(128 * 1024 + 1, 0x61);
    fs.writeFileSync(path.join(s.workspace, 'docs', 'BIG.md'), big);
    const doc = JSON.parse(fs.readFileSync(EXAMPLE_REQUIREMENT, 'utf8'));
    const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
    doc.steps[0].references.push(
      { name: 'big', path: 'docs/BIG.md', sha256: sha(big) },
      { name: 'absent', path: 'docs/ABSENT.md', sha256: sha('x') },
      { name: 'drifted', path: 'greet.sh', sha256: sha('not the content') },
    );
    const f = path.join(s.root, 'req.json');
    fs.writeFileSync(f, JSON.stringify(doc));
    assert.equal(agentscm(['authority', 'profile', 'add', '--data-dir', s.dataDir, '--repository', REPO, '--profile', PROFILE, '--target', 'main', '--requirement', f]).code, 0);
    const c = json<Doc>(agentscm(checkpointArgs(s)));
    // Change the big file's bytes in the checkpoint's pack: a limit answer must come without reading
    // them (a read would find bytes that are not its digest).
    const packs = path.join(s.dataDir, 'snapshots', 'packs');
    const [pack] = fs.readdirSync(packs).filter((n) => n.endsWith('.pack'));
    const packed = fs.readFileSync(path.join(packs, pack!));
    const at = packed.indexOf(big);
    assert.ok(at > 0, 'the big file is in the pack');
    packed[at] = 0x62;
    fs.chmodSync(path.join(packs, pack!), 0o600);
    fs.writeFileSync(path.join(packs, pack!), packed);
    const hub = await startHub(s.dataDir);
    try {
      const ref = (name: string) => json<Doc>(agentscm(callArgs(s, hub.url, 'reference', 'c1', '--step', 'check', '--name', name)));
      assert.deepEqual(ref('big'), { capability: 'agentscm.agent-workflow-tasks/v1', schema_version: 1, status: 'limit', name: 'big', size: 128 * 1024 + 1, max_bytes: 131072 });
      assert.equal(ref('absent').status, 'missing');
      assert.equal(ref('drifted').status, 'uncertain');
      assert.equal(ref('check-guide').status, 'available');
      assert.equal(c.subject.policy_epoch, 2);
    } finally {
      await hub.stop();
    }
  });
});

test('token scope: --scope read is stored, a bad --scope is refused, and a schema-2 authority gains the column (full) when opened for writing', async () => {
  const s = adminSetup();
  const bad = agentscm(['authority', 'token', 'issue', '--data-dir', s.dataDir, '--owner', 'o', '--agent', 'a', '--scope', 'write', '--out', path.join(s.root, 'bad'), '--json']);
  // A malformed choice is a usage error (2), as --host's is.
  assert.equal(bad.code, 2);
  assert.equal(fs.existsSync(path.join(s.root, 'bad')), false);
  // The file as schema 2 wrote it: no scope column.
  const file = path.join(s.dataDir, 'authority.sqlite');
  downgradeToV2(file);
  const r = agentscm(['authority', 'token', 'issue', '--data-dir', s.dataDir, '--owner', 'o', '--agent', 'r', '--scope', 'read', '--out', path.join(s.root, 'read'), '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(json(r).scope, 'read');
  const after = new Database(file, { readonly: true });
  assert.equal(after.pragma('user_version', { simple: true }), 3);
  const rows = after.prepare('SELECT token_id, scope FROM tokens ORDER BY created_at').all() as { token_id: string; scope: string }[];
  after.close();
  assert.deepEqual(rows.map((x) => x.scope), ['full', 'read']);
  assert.equal(rows[0]!.token_id, s.tokenId);
  // The earlier token keeps full scope on a Hub.
  const hub = await startHub(s.dataDir);
  try {
    assert.equal(agentscm(checkpointArgs(s)).code, 0);
    const claimless = agentscm(callArgs(s, hub.url, 'capabilities'));
    assert.equal(claimless.code, 0, claimless.stderr);
  } finally {
    await hub.stop();
  }
});

test('revoke-enrollment asks to confirm as enroll does: without a terminal it needs --yes and writes nothing', () => {
  const s = adminSetup();
  const key = json(agentscm(['agent-task', 'key', 'generate', '--key-dir', path.join(s.root, 'k'), '--json']));
  const e = json(agentscm(['authority', 'enroll', '--data-dir', s.dataDir, '--repository', REPO, '--profile', PROFILE, '--step', 'check', '--executor-id', 'x1', '--public-key', String(key.public_key), '--yes', '--json']));
  for (const cmd of [['authority', 'revoke-enrollment', '--data-dir', s.dataDir, '--registration-id', String(e.registration_id)], ['authority', 'enroll', '--data-dir', s.dataDir, '--repository', REPO, '--profile', PROFILE, '--step', 'check', '--executor-id', 'x2', '--public-key', String(key.public_key)]]) {
    const r = agentscm(cmd);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /asks for confirmation at a terminal; pass --yes/);
  }
  const rv = agentscm(['authority', 'revoke-enrollment', '--yes', '--data-dir', s.dataDir, '--registration-id', String(e.registration_id), '--json']);
  assert.equal(json(rv).revoked, true, 'the refused attempt wrote nothing; --yes revokes');
});
