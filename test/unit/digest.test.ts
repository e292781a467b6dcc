// Domain-separated SHA-256 (src/core/crypto/digest.ts) against the rule written out independently.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { DOMAINS, domainDigest, domainDigestBytes, domainDigestOfText, domainPreimage, sha256Hex } from '../../src/core/crypto/digest.js';
import { referenceDomainDigest } from '../support/crypto.js';

test('every domain string is distinct, printable ASCII, and no prefix of another', () => {
  const all = Object.values(DOMAINS);
  assert.equal(new Set(all).size, all.length);
  for (const d of all) {
    assert.match(d, /^[\x21-\x7e]+$/, d);
    for (const e of all) if (d !== e) assert.ok(!e.startsWith(d + '\0'), `${d} / ${e}`);
  }
  assert.equal(DOMAINS.observation, 'agentscm.agent-workflow-observation.v1', 'seed 000 fixes this one');
});

test('domainDigest = SHA-256(domain || 0x00 || u64be(len) || bytes)', () => {
  for (const len of [0, 1, 32, 255, 256, 65_537]) {
    const bytes = Buffer.alloc(len, len & 0xff);
    for (const domain of [DOMAINS.observation, DOMAINS.verificationKey, DOMAINS.receipt]) {
      const want = referenceDomainDigest(domain, bytes);
      assert.equal(domainDigest(domain, bytes), want);
      assert.equal(domainDigestBytes(domain, bytes).toString('hex'), want);
    }
  }
  const pre = domainPreimage(DOMAINS.observation, Buffer.from('{}'));
  assert.equal(pre.toString('hex'), Buffer.from('agentscm.agent-workflow-observation.v1').toString('hex') + '00' + '0000000000000002' + '7b7d');
  // Empty input of one domain is not the digest of another: the domain is part of the preimage.
  assert.notEqual(domainDigest(DOMAINS.task, new Uint8Array()), domainDigest(DOMAINS.attempt, new Uint8Array()));
});

test('sha256Hex and domainDigest equal the rule at every padding boundary, for views and strings', () => {
  // FIPS 180-4 example "abc", independent of all implementations.
  assert.equal(sha256Hex(Buffer.from('abc')), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  const data = new Uint8Array(140_000);
  for (let i = 0; i < data.length; i++) data[i] = (i * 131 + (i >> 8) * 7) & 0xff;
  const lengths = [...Array.from({ length: 200 }, (_, i) => i), 1000, 4095, 4096, 65_535, 65_536, 65_537, 70_000, 140_000];
  for (const n of lengths) {
    const bytes = data.subarray(0, n);
    const want = createHash('sha256').update(bytes).digest('hex');
    assert.equal(sha256Hex(bytes), want, `sha256Hex, length ${n}`);
    const head = Buffer.concat([Buffer.from(DOMAINS.receipt, 'ascii'), Buffer.from([0]), Buffer.alloc(8)]);
    head.writeBigUInt64BE(BigInt(n), head.length - 8);
    assert.equal(domainDigest(DOMAINS.receipt, bytes), createHash('sha256').update(head).update(bytes).digest('hex'), `domainDigest, length ${n}`);
    // A view into a larger buffer: only the view's bytes count.
    const view = data.subarray(3, 3 + Math.min(n, data.length - 3));
    const viewHead = Buffer.from(head);
    viewHead.writeBigUInt64BE(BigInt(view.length), head.length - 8);
    assert.equal(domainDigestBytes(DOMAINS.receipt, view).toString('hex'), createHash('sha256').update(viewHead).update(view).digest('hex'), `view, length ${view.length}`);
  }
  assert.equal(sha256Hex('é'), createHash('sha256').update('é', 'utf8').digest('hex'));
});

test('domainDigestOfText is the digest of the UTF-8 bytes', () => {
  const texts = [
    '',
    'a',
    '{"owner_id":"alice","agent_id":"claude","request":{}}',
    'é\u2028\u2029\u0000\u001f\u007f"\\',
    '\u{1F600}'.repeat(10),
    '\uD800 lone',
    'x'.repeat(Math.floor((64 * 1024) / 3)),
    'x'.repeat(Math.floor((64 * 1024) / 3) + 1),
    '\u{1F600}'.repeat(40_000),
  ];
  const want = (t: string) => referenceDomainDigest(DOMAINS.requestClaim, Buffer.from(t, 'utf8'));
  for (const t of texts) assert.equal(domainDigestOfText(DOMAINS.requestClaim, t), want(t), `text of ${t.length} units`);
  // Alternating lengths: nothing of one preimage reaches the next.
  for (let i = 0; i < 3; i++) {
    for (const t of [texts[6]!, texts[1]!, texts[3]!]) assert.equal(domainDigestOfText(DOMAINS.requestClaim, t), want(t));
    assert.equal(domainDigest(DOMAINS.receipt, Buffer.from('ab')), referenceDomainDigest(DOMAINS.receipt, Buffer.from('ab')));
  }
});
