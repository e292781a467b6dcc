// Byte formats of the receipt key's signatures, against fixed vectors computed outside this code base
// (Python: json.dumps(sort_keys=True, separators=(',', ':')), hashlib, and the `cryptography`
// package's Ed25519 with the RFC 8032 TEST 1 key) and pasted here as literals, plus mutants that
// must not verify. Never regenerate them from this code: a change that alters them changes the format.

import assert from 'node:assert/strict';
import { createHash, createPublicKey } from 'node:crypto';
import { test } from 'node:test';
import { canonicalSortedJson } from '../../src/core/canonical/json.js';
import { decodeBase64Strict, IN_TOTO_PAYLOAD_TYPE, pae } from '../../src/core/attest/dsse.js';
import { qualificationSigningDigest, verifyQualificationAnswer } from '../../src/core/contract/answer-signature.js';
import { publicKeyFromSeed, sign, verificationKeyId } from '../../src/core/crypto/ed25519.js';
import { ed25519PublicKey, verifyEd25519, verifyEd25519With } from '../../src/core/crypto/ed25519-verify.js';
import { receiptKey, signQualification } from '../../src/hub/signing.js';

const SEED = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
const PUB = publicKeyFromSeed(SEED);

test('DSSE PAE: the specification\'s example, byte for byte', () => {
  assert.equal(pae('http://example.com/HelloWorld', Buffer.from('hello world')).toString('latin1'), 'DSSEv1 29 http://example.com/HelloWorld 11 hello world');
  // Lengths are byte lengths, not character counts.
  assert.equal(pae('t', Buffer.from('é', 'utf8')).toString('latin1'), 'DSSEv1 1 t 2 \xc3\xa9');
  assert.equal(pae('', Buffer.alloc(0)).toString('latin1'), 'DSSEv1 0  0 ');
});

test('DSSE over an in-toto test-result Statement: the fixed payload, PAE digest and Ed25519 signature', () => {
  const st = {
    _type: 'https://in-toto.io/Statement/v1',
    subject: [{ name: 'agentscm.snapshot.v1', digest: { sha256: 'ab'.repeat(32) } }],
    predicateType: 'https://in-toto.io/attestation/test-result/v0.1',
    predicate: { result: 'PASSED', configuration: [], passedTests: ['check/tests-pass'], warnedTests: [], failedTests: [] },
  };
  const payload = Buffer.from(canonicalSortedJson(st), "utf8");
  assert.equal(
    payload.toString('utf8'),
    '{"_type":"https://in-toto.io/Statement/v1","predicate":{"configuration":[],"failedTests":[],"passedTests":["check/tests-pass"],"result":"PASSED","warnedTests":[]},"predicateType":"https://in-toto.io/attestation/test-result/v0.1","subject":[{"digest":{"sha256":"abababababababababababababababababababababababababababababababab"},"name":"agentscm.snapshot.v1"}]}',
  );
  const m = pae(IN_TOTO_PAYLOAD_TYPE, payload);
  assert.equal(createHash('sha256').update(m).digest('hex'), 'ebb72dae70b5cd3380ef234141c0b01a01050e1295c0fc73d6fea8eadfbe1fec');
  const sig = 'VNF04pEfu/A1xuem/eZUnQpZYI5mt4sKYBeieCpRyju+dIOHfbHlCiy+5pSwY0EWh6MVD/XaSQfaBjHk83MkAg==';
  assert.equal(Buffer.from(sign(m, SEED)).toString('base64'), sig);
  assert.ok(verifyEd25519(Buffer.from(sig, 'base64'), m, PUB));
  // Mutants: another payload type, one payload byte, one signature bit.
  assert.ok(!verifyEd25519(Buffer.from(sig, 'base64'), pae('application/json', payload), PUB));
  const p2 = Buffer.from(payload);
  p2[p2.length - 3]! ^= 1;
  assert.ok(!verifyEd25519(Buffer.from(sig, 'base64'), pae(IN_TOTO_PAYLOAD_TYPE, p2), PUB));
  const s2 = Buffer.from(sig, 'base64');
  s2[0]! ^= 1;
  assert.ok(!verifyEd25519(s2, m, PUB));
});

