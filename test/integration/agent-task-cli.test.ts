// The key and observation commands through the built CLI, as a user runs them: real processes, real
// files in temp dirs, exit codes, --json documents and stdin.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { KEY_FILE } from '../../src/core/crypto/keystore.js';
import { agentscm, json, REPO_ROOT, type RunResult } from '../support/cli.js';
import { nodeVerifyHex, referenceDomainDigest } from '../support/crypto.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-cli-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const EXAMPLE = path.join(REPO_ROOT, 'examples', 'assertion.json');

interface KeyDoc {
  public_key: string;
  verification_key_id: string;
}
interface ErrorDoc {
  error: { kind: string; code: string; message: string; exit_code: number };
}

function ok(r: RunResult): RunResult {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}
function fails(r: RunResult, exit: number, kind: string, code: string): ErrorDoc {
  assert.equal(r.code, exit, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  const doc = json<ErrorDoc>(r);
  assert.equal(doc.error.kind, kind);
  assert.equal(doc.error.code, code);
  assert.equal(doc.error.exit_code, exit);
  assert.match(r.stderr, /^agentscm: error: /);
  return doc;
}
const mode = (p: string) => fs.statSync(p).mode & 0o777;
/** The verification key id computed here from the digest rule, not with the project's code. */
const expectedKeyId = (publicKeyHex: string) => referenceDomainDigest('agentscm.verification-key.v1', Buffer.from(publicKeyHex, 'hex'));
let n = 0;
const freshDir = () => path.join(tmp, `case-${++n}`);

test('key generate makes a 0700 dir and a 0600 key; key show prints the same public key', () => {
  const dir = path.join(freshDir(), 'nested', 'key');
  const gen = json<KeyDoc>(ok(agentscm(['agent-task', 'key', 'generate', '--key-dir', dir, '--json'])));
  assert.match(gen.public_key, /^[0-9a-f]{64}$/);
  assert.equal(gen.verification_key_id, expectedKeyId(gen.public_key));
  assert.equal(mode(dir), 0o700);
  assert.equal(mode(path.join(dir, KEY_FILE)), 0o600);
  assert.deepEqual(fs.readdirSync(dir), [KEY_FILE], 'no temp files left');
  assert.deepEqual(json<KeyDoc>(ok(agentscm(['agent-task', 'key', 'show', '--key-dir', dir, '--json']))), gen);
  const text = ok(agentscm(['agent-task', 'key', 'show', '--key-dir', dir])).stdout;
  assert.equal(text, `public_key: ${gen.public_key}\nverification_key_id: ${gen.verification_key_id}\n`);
});

test('key generate never overwrites: exit 9, bytes unchanged', () => {
  const dir = freshDir();
  ok(agentscm(['agent-task', 'key', 'generate', '--key-dir', dir]));
  const before = fs.readFileSync(path.join(dir, KEY_FILE));
  fails(agentscm(['agent-task', 'key', 'generate', '--key-dir', dir, '--json']), 9, 'LOCAL_STATE', 'KEY_EXISTS');
  const plain = agentscm(['agent-task', 'key', 'generate', '--key-dir', dir]);
  assert.equal(plain.code, 9);
  assert.equal(plain.stdout, '', 'no JSON without --json');
  assert.match(plain.stderr, /already exists/);
  assert.deepEqual(fs.readFileSync(path.join(dir, KEY_FILE)), before);
  assert.deepEqual(fs.readdirSync(dir), [KEY_FILE]);
});

test('key generate refuses a symlinked dir and a 0755 dir, creating nothing', () => {
  const real = freshDir();
  fs.mkdirSync(real, { mode: 0o700 });
  const link = freshDir();
  fs.symlinkSync(real, link);
  fails(agentscm(['agent-task', 'key', 'generate', '--key-dir', link, '--json']), 9, 'LOCAL_STATE', 'SYMLINK');
  assert.deepEqual(fs.readdirSync(real), []);
  const loose = freshDir();
  fs.mkdirSync(loose);
  fs.chmodSync(loose, 0o755);
  fails(agentscm(['agent-task', 'key', 'generate', '--key-dir', loose, '--json']), 9, 'LOCAL_STATE', 'LOOSE_PERMISSIONS');
  assert.deepEqual(fs.readdirSync(loose), []);
  const file = freshDir();
  fs.writeFileSync(file, '');
  fails(agentscm(['agent-task', 'key', 'generate', '--key-dir', file, '--json']), 9, 'LOCAL_STATE', 'NOT_A_DIRECTORY');
});

test('a key file readable by group or others, or corrupt, is refused', () => {
  const dir = freshDir();
  ok(agentscm(['agent-task', 'key', 'generate', '--key-dir', dir]));
  const keyFile = path.join(dir, KEY_FILE);
  fs.chmodSync(keyFile, 0o644);
  fails(agentscm(['agent-task', 'key', 'show', '--key-dir', dir, '--json']), 9, 'LOCAL_STATE', 'LOOSE_PERMISSIONS');
  fails(agentscm(['agent-task', 'observation', 'sign', '--assertion', EXAMPLE, '--key-dir', dir, '--json']), 9, 'LOCAL_STATE', 'LOOSE_PERMISSIONS');
  fs.chmodSync(keyFile, 0o600);
  const doc = JSON.parse(fs.readFileSync(keyFile, 'utf8')) as Record<string, string>;
  fs.writeFileSync(keyFile, JSON.stringify({ ...doc, public_key: 'ab'.repeat(32) }));
  fails(agentscm(['agent-task', 'key', 'show', '--key-dir', dir, '--json']), 9, 'LOCAL_STATE', 'KEY_CORRUPT');
  fails(agentscm(['agent-task', 'key', 'show', '--key-dir', freshDir(), '--json']), 9, 'LOCAL_STATE', 'MISSING');
});

test('observation digest, sign and verify through the CLI; OpenSSL verifies the signature', () => {
  const dir = freshDir();
  const key = json<KeyDoc>(ok(agentscm(['agent-task', 'key', 'generate', '--key-dir', dir, '--json'])));
  const dg = json<{ digest: string; signing_bytes_hex: string }>(ok(agentscm(['agent-task', 'observation', 'digest', '--assertion', EXAMPLE, '--json'])));
  // The digest is the seed's preimage hash of the printed signing bytes.
  const bytes = Buffer.from(dg.signing_bytes_hex, 'hex');
  assert.equal(dg.digest, referenceDomainDigest('agentscm.agent-workflow-observation.v1', bytes));
  assert.ok(bytes.toString('utf8').endsWith(',"executor_provenance":null}'));

  const signed = json<{ digest: string; signature: string; verification_key_id: string }>(
    ok(agentscm(['agent-task', 'observation', 'sign', '--assertion', EXAMPLE, '--key-dir', dir, '--json'])),
  );
  assert.equal(signed.digest, dg.digest);
  assert.match(signed.signature, /^[0-9a-f]{128}$/);
  assert.equal(signed.verification_key_id, key.verification_key_id);
  assert.equal(nodeVerifyHex(Buffer.from(signed.digest, 'hex'), signed.signature, key.public_key), true, 'OpenSSL verifies over the raw digest bytes');
  assert.equal(nodeVerifyHex(Buffer.from(signed.digest, 'utf8'), signed.signature, key.public_key), false, 'not over the hex text');

  const verify = (assertion: string, sig = signed.signature, pub = key.public_key, extra: string[] = [], input?: string) =>
    agentscm(['agent-task', 'observation', 'verify', '--assertion', assertion, '--signature', sig, '--public-key', pub, ...extra], input === undefined ? {} : { input });
  assert.match(ok(verify(EXAMPLE)).stdout, /^valid: signature verifies over [0-9a-f]{64}\n$/);
  assert.deepEqual(json(ok(verify(EXAMPLE, undefined, undefined, ['--json']))), { valid: true, digest: dg.digest });

  // A changed assertion (fence one lower) no longer verifies: exit 10 and a JSON error in --json mode.
  const changed = path.join(freshDir() + '.json');
  fs.writeFileSync(changed, fs.readFileSync(EXAMPLE, 'utf8').replace('18446744073709551615', '18446744073709551614'));
  const bad = fails(verify(changed, undefined, undefined, ['--json']), 10, 'VERIFY_FAILED', 'SIGNATURE_INVALID');
  assert.match(bad.error.message, /does not verify/);
  assert.equal(verify(changed).code, 10);
  // Another key's signature fails too; malformed or small-order keys are bad input (exit 3).
  const other = freshDir();
  const otherKey = json<KeyDoc>(ok(agentscm(['agent-task', 'key', 'generate', '--key-dir', other, '--json'])));
  assert.equal(verify(EXAMPLE, undefined, otherKey.public_key).code, 10);
  fails(verify(EXAMPLE, undefined, key.public_key.toUpperCase(), ['--json']), 3, 'BAD_INPUT', 'BAD_PUBLIC_KEY');
  fails(verify(EXAMPLE, undefined, '01' + '00'.repeat(31), ['--json']), 3, 'BAD_INPUT', 'BAD_PUBLIC_KEY');
  fails(verify(EXAMPLE, signed.signature.slice(2), undefined, ['--json']), 3, 'BAD_INPUT', 'BAD_SIGNATURE');
});

test('--assertion - reads stdin', () => {
  const text = fs.readFileSync(EXAMPLE);
  const viaFile = json<{ digest: string }>(ok(agentscm(['agent-task', 'observation', 'digest', '--assertion', EXAMPLE, '--json'])));
  const viaStdin = json<{ digest: string }>(ok(agentscm(['agent-task', 'observation', 'digest', '--assertion', '-', '--json'], { input: text })));
  assert.deepEqual(viaStdin, viaFile);
  const dir = freshDir();
  const key = json<KeyDoc>(ok(agentscm(['agent-task', 'key', 'generate', '--key-dir', dir, '--json'])));
  const signed = json<{ signature: string }>(ok(agentscm(['agent-task', 'observation', 'sign', '--assertion', '-', '--key-dir', dir, '--json'], { input: text })));
  const v = agentscm(['agent-task', 'observation', 'verify', '--assertion', '-', '--signature', signed.signature, '--public-key', key.public_key], { input: text });
  assert.equal(ok(v).stdout.startsWith('valid:'), true);
  fails(agentscm(['agent-task', 'observation', 'digest', '--assertion', '-', '--json'], { input: '' }), 3, 'BAD_INPUT', 'INVALID_JSON');
  fails(agentscm(['agent-task', 'observation', 'digest', '--assertion', '-', '--json'], { input: ' '.repeat(256 * 1024 + 1) }), 3, 'BAD_INPUT', 'TOO_LARGE');
});

test('invalid assertions are bad input (exit 3) with a JSON error document', () => {
  const dup = freshDir() + '.json';
  fs.writeFileSync(dup, fs.readFileSync(EXAMPLE, 'utf8').replace('"version": 1,', '"version": 1, "version": 1,'));
  fails(agentscm(['agent-task', 'observation', 'digest', '--assertion', dup, '--json']), 3, 'BAD_INPUT', 'DUPLICATE_KEY');
  const v2 = freshDir() + '.json';
  fs.writeFileSync(v2, fs.readFileSync(EXAMPLE, 'utf8').replace('"version": 1,', '"version": 2,'));
  const doc = fails(agentscm(['agent-task', 'observation', 'digest', '--assertion', v2, '--json']), 3, 'BAD_INPUT', 'INVALID_ASSERTION');
  assert.match(doc.error.message, /version/);
  fails(agentscm(['agent-task', 'observation', 'digest', '--assertion', path.join(tmp, 'missing.json'), '--json']), 3, 'BAD_INPUT', 'UNREADABLE');
});
