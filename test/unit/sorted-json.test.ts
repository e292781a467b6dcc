// canonicalSortedJson (one pass, no copy) against its definition, canonicalJson of a key-sorted deep
// copy: the same text for every value, and the same refusal where the definition refuses.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson, canonicalSortedJson, sortedCopy, type JsonValue } from '../../src/core/canonical/json.js';

const outcome = (f: () => string): string => {
  try {
    return `ok:${f()}`;
  } catch (e) {
    return `throws:${(e as Error).name}:${(e as Error).message}`;
  }
};

test('canonicalSortedJson is canonicalJson of the key-sorted copy', () => {
  const protoMember = JSON.parse('{"__proto__":{"b":1},"a":2}') as JsonValue;
  const nullProto = Object.assign(Object.create(null) as Record<string, JsonValue>, { z: 1, a: [true, null] });
  const values: JsonValue[] = [
    null,
    true,
    0,
    -7,
    Number.MAX_SAFE_INTEGER,
    18446744073709551615n,
    '',
    'é\u2028\u0000"\\/',
    [],
    {},
    { b: 1, a: 2, c: { y: [3, { q: 'x', p: 'y' }], x: null } },
    { '\u{1F600}': 1, '\uFFFD': 2, é: 3, z: 4, Z: 5, '': 6 },
    // Snake-case keys only (the shortcut), and one other key among them (the full checks).
    { b_1: 1, b1: 2, b: 3, _a: 4, a_: 5, a__b: 6, zz: { y_2: [], y_10: null } },
    { b_1: 1, b1: 2, B: 3, a: { c: 1, 'd-e': 2 } },
    JSON.parse('{"z":1,"__proto__":2,"a_b":3}') as JsonValue,
    { operation: 'claim', request_id: 'r', subject: { repository: 'acme/demo', profile: 'default', change_version: 1 }, executor_id: null, fence: 9007199254740993n },
    nullProto,
    protoMember,
    // Refused alike: integer-like keys, lone surrogates, non-integers, unsafe integers.
    { 1: 'a', b: 2 },
    { a: '\uD800' },
    { '\uDC00': 1 },
    { a: 1.5 },
    [2 ** 53],
    { a: [1, { b: Number.NaN }] },
  ];
  for (const v of values) {
    assert.equal(outcome(() => canonicalSortedJson(v)), outcome(() => canonicalJson(sortedCopy(v))), JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x)));
  }
  // Byte order, not UTF-16 order: U+1F600 sorts after U+FFFD.
  assert.equal(canonicalSortedJson({ '\u{1F600}': 1, '\uFFFD': 2 }), '{"\uFFFD":2,"\u{1F600}":1}');
});