test('the Ed25519 key made from its raw bytes (a JWK) is the one its SubjectPublicKeyInfo DER makes, for good and bad keys alike', () => {
  const spki = (raw: Uint8Array) => {
    try {
      return createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki' });
    } catch {
      return undefined;
    }
  };
  const m = Buffer.from('a message');
  const sig = Buffer.from(sign(m, SEED));
  const keys = [
    PUB,
    Buffer.alloc(32), // y = 0
    Buffer.from('01' + '00'.repeat(31), 'hex'), // the identity: small order
    Buffer.from('ec' + 'ff'.repeat(30) + '7f', 'hex'), // y = p - 1: small order
    Buffer.from('ed' + 'ff'.repeat(30) + '7f', 'hex'), // y = p: not canonical
    Buffer.from('ff'.repeat(32), 'hex'),
  ];
  for (const raw of keys) {
    const der = spki(raw);
    const jwk = ed25519PublicKey(raw);
    assert.equal(jwk === undefined, der === undefined, raw.toString('hex'));
    if (der === undefined || jwk === undefined) continue;
    assert.deepEqual(jwk.export({ format: 'der', type: 'spki' }), der.export({ format: 'der', type: 'spki' }), raw.toString('hex'));
    assert.equal(verifyEd25519With(sig, m, jwk), verifyEd25519With(sig, m, der), raw.toString('hex'));
  }
  assert.equal(verifyEd25519With(sig, m, ed25519PublicKey(PUB)), true);
  assert.equal(ed25519PublicKey(PUB.subarray(0, 31)), undefined);
});

test('strict base64: padding, alphabet and canonical form', () => {
  assert.deepEqual(decodeBase64Strict('aGk='), Buffer.from('hi'));
  for (const bad of ['aGk', 'aGk=\n', 'aG k=', 'aGl=', '-_8=', 1]) assert.equal(decodeBase64Strict(bad), undefined, String(bad));
});

const SUBJECT = {
  repository: 'acme/demo', profile: 'default', target: 'main', change_id: 'c1', change_version: 1, revision: 'ab'.repeat(32),
  context_digest: 'cd'.repeat(32), policy_epoch: 1, requirement_digest: 'ef'.repeat(32), plan_digest: '01'.repeat(32),
};
const ANSWER = {
  capability: 'agentscm.agent-workflow-tasks/v1', schema_version: 1, qualified: true, subject_current: true, receipt_digest: '22'.repeat(32),
  revision: 'ab'.repeat(32), tasks: [], failures: [], next: { operation: 'none' },
};
const NONCE = '33'.repeat(32);

test('a signed qualification answer: the fixed signing digest and signature; any other subject, nonce, answer or key fails', () => {
  const d = qualificationSigningDigest(ANSWER, SUBJECT, NONCE);
  assert.equal(d.toString('hex'), 'f3a4df7e652714dc8fa34801cd01ff352e17324e68d4bd26cd9878cc9cc1cc02');
  const key = receiptKey({ secretKey: SEED, publicKey: PUB });
  const signed = signQualification(ANSWER, SUBJECT, NONCE, key) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  assert.deepEqual(signed.hub_signature, {
    key_id: verificationKeyId(PUB),
    sig: '7e454a3a1024f775d3f96eb3b3709ac8047034f8b347ea238855c6cb2bd2f5bc63586370699db61beddfbb84a8f0a4e696a6ce616b95e1d18d9e288c98387104',
  });
  const kid = verificationKeyId(PUB);
  assert.ok(verifyQualificationAnswer(signed, SUBJECT, NONCE, PUB, kid));
  // The signature member itself is not signed: the same digest with or without it.
  assert.deepEqual(qualificationSigningDigest(signed, SUBJECT, NONCE), d);
  assert.ok(!verifyQualificationAnswer(signed, SUBJECT, '44'.repeat(32), PUB, kid), 'replayed for another nonce');
  assert.ok(!verifyQualificationAnswer(signed, { ...SUBJECT, change_version: 2 }, NONCE, PUB, kid), 'another subject');
  assert.ok(!verifyQualificationAnswer({ ...signed, qualified: false }, SUBJECT, NONCE, PUB, kid), 'another answer');
  const other = publicKeyFromSeed(Buffer.alloc(32, 7));
  assert.ok(!verifyQualificationAnswer(signed, SUBJECT, NONCE, other, verificationKeyId(other)), 'another key');
  assert.ok(!verifyQualificationAnswer(ANSWER, SUBJECT, NONCE, PUB, kid), 'unsigned');
  assert.ok(!verifyQualificationAnswer({ ...signed, hub_signature: { ...signed.hub_signature, extra: 1 } }, SUBJECT, NONCE, PUB, kid), 'extra member');
  // A request without a nonce is signed with nonce null: never valid for a nonce.
  const noNonce = signQualification(ANSWER, SUBJECT, null, key);
  assert.ok(!verifyQualificationAnswer(noNonce, SUBJECT, NONCE, PUB, kid));
});
