// The `list` verbs over real data dirs: tokens (never the secret or its hash), enrollments, collector
// profiles, profiles, Changes and receipts, each as a readable table and as --json, with --repository.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { Authority } from '../../src/core/authority/store.js';
import { openJournalForWrite } from '../../src/hub/journal.js';
import { agentscm, json } from '../support/cli.js';
import { adminSetup, checkpointArgs, PROFILE, REPO, tempDir, type Setup } from '../support/hub.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ok = (args: string[]): Doc => {
  const r = agentscm(args);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return args.includes('--json') ? json<Doc>(r) : { text: r.stdout };
};

describe('list verbs', () => {
  let s: Setup;
  let second: Doc;
  let regs: Doc[];
  let install: Doc;
  let receiptDigest: string;

  before(() => {
    s = adminSetup();
    const d = ['--data-dir', s.dataDir];
    second = ok(['authority', 'token', 'issue', ...d, '--owner', 'bob', '--agent', 'codex', '--repository', 'acme/other', '--scope', 'read', '--out', path.join(s.root, 'token2'), '--json']);
    ok(['authority', 'token', 'revoke', ...d, '--token-id', s.tokenId, '--json']);
    const key = ok(['agent-task', 'key', 'generate', '--key-dir', path.join(s.root, 'key'), '--json']);
    const enroll = () => ok(['authority', 'enroll', ...d, '--repository', REPO, '--profile', PROFILE, '--step', 'check', '--executor-id', 'collector-1', '--public-key', key.public_key, '--yes', '--json']);
    regs = [enroll(), enroll()];
    const profileFile = path.join(s.root, 'collector-profile.json');
    fs.writeFileSync(profileFile, JSON.stringify({
      version: 1, kind: 'command', repository: REPO, profile: PROFILE, step_id: 'check',
      registration_id: regs[1]!.registration_id, registration_epoch: regs[1]!.registration_epoch,
      recipe: { image_id: `sha256:${'a'.repeat(64)}`, argv: ['sh', 'check.sh'], working_dir: '/snapshot', timeout_ms: 60_000, max_output_bytes: 65_536, network: 'none' },
      runtime_identity_digest: 'b'.repeat(64),
    }));
    install = ok(['authority', 'collector-profile', 'install', ...d, '--file', profileFile, '--json']);
    ok(checkpointArgs(s, 'c1'));
    ok(checkpointArgs(s, 'c2'));
    // A receipt as the Hub's collector-finalize retains it, for c1's current subject.
    const a = Authority.open(s.dataDir, { readonly: true });
    const subject = a.currentSubject(REPO, PROFILE, 'c1');
    a.close();
    const j = openJournalForWrite(s.dataDir);
    receiptDigest = 'c'.repeat(64);
    j.insertReceipt(receiptDigest, subject, Buffer.from('{}'), 1_700_000_000_000);
    j.close();
  });
  after(() => fs.rmSync(s.root, { recursive: true, force: true }));

  test('authority token list: ids, owner, agent, repository, scope, revoked; never the secret or its hash', () => {
    const doc = ok(['authority', 'token', 'list', '--data-dir', s.dataDir, '--json']);
    assert.deepEqual(doc.tokens.map((t: Doc) => [t.token_id, t.owner_id, t.agent_id, t.repository, t.scope, t.revoked]), [
      [s.tokenId, 'alice', 'claude', null, 'full', true],
      [second.token_id, 'bob', 'codex', 'acme/other', 'read', false],
    ]);
    assert.equal(typeof doc.tokens[0].created_at, 'number');
    assert.equal(typeof doc.tokens[0].revoked_at, 'number');
    assert.equal(doc.tokens[1].revoked_at, null);
    const text = ok(['authority', 'token', 'list', '--data-dir', s.dataDir]).text as string;
    const lines = text.trimEnd().split('\n');
    assert.equal(lines.length, 3, text);
    assert.match(lines[0]!, /^TOKEN_ID\s+OWNER\s+AGENT\s+REPOSITORY\s+SCOPE\s+INTEGRATE\s+REVOKED\s+CREATED$/);
    assert.match(lines[1]!, new RegExp(`^${s.tokenId}\\s+alice\\s+claude\\s+\\(all\\)\\s+full\\s+no\\s+yes\\s+\\d{4}-\\d\\d-\\d\\dT`));
    // Neither the secret nor its stored hash appears anywhere in either form.
    const db = new Database(path.join(s.dataDir, 'authority.sqlite'), { readonly: true });
    const hashes = (db.prepare('SELECT token_hash FROM tokens').all() as { token_hash: string }[]).map((r) => r.token_hash);
    db.close();
    const secrets = [fs.readFileSync(s.tokenFile, 'utf8').trim(), fs.readFileSync(path.join(s.root, 'token2'), 'utf8').trim()];
    const both = text + JSON.stringify(doc);
    for (const x of [...hashes, ...secrets]) assert.ok(x.length > 20 && !both.includes(x), 'a secret or hash was printed');
    assert.ok(!both.includes('agentscm_wt1_'));
    // --repository: the tokens limited to it and the unlimited ones.
    const other = ok(['authority', 'token', 'list', '--data-dir', s.dataDir, '--repository', 'acme/other', '--json']);
    assert.equal(other.tokens.length, 2);
    const demo = ok(['authority', 'token', 'list', '--data-dir', s.dataDir, '--repository', REPO, '--json']);
    assert.deepEqual(demo.tokens.map((t: Doc) => t.token_id), [s.tokenId]);
  });

  test('authority enrollment list: both epochs, only the newest current', () => {
    const doc = ok(['authority', 'enrollment', 'list', '--data-dir', s.dataDir, '--json']);
    assert.deepEqual(doc.enrollments.map((e: Doc) => [e.registration_id, e.step_id, e.executor_id, e.registration_epoch, e.current, e.revoked]), [
      [regs[0]!.registration_id, 'check', 'collector-1', 1, false, false],
      [regs[1]!.registration_id, 'check', 'collector-1', 2, true, false],
    ]);
    assert.equal(doc.enrollments[1].verification_key_id, regs[1]!.verification_key_id);
    assert.ok(!JSON.stringify(doc).includes('public_key'), 'the list names the key by id only');
    const r = agentscm(['authority', 'revoke-enrollment', '--data-dir', s.dataDir, '--registration-id', regs[0]!.registration_id, '--yes', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const after = ok(['authority', 'enrollment', 'list', '--data-dir', s.dataDir, '--json']);
    assert.equal(after.enrollments[0].revoked, true);
    const text = ok(['authority', 'enrollment', 'list', '--data-dir', s.dataDir]).text as string;
    assert.match(text, /^REGISTRATION_ID\s+REPOSITORY\s+PROFILE\s+STEP\s+EXECUTOR\s+EPOCH\s+KEY_ID\s+CURRENT\s+REVOKED\s+CREATED\n/);
    assert.match(text, new RegExp(`${regs[1]!.registration_id}\\s+acme/demo\\s+default\\s+check\\s+collector-1\\s+2\\s+\\S+\\s+yes\\s+no`));
    assert.deepEqual(ok(['authority', 'enrollment', 'list', '--data-dir', s.dataDir, '--repository', 'acme/other', '--json']), { enrollments: [] });
    assert.equal(ok(['authority', 'enrollment', 'list', '--data-dir', s.dataDir, '--repository', 'acme/other']).text, 'no enrollments\n');
  });

  test('authority collector-profile list and authority profile list', () => {
    const cp = ok(['authority', 'collector-profile', 'list', '--data-dir', s.dataDir, '--json']);
    assert.equal(cp.collector_profiles.length, 1);
    const row = cp.collector_profiles[0];
    assert.equal(row.install_id, install.install_id);
    assert.equal(row.registration_id, regs[1]!.registration_id);
    assert.deepEqual([row.repository, row.profile, row.step_id, row.kind, row.seq, row.current], [REPO, PROFILE, 'check', 'command', 1, true]);
    assert.match(row.profile_digest, /^[0-9a-f]{64}$/);
    assert.match(ok(['authority', 'collector-profile', 'list', '--data-dir', s.dataDir]).text, /^INSTALL_ID\s+REGISTRATION_ID.*\ncp-[0-9a-f]+\s+reg-[0-9a-f]+\s+acme\/demo\s+default\s+check\s+command\s+1\s+yes\s+[0-9a-f]{64}\s+\d{4}-/);

    const p = ok(['authority', 'profile', 'list', '--data-dir', s.dataDir, '--json']);
    assert.equal(p.profiles.length, 1);
    assert.deepEqual([p.profiles[0].repository, p.profiles[0].profile, p.profiles[0].target, p.profiles[0].policy_epoch, p.profiles[0].publish_forge_status], [REPO, PROFILE, 'main', 1, false]);
    assert.match(p.profiles[0].requirement_digest, /^[0-9a-f]{64}$/);
    assert.match(ok(['authority', 'profile', 'list', '--data-dir', s.dataDir]).text, /^REPOSITORY\s+PROFILE\s+TARGET\s+EPOCH\s+FORGE_STATUS\s+REQUIREMENT_DIGEST\s+UPDATED\nacme\/demo\s+default\s+main\s+1\s+no\s+[0-9a-f]{64}\s+\d{4}-/);
  });

  test('authority change list and receipt list', () => {
    const c = ok(['authority', 'change', 'list', '--data-dir', s.dataDir, '--json']);
    assert.deepEqual(c.changes.map((x: Doc) => [x.repository, x.change_id, x.current_version]), [[REPO, 'c1', 1], [REPO, 'c2', 1]]);
    assert.match(c.changes[0].revision, /^[0-9a-f]{64}$/);
    assert.match(ok(['authority', 'change', 'list', '--data-dir', s.dataDir]).text, /^REPOSITORY\s+CHANGE_ID\s+VERSION\s+REVISION\s+CREATED\s+UPDATED\nacme\/demo\s+c1\s+1\s+[0-9a-f]{64}/);

    const r = ok(['receipt', 'list', '--data-dir', s.dataDir, '--json']);
    assert.equal(r.receipts.length, 1);
    assert.deepEqual([r.receipts[0].receipt_digest, r.receipts[0].change_id, r.receipts[0].change_version, r.receipts[0].created_at], [receiptDigest, 'c1', 1, 1_700_000_000_000]);
    assert.equal(r.receipts[0].revision, c.changes[0].revision);
    assert.ok(!('body' in r.receipts[0]));
    assert.match(ok(['receipt', 'list', '--data-dir', s.dataDir]).text, new RegExp(`^RECEIPT_DIGEST.*\\n${receiptDigest}\\s+acme/demo\\s+default\\s+c1\\s+1\\s+1\\s+[0-9a-f]{64}\\s+2023-11-14T22:13:20Z\\n$`));
    assert.deepEqual(ok(['receipt', 'list', '--data-dir', s.dataDir, '--repository', 'acme/other', '--json']), { receipts: [] });
  });

  test('a data dir without a journal has no receipts; one without an authority, or a bad filter, is refused', () => {
    const root = tempDir('list');
    try {
      const dir = path.join(root, 'data');
      ok(['authority', 'init', '--data-dir', dir, '--json']);
      assert.deepEqual(ok(['receipt', 'list', '--data-dir', dir, '--json']), { receipts: [] });
      assert.equal(ok(['receipt', 'list', '--data-dir', dir]).text, 'no receipts\n');
      assert.equal(ok(['authority', 'token', 'list', '--data-dir', dir]).text, 'no tokens\n');
      assert.equal(fs.existsSync(path.join(dir, 'journal.sqlite')), false, 'listing never creates the journal');
      const before = fs.readFileSync(path.join(dir, 'authority.sqlite'));
      ok(['authority', 'change', 'list', '--data-dir', dir, '--json']);
      assert.ok(before.equals(fs.readFileSync(path.join(dir, 'authority.sqlite'))), 'listing writes nothing');
      const empty = path.join(root, 'empty');
      fs.mkdirSync(empty, { mode: 0o700 });
      const none = agentscm(['authority', 'profile', 'list', '--data-dir', empty, '--json']);
      assert.equal(none.code, 9, none.stderr);
      assert.equal(json<Doc>(none).error.code, 'NO_AUTHORITY');
      const bad = agentscm(['authority', 'token', 'list', '--data-dir', dir, '--repository', 'not a repo']);
      assert.equal(bad.code, 2, bad.stderr);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
