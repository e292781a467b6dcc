// Ed25519 (src/core/crypto/ed25519.ts): RFC 8032 vectors, strict (non-ZIP215) verification, public-key
// parsing, and agreement with node:crypto's own Ed25519 (OpenSSL), an independent implementation.

import assert from 'node:assert/strict';
import { createPrivateKey, sign as nodeSign, verify as nodeVerify } from 'node:crypto';
import { test } from 'node:test';
import * as ed from '@noble/ed25519';
import { generateKeyPair, parsePublicKeyHex, parseSignatureHex, publicKeyFromSeed, sign, toHex, verifyStrict } from '../../src/core/crypto/ed25519.js';
import { AgentscmError } from '../../src/core/errors.js';
import { nodePublicKey } from '../support/crypto.js';

const h = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));
const b64u = (b: Uint8Array) => Buffer.from(b).toString('base64url');

/** RFC 8032 section 7.1, TEST 1, 2 and 3 (secret key, public key, message, signature). */
const RFC8032 = [
  {
    seed: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    pub: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    msg: '',
    sig: 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
  },
  {
    seed: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    pub: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    msg: '72',
    sig: '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
  },
  {
    seed: 'c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7',
    pub: 'fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025',
    msg: 'af82',
    sig: '6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a',
  },
];

/** The group order L. */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const P = 2n ** 255n - 19n;
const le32 = (n: bigint) => {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return out;
};
const fromLe = (b: Uint8Array) => b.reduceRight((acc, x) => (acc << 8n) | BigInt(x), 0n);

/**
 * The 8 points of order dividing 8 (canonical encodings), checked independently: each decodes, 8P is the
 * identity, and they are pairwise distinct.
 */
const SMALL_ORDER = [
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
];
/** Non-canonical encodings of small-order points: y + p, or x = 0 with the sign bit set. */
const NON_CANONICAL_SMALL = [
  'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // y = 1 + p (identity)
  'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // y = 0 + p
  'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
  '0100000000000000000000000000000000000000000000000000000000000080', // identity, sign bit set
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff', // y = -1, sign bit set
];
/** R = identity, S = 0: the classic forgery that permissive verifiers accept under any small-order key. */
const IDENTITY_FORGERY = h(SMALL_ORDER[0] + '00'.repeat(32));

function badKey(hex: string, why: string): void {
  assert.throws(() => parsePublicKeyHex(hex), (e: unknown) => e instanceof AgentscmError && e.kind === 'BAD_INPUT' && e.code === 'BAD_PUBLIC_KEY', why);
}

test('RFC 8032 test vectors: public key, signature, verification', () => {
  for (const v of RFC8032) {
    assert.equal(toHex(publicKeyFromSeed(h(v.seed))), v.pub);
    assert.equal(toHex(sign(h(v.msg), h(v.seed))), v.sig);
    assert.equal(verifyStrict(h(v.sig), h(v.msg), h(v.pub)), true);
    assert.deepEqual(parsePublicKeyHex(v.pub), h(v.pub));
    // Any flipped bit of message, signature or key fails.
    assert.equal(verifyStrict(h(v.sig), h(v.msg + '00'), h(v.pub)), false);
    const sig = h(v.sig);
    sig[10]! ^= 1;
    assert.equal(verifyStrict(sig, h(v.msg), h(v.pub)), false);
    const pub = h(v.pub);
    pub[0]! ^= 1;
    assert.equal(verifyStrict(h(v.sig), h(v.msg), pub), false);
  }
});

test('node:crypto agrees: its signatures verify here, ours verify there', () => {
  for (const v of RFC8032) {
    const priv = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: b64u(h(v.seed)), x: b64u(h(v.pub)) }, format: 'jwk' });
    assert.equal(nodeSign(null, h(v.msg), priv).toString('hex'), v.sig);
  }
  const kp = generateKeyPair();
  const msg = h('00'.repeat(32));
  const sig = sign(msg, kp.secretKey);
  assert.equal(nodeVerify(null, msg, nodePublicKey(kp.publicKey), sig), true);
  assert.equal(verifyStrict(sig, msg, kp.publicKey), true);
});

