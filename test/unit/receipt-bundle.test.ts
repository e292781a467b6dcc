// Receipt bundle verification (src/core/attest/receipt-bundle.ts) on synthetic, validly signed
// material: the causes a real Hub's bundle cannot show (a registration revoked before the receipt, a
// failing execution record, a transfer bound to another task or epoch) are each refused with their
// code even when the Hub's signature over them is valid. The real flow is
// test/integration/receipt-bundle.test.ts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildBundle, verifyBundle, type BundleEnrollment } from '../../src/core/attest/receipt-bundle.js';
import { canonicalJson, canonicalJsonBytes, type JsonValue } from '../../src/core/canonical/json.js';
import { encodeTransfer, headerSigningDigest, recordEntry, transferBytesDigest, transferDigest } from '../../src/core/collector/transfer.js';
import { DOMAINS, domainDigest } from '../../src/core/crypto/digest.js';
import { generateKeyPair, sign, toHex, verificationKeyId } from '../../src/core/crypto/ed25519.js';
import { AgentscmError } from '../../src/core/errors.js';

const hub = generateKeyPair();
const collector = generateKeyPair();
const H = (c: string) => c.repeat(64);
const SUBJECT = {
  repository: 'acme/demo', profile: 'default', target: 'main', change_id: 'c1', change_version: 1, revision: H('a'),
  context_digest: H('b'), policy_epoch: 1, requirement_digest: H('c'), plan_digest: H('d'),
};

interface Opts {
  revokedAt?: number | null;
  exitCode?: number;
  headerTask?: string;
  headerEpoch?: number;
}

function material(o: Opts = {}) {
  const vk = verificationKeyId(collector.publicKey);
  const request = canonicalJsonBytes({ version: 1, type: 'execution_request' });
  const record = canonicalJsonBytes({ version: 1, type: 'execution_record', outcome: (o.exitCode ?? 0) === 0 ? 'passed' : 'failed', exit_code: o.exitCode ?? 0, timed_out: false, oom_killed: false });
  const origin = { owner_id: 'alice', agent_id: 'claude', grant_generation: 'g1' };
  const collectorProfile = { install_id: 'inst-1', profile_digest: H('e') };
  const header = canonicalJsonBytes({
    version: 1, audience: 'hub', repository: 'acme/demo', profile: 'default', step_id: 'check', task_id: o.headerTask ?? 'task-1', task_digest: H('1'),
    attempt_id: 'att-1', attempt_digest: H('2'), execution_operation_id: 'op-1', fence: 1, origin,
    registration: { registration_id: 'reg-1', executor_id: 'x1', registration_epoch: o.headerEpoch ?? 1, verification_key_id: vk },
    collector_profile: collectorProfile, execution_request_digest: H('3'), observed_runtime_identity_digest: H('4'), upload_request_id: 'up-1',
    records: [recordEntry('execution_request', request), recordEntry('execution_record', record)] as unknown as JsonValue,
  });
  const bytes = encodeTransfer(header, sign(headerSigningDigest(header), collector.secretKey), [request, record]);
  const td = transferDigest(header);
  const receiptBody = canonicalJsonBytes({
    version: 2,
    subject: SUBJECT,
    tasks: [{
      task_id: 'task-1', task_digest: H('1'), step_id: 'check', attempt_id: 'att-1', attempt_digest: H('2'), fence: 1, transfer_digest: td,
      transfer_bytes_sha256: transferBytesDigest(bytes),
      registration: { registration_id: 'reg-1', registration_epoch: 1, executor_id: 'x1', verification_key_id: vk },
      collector_profile: collectorProfile, origin,
    }],
  });
  const enrollment: BundleEnrollment = {
    registration_id: 'reg-1', registration_epoch: 1, repository: 'acme/demo', profile: 'default', step_id: 'check', executor_id: 'x1',
    public_key: toHex(collector.publicKey), verification_key_id: vk, created_at: 1000, revoked_at: o.revokedAt ?? null,
  };
  const bundle = buildBundle({
    receiptDigest: domainDigest(DOMAINS.receipt, receiptBody), receiptBody, finalizedAt: 5000, transfers: [{ transfer_digest: td, bytes }],
    enrollments: [enrollment], passedTests: ['check/tests-pass'], hubPublicKey: hub.publicKey, sign: (m) => sign(m, hub.secretKey),
  });
  return Buffer.from(canonicalJson(bundle));
}

const code = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof AgentscmError);
    assert.equal(e.exitCode, 10);
    return e.code;
  }
  return 'verified';
};

test('a synthetic bundle verifies; revision and key are checked', () => {
  const b = material();
  const v = verifyBundle(b, hub.publicKey, H('a'));
  assert.equal(v.revision, H('a'));
  assert.deepEqual(v.passed_tests, ['check/tests-pass']);
  assert.equal(code(() => verifyBundle(b, hub.publicKey, H('f'))), 'REVISION_MISMATCH');
  assert.equal(code(() => verifyBundle(b, generateKeyPair().publicKey)), 'WRONG_KEY');
  assert.equal(code(() => verifyBundle(Buffer.from('not json'), hub.publicKey)), 'BUNDLE_MALFORMED');
  assert.equal(code(() => verifyBundle(Buffer.from('{"media_type":"application/vnd.agentscm.receipt-bundle.v1+json"}'), hub.publicKey)), 'BUNDLE_MALFORMED');
});

test('revocation is judged as of the receipt: after it counts, at or before it fails', () => {
  assert.equal(code(() => verifyBundle(material({ revokedAt: 6000 }), hub.publicKey)), 'verified');
  assert.equal(code(() => verifyBundle(material({ revokedAt: 5000 }), hub.publicKey)), 'REVOKED');
  assert.equal(code(() => verifyBundle(material({ revokedAt: 2000 }), hub.publicKey)), 'REVOKED');
});

test('validly signed but wrong: a failing record, a transfer of another task or another epoch', () => {
  assert.equal(code(() => verifyBundle(material({ exitCode: 1 }), hub.publicKey)), 'NOT_PASSED');
  assert.equal(code(() => verifyBundle(material({ headerTask: 'task-2' }), hub.publicKey)), 'BINDING_MISMATCH');
  assert.equal(code(() => verifyBundle(material({ headerEpoch: 2 }), hub.publicKey)), 'BINDING_MISMATCH');
});

test('an enrollment with another key than the one that signed the transfer fails', () => {
  const doc = JSON.parse(material().toString('utf8')) as { enrollments: { public_key: string }[] };
  doc.enrollments[0]!.public_key = toHex(generateKeyPair().publicKey);
  assert.equal(code(() => verifyBundle(Buffer.from(JSON.stringify(doc)), hub.publicKey)), 'ENROLLMENT_MISMATCH');
});
