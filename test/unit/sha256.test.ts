// SHA-256 in TypeScript (src/core/crypto/sha256.ts) against FIPS 180-4 vectors and node:crypto, and
// the hasher that moves to node:crypto once a process hashes in bulk: the digests must not depend on
// which implementation ran.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { Sha256, sha256, sha256Hasher, SWITCH_BYTES } from '../../src/core/crypto/sha256.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

test('FIPS 180-4 vectors', () => {
  const vectors: [string | Buffer, string][] = [
    ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    ['abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq', '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1'],
    [
      'abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu',
      'cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1',
    ],
    [Buffer.alloc(1_000_000, 'a'), 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0'],
  ];
  for (const [input, want] of vectors) {
    const bytes = typeof input === 'string' ? Buffer.from(input, 'ascii') : input;
    assert.equal(hex(new Sha256().update(bytes).digest()), want, `${bytes.length} bytes`);
  }
});

test('every length around the block and padding boundaries, in any split, equals node:crypto', () => {
  const data = randomBytes(1100);
  for (let len = 0; len <= 300; len++) {
    const part = data.subarray(0, len);
    const want = createHash('sha256').update(part).digest('hex');
    assert.equal(hex(new Sha256().update(part).digest()), want, `length ${len}`);
    const cut = (len * 7) % (len + 1);
    assert.equal(hex(new Sha256().update(part.subarray(0, cut)).update(part.subarray(cut)).digest()), want, `length ${len} split at ${cut}`);
  }
  const one = new Sha256();
  for (let i = 0; i < data.length; i++) one.update(data.subarray(i, i + 1));
  assert.equal(hex(one.digest()), createHash('sha256').update(data).digest('hex'));
});

test('the hasher gives the same digests before and after it switches to node:crypto', () => {
  const small = randomBytes(1000);
  const want = createHash('sha256').update(small).digest('hex');
  assert.equal(hex(sha256(small)), want);
  assert.ok(sha256Hasher(small.length) instanceof Sha256, 'small amounts are hashed in TypeScript');
  const big = randomBytes(SWITCH_BYTES + 1);
  assert.equal(hex(sha256(big)), createHash('sha256').update(big).digest('hex'));
  assert.ok(!(sha256Hasher(small.length) instanceof Sha256), 'after bulk hashing the process uses node:crypto');
  assert.equal(hex(sha256(small)), want);
});