test('non-canonical S (S + L) is rejected although it satisfies the group equation', () => {
  const v = RFC8032[0]!;
  const sig = h(v.sig);
  const s = fromLe(sig.subarray(32));
  assert.ok(s + L < 2n ** 256n);
  const malleated = new Uint8Array([...sig.subarray(0, 32), ...le32(s + L)]);
  assert.equal(verifyStrict(malleated, h(v.msg), h(v.pub)), false);
  assert.equal(nodeVerify(null, h(v.msg), nodePublicKey(h(v.pub)), malleated), false, 'OpenSSL also rejects it');
  const maxS = new Uint8Array([...sig.subarray(0, 32), ...le32(2n ** 256n - 1n)]);
  assert.equal(verifyStrict(maxS, h(v.msg), h(v.pub)), false);
});

test('the 8 small-order points are refused as keys; the forgery that ZIP-215 accepts fails here', () => {
  const distinct = new Set<string>();
  for (const hex of SMALL_ORDER) {
    const point = ed.Point.fromBytes(h(hex));
    assert.ok(point.multiply(8n).equals(ed.Point.ZERO), `${hex} has order dividing 8`);
    distinct.add(point.toHex());
    badKey(hex, `small-order ${hex}`);
    for (const msg of [h(''), h('00'.repeat(32))]) {
      assert.equal(ed.verify(IDENTITY_FORGERY, msg, h(hex), { zip215: true }), true, 'the permissive verifier is fooled (control)');
      assert.equal(verifyStrict(IDENTITY_FORGERY, msg, h(hex)), false, `strict verification refuses ${hex}`);
    }
  }
  assert.equal(distinct.size, 8);
});

test('non-canonical public-key encodings are refused', () => {
  for (const hex of NON_CANONICAL_SMALL) {
    badKey(hex, `non-canonical ${hex}`);
    assert.equal(verifyStrict(IDENTITY_FORGERY, h(''), h(hex)), false, `forgery under ${hex}`);
  }
  // y = p + k for k = 2..18 with either sign: whenever the permissive decoder finds a point, we refuse.
  let decodable = 0;
  for (let k = 2n; k <= 18n; k++) {
    for (const sign of [0n, 1n]) {
      const hex = toHex(le32((P + k) | (sign << 255n)));
      try {
        ed.Point.fromBytes(h(hex), true);
        decodable++;
      } catch {
        // not a point at all
      }
      badKey(hex, `y = p + ${k}`);
    }
  }
  assert.ok(decodable > 0, 'some of them are points under ZIP-215 decoding');
  badKey(toHex(le32(2n)), 'y = 2 is not on the curve');
});

test('hex parsing: exact lengths, lowercase only', () => {
  const pub = RFC8032[0]!.pub;
  for (const s of [pub.slice(0, 62), pub + '00', pub.toUpperCase(), `0x${pub.slice(2)}`, ` ${pub.slice(1)}`, '', pub.slice(0, 63) + 'g']) badKey(s, JSON.stringify(s));
  const sig = RFC8032[0]!.sig;
  assert.deepEqual(parseSignatureHex(sig), h(sig));
  for (const s of [sig.slice(0, 126), sig + '00', sig.toUpperCase(), sig.slice(0, 127), '']) {
    assert.throws(() => parseSignatureHex(s), (e: unknown) => e instanceof AgentscmError && e.code === 'BAD_SIGNATURE', JSON.stringify(s));
  }
  assert.equal(verifyStrict(h(sig).subarray(0, 63), h(''), h(pub)), false, 'short signature');
  assert.equal(verifyStrict(h(sig), h(''), h(pub).subarray(0, 31)), false, 'short key');
});
