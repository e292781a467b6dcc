// src/core/bytes.ts against Buffer's own readers and writers, including the edges the formats meet:
// lengths above 2^32 and up to 2^53 - 1, negative record integers of every width, every byte in hex.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { compareRange, hexOf, intBE, putU64be, u16be, u32be } from '../../src/core/bytes.js';

test('u16be, u32be and intBE read what Buffer reads', () => {
  const b = randomBytes(4096);
  for (let off = 0; off < b.length - 8; off++) {
    assert.equal(u16be(b, off), b.readUInt16BE(off));
    assert.equal(u32be(b, off), b.readUInt32BE(off));
    assert.equal(u32be(b, off) | 0, b.readInt32BE(off));
    for (const n of [1, 2, 3, 4, 6]) assert.equal(intBE(b, off, n), b.readIntBE(off, n), `${n} bytes at ${off}`);
  }
  const edges = Buffer.from([0x80, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff]);
  for (let off = 0; off <= edges.length - 6; off++) for (const n of [1, 2, 3, 4, 6]) assert.equal(intBE(edges, off, n), edges.readIntBE(off, n));
});

test('putU64be writes what writeBigUInt64BE writes, beyond 2^32 and up to 2^53 - 1', () => {
  for (const n of [0, 1, 255, 256, 0xffff_ffff, 0x1_0000_0000, 0x1_0000_0001, 2 ** 40 + 12345, Number.MAX_SAFE_INTEGER]) {
    const got = Buffer.alloc(10, 0xaa);
    putU64be(got, 1, n);
    const want = Buffer.alloc(10, 0xaa);
    want.writeBigUInt64BE(BigInt(n), 1);
    assert.deepEqual(got, want, String(n));
  }
});

test('hexOf is Buffer\'s lowercase hex', () => {
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  assert.equal(hexOf(all), all.toString('hex'));
  assert.equal(hexOf(new Uint8Array(0)), '');
  const r = randomBytes(32);
  assert.equal(hexOf(r), r.toString('hex'));
});

test('compareRange orders as Buffer#compare does (bytes first, then length)', () => {
  const src = Buffer.from('acme/demo\u00ffz');
  const targets = ['acme/demo', 'acme/dem', 'acme/demo\u00ff', 'acme/demp', 'acme/dema', '', 'b', 'acme/demo\u00ffz', 'acme/demo\u00ffzz'].map((t) => Buffer.from(t));
  for (let start = 0; start <= src.length; start++) {
    for (let end = start; end <= src.length; end++) {
      for (const t of targets) assert.equal(compareRange(src, start, end, t), src.compare(t, 0, t.length, start, end), `${start}..${end} vs ${t.toString()}`);
    }
  }
  for (let i = 0; i < 500; i++) {
    const a = randomBytes(1 + (i % 7));
    const b = randomBytes(i % 5);
    assert.equal(compareRange(a, 0, a.length, b), a.compare(b));
  }
});
