// Tree Ring's screens of host input against the RegExps they spell out: the secret shapes' needles (a
// text without any needle is not run against the pattern) and the claim key list.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CLAIM } from '../../src/core/treering/activation/input.js';
import { SENSITIVE, sensitive } from '../../src/core/treering/activation/preflight.js';
import { newReceiptId } from '../../src/core/treering/activation/receipts.js';
import { rng } from '../../bench/treering-populate.js';

/** `count` random strings over `alphabet` at the given lengths, and each of `valid` with one character changed. */
function samples(seed: number, alphabet: string, lengths: readonly number[], valid: readonly string[], count: number): string[] {
  const r = rng(seed);
  const pick = (s: string) => s[Math.floor(r() * s.length)]!;
  const out = ['', ...valid];
  for (let i = 0; i < count; i++) {
    let s = '';
    for (let k = 0; k < lengths[i % lengths.length]!; k++) s += r() < 0.05 ? pick('\0\n é😀:=') : pick(alphabet);
    out.push(s);
  }
  for (const v of valid) for (let k = 0; k < v.length; k++) out.push(v.slice(0, k) + pick(alphabet) + v.slice(k + 1), v.slice(0, k) + v.slice(k + 1));
  return out;
}

test('the claim check is the alternation it spells out', () => {
  const claim = /^(?:store|store_id|store_root|root|memory_root|project_root|project_root_fingerprint|bridge|bridge_fingerprint|bridge_path|harness|harness_id|adapter_version|receipt|receipt_id|receipt_state|state|manifest|descriptor)$/;
  const words = ['session_id', 'cwd', 'x_api-key', 'apikey', 'api_key', 'api-key', 'apixkey', 'authorisation', 'authorization', 'authoriy', 'cookies', 'my_token', 'coordinator_id', 'passwd', 'store', 'stores', 'root', 'state', 'states', 'receipt_state', 'descriptor', 'bearer'];
  for (const k of samples(19, 'abcdeikmnoprstuwy_-', [3, 6, 12], words, 200)) {
    assert.equal(CLAIM.has(k), claim.test(k), JSON.stringify(k));
  }
});

test('secret screening with needles answers what the RegExps alone answer', () => {
  const secrets = [
    '-----BEGIN RSA PRIVATE KEY-----', 'password: hunter2', 'API-KEY = x', 'Bearer= abc', 'sk-0123456789abcdefXYZ', 'xoxb_0123456789abcdefgh', 'ghp-0123456789ABCDEFgh',
    'AKIA0123456789ABCDEF', 'id AKIA0123456789ABCDEFG', 'token=abc', 'Credentials :x', 'PK_0123456789abcdef0', `${'A'.repeat(40)}`,
  ];
  for (const s of samples(23, 'skpghoxabAKIA0123456789-_:= ', [10, 30, 60], secrets, 600)) {
    for (const count of [4, SENSITIVE.length]) assert.equal(sensitive(s, count), SENSITIVE.slice(0, count).some((p) => p.re.test(s)), `${count}: ${JSON.stringify(s)}`);
  }
});

test('a receipt id is r-, the ISO time without "-", ":" and ".", and 12 hex digits', () => {
  const d = new Date(Date.UTC(2026, 10, 30, 5, 40, 1, 123));
  assert.match(newReceiptId(d), /^r-20261130T054001123Z-[0-9a-f]{12}$/);
  assert.notEqual(newReceiptId(d), newReceiptId(d));
});
