// Domain-separated SHA-256 (src/core/crypto/digest.ts) against the rule written out independently.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DOMAINS, domainDigest, domainDigestBytes, domainPreimage } from '../../src/core/crypto/digest.js';
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
