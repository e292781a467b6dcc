// Strict JSON decoding (src/core/canonical/json.ts): what JSON.parse accepts but the contract must not,
// lossless u64 integers, bounds, and the serde_json-compatible encoder.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson, compareUtf8, outputJson, parseStrictJson, quote, type JsonValue } from '../../src/core/canonical/json.js';
import { AgentscmError } from '../../src/core/errors.js';

const parse = (s: string | Uint8Array, extra: { maxDepth?: number; integersOnly?: boolean; maxBytes?: number } = {}) =>
  parseStrictJson(s, { maxBytes: 1 << 20, what: 'doc', ...extra });

function refused(input: string | Uint8Array, code: string, why: string, extra: Parameters<typeof parse>[1] = {}): void {
  assert.throws(
    () => parse(input, extra),
    (e: unknown) => e instanceof AgentscmError && e.kind === 'BAD_INPUT' && e.code === code,
    `${why}: expected BAD_INPUT ${code}`,
  );
}

test('duplicate keys are refused at any depth, also when spelled with escapes', () => {
  refused('{"a":1,"a":1}', 'DUPLICATE_KEY', 'top level');
  refused('{"a":{"b":1,"c":2,"b":3}}', 'DUPLICATE_KEY', 'nested object');
  refused('[{"x":1},{"y":2,"y":2}]', 'DUPLICATE_KEY', 'object in an array');
  refused('{"k":1,"\\u006b":2}', 'DUPLICATE_KEY', 'escape spelling');
  assert.deepEqual(parse('{"a":{"b":1},"b":{"a":1}}'), { a: { b: 1 }, b: { a: 1 } }, 'same key in different objects is fine');
  assert.deepEqual(parse('{"a":1,"A":2}'), { a: 1, A: 2 }, 'keys are case-sensitive');
});

test('a "__proto__" key is plain data, never a prototype change', () => {
  const v = parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, JsonValue>;
  assert.equal(Object.getPrototypeOf(v), Object.prototype);
  assert.ok(Object.hasOwn(v, '__proto__'));
  assert.deepEqual(Object.keys(v), ['__proto__', 'a']);
  assert.equal((v as { polluted?: unknown }).polluted, undefined);
  assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  assert.equal(canonicalJson(v), '{"__proto__":{"polluted":true},"a":1}');
  refused('{"__proto__":1,"__proto__":2}', 'DUPLICATE_KEY', 'duplicate __proto__');
});

test('integers are exact: u64 max and 2^53+1 survive parse -> encode', () => {
  for (const text of ['18446744073709551615', '9007199254740993', '-9007199254740993', '123456789012345678901234567890']) {
    const v = parse(text);
    assert.equal(typeof v, 'bigint', text);
    assert.equal(canonicalJson(v), text);
  }
  assert.equal(parse('9007199254740991'), Number.MAX_SAFE_INTEGER);
  assert.equal(typeof parse('9007199254740991'), 'number');
  const doc = '{"fence":18446744073709551615,"list":[9007199254740993,1,0]}';
  assert.equal(canonicalJson(parse(doc)), doc);
  assert.notEqual(JSON.stringify(JSON.parse(doc)), doc, 'JSON.parse would have lost precision');
});

test('integersOnly refuses fractions, exponents and -0 (serde_json refuses them for integer fields)', () => {
  for (const t of ['1.0', '1e0', '1E+2', '0.5', '-0', '[1,2.0]']) refused(t, 'INVALID_JSON', t, { integersOnly: true });
  assert.deepEqual(parse('[0,1,-1]', { integersOnly: true }), [0, 1, -1]);
  assert.equal(parse('1.5'), 1.5, 'allowed without integersOnly');
});

test('nesting depth is bounded', () => {
  assert.doesNotThrow(() => parse('['.repeat(64) + ']'.repeat(64)));
  refused('['.repeat(65) + ']'.repeat(65), 'INVALID_JSON', 'depth 65');
  refused('{"a":'.repeat(65) + '1' + '}'.repeat(65), 'INVALID_JSON', 'objects, depth 65');
  assert.doesNotThrow(() => parse('[[[1]]]', { maxDepth: 3 }));
  refused('[[[[1]]]]', 'INVALID_JSON', 'custom depth', { maxDepth: 3 });
  // Far beyond the bound: refused without exhausting the stack.
  refused('['.repeat(200_000), 'INVALID_JSON', 'deep garbage');
});

test('the size bound counts UTF-8 bytes and is checked before parsing', () => {
  assert.doesNotThrow(() => parse('"\u00e9\u00e9"', { maxBytes: 6 }));
  refused('"\u00e9\u00e9"', 'TOO_LARGE', 'two 2-byte characters + quotes = 6 bytes > 5', { maxBytes: 5 });
  refused('{{{{{{{{{{', 'TOO_LARGE', 'invalid and oversized: size answers first', { maxBytes: 4 });
  refused(new Uint8Array([0xff, 0xff, 0xff]), 'TOO_LARGE', 'invalid UTF-8 and oversized', { maxBytes: 2 });
});

test('invalid UTF-8, BOMs and surrogates are refused', () => {
  refused(new Uint8Array([0x22, 0xff, 0x22]), 'INVALID_UTF8', '0xff byte');
  refused(new Uint8Array([0x22, 0xc0, 0xaf, 0x22]), 'INVALID_UTF8', 'overlong encoding');
  refused(new Uint8Array([0x22, 0xed, 0xa0, 0x80, 0x22]), 'INVALID_UTF8', 'encoded surrogate');
  refused(new Uint8Array([0x22, 0xe2, 0x82, 0x22]), 'INVALID_UTF8', 'truncated sequence');
  refused(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), 'INVALID_JSON', 'UTF-8 BOM');
  refused('\ufeff{}', 'INVALID_JSON', 'BOM in a string input');
  refused('"\\ud83d"', 'INVALID_JSON', 'escaped lone surrogate');
  refused('"\ud83d"', 'INVALID_JSON', 'raw lone surrogate in a string input');
  assert.equal(parse('"\\ud83d\\ude00"'), '\u{1F600}', 'an escaped surrogate pair is one emoji');
  assert.equal(parse(new Uint8Array(Buffer.from('"\u{1F600}\u2028"'))), '\u{1F600}\u2028');
  // A real U+FFFD is text like any other: only invalid bytes are refused, not the replacement character.
  assert.equal(parse(new Uint8Array(Buffer.from('"\ufffd"'))), '\ufffd');
  refused(new Uint8Array([0x22, 0xef, 0xbf, 0xbd, 0xff, 0x22]), 'INVALID_UTF8', 'U+FFFD then an invalid byte');
  refused(new Uint8Array([0x22, 0xf4, 0x90, 0x80, 0x80, 0x22]), 'INVALID_UTF8', 'beyond U+10FFFF');
  // A view into a larger buffer is decoded over its own bytes only.
  const big = Buffer.from('xx"ok"xx');
  assert.equal(parse(new Uint8Array(big.buffer, big.byteOffset + 2, 4)), 'ok');
});

test('trailing garbage and other non-JSON are refused', () => {
  for (const t of ['{} x', '{}{}', '1 2', '[1]]', '"a"b', '', ' ', '01', '+1', '.5', '1.', '1e', '-', 'NaN', 'Infinity', "'a'", '[1,]', '{"a":1,}',
    '{a:1}', 'tru', 'nul', '"\\x"', '"\\u12"', '"\\u12g4"', '"a\tb"', '"a\nb"', '"unterminated', '{"a" 1}', '[1 2]', '1e400', '/*c*/1']) {
    refused(t, 'INVALID_JSON', JSON.stringify(t));
  }
  assert.deepEqual(parse(' \t\r\n[1 , {"a" : null}] \n'), [1, { a: null }], 'insignificant whitespace is fine');
  assert.equal(parse('"\\/\\b\\f\\n\\r\\t\\"\\\\\\u00e9"'), '/\b\f\n\r\t"\\\u00e9');
});

test('canonicalJson writes serde_json compact bytes and refuses what no contract struct holds', () => {
  assert.equal(canonicalJson({ b: 1, a: [true, false, null, 'x'], c: {} }), '{"b":1,"a":[true,false,null,"x"],"c":{}}');
  assert.equal(canonicalJson([]), '[]');
  assert.equal(canonicalJson(-0), '0');
  assert.equal(quote('\u0000\u001f\u007f\u2028/'), '"\\u0000\\u001f\u007f\u2028/"');
  assert.throws(() => canonicalJson(1.5), TypeError);
  assert.throws(() => canonicalJson(Number.NaN), TypeError);
  assert.throws(() => canonicalJson(2 ** 53), TypeError, 'unsafe integers must arrive as bigint');
  assert.throws(() => canonicalJson({ a: undefined } as unknown as JsonValue), TypeError);
  assert.throws(() => quote('\ud800'), TypeError);
  assert.throws(() => canonicalJson({ b: 1, '1': 2 }), TypeError, 'integer-like keys lose their order in JS objects');
  assert.equal(canonicalJson({ b: 1, '01': 2, '-1': 3, '1.5': 4 }), '{"b":1,"01":2,"-1":3,"1.5":4}');
  assert.equal(outputJson({ b: 1, '1': 2 }), '{"1":2,"b":1}', 'output documents may hold such maps');
  assert.equal(outputJson({ a: undefined, b: 1.5, c: 2n ** 64n }), '{"b":1.5,"c":18446744073709551616}');
});

test('compareUtf8 sorts by UTF-8 bytes as Rust does, unlike the JS default sort', () => {
  const items = ['\u{1F600}', '\uFFFD', 'b', 'a', 'ab', '\u00e9', 'B', ''];
  const rust = [...items].sort(compareUtf8);
  assert.deepEqual(rust, ['', 'B', 'a', 'ab', 'b', '\u00e9', '\uFFFD', '\u{1F600}']);
  assert.deepEqual([...items].sort(), ['', 'B', 'a', 'ab', 'b', '\u00e9', '\u{1F600}', '\uFFFD'], 'UTF-16 order puts the emoji before U+FFFD');
  assert.equal(compareUtf8('x', 'x'), 0);
  // Property check against an encoder: random strings over ASCII, BMP (both sides of the surrogate
  // range) and astral code points, with a fixed-seed generator.
  let seed = 42;
  const rnd = (k: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % k);
  const pools = [[0x20, 0x7f], [0x80, 0x7ff], [0x800, 0xd7ff], [0xe000, 0xffff], [0x10000, 0x10ffff]] as const;
  const randomString = () =>
    Array.from({ length: rnd(5) }, () => {
      const [lo, hi] = pools[rnd(pools.length)]!;
      return String.fromCodePoint(lo + rnd(hi - lo + 1));
    }).join('');
  for (let i = 0; i < 5000; i++) {
    const a = randomString();
    const b = rnd(4) === 0 ? a + randomString() : randomString();
    assert.equal(Math.sign(compareUtf8(a, b)), Buffer.compare(Buffer.from(a), Buffer.from(b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  }
  assert.ok(compareUtf8('\uFFFD', '\u{1F600}') < 0);
});

test('the JSON.parse shortcut gives what the strict parser gives whenever it answers, and answers for the documents this project writes', async () => {
  const { parseSimple, parseStrictText } = await import('../../src/core/canonical/json.js');
  let seed = 7;
  const r = () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed / 4294967296;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const strings = ['', 'a', 'src/file.ts', 'é', '😀', '\ud800', 'x"y', 'tab\there', '__proto__', '1', '10', 'a:b', '\u2028', 'key'];
  const numbers = [0, 1, -1, 42, 2 ** 53 - 1, 2 ** 53, -(2 ** 53) + 1, 1.5, -0.25, 1e21, 1e-7, 123456789012345];
  const value = (depth: number): JsonValue => {
    const k = r();
    if (depth > 3 || k < 0.35) return pick<JsonValue>([null, true, false, pick(numbers), pick(strings)]);
    if (k < 0.6) return Array.from({ length: Math.floor(r() * 4) }, () => value(depth + 1));
    const o: Record<string, JsonValue> = {};
    for (let i = Math.floor(r() * 5); i > 0; i--) o[pick(strings)] = value(depth + 1);
    return o;
  };
  const mutations: ((t: string) => string)[] = [
    (t) => t,
    (t) => `${t}\n`,
    (t) => ` ${t}`,
    (t) => t.replace('1', '1.0'),
    (t) => t.replace('42', '4.2e1'),
    (t) => t.replace('0', '-0'),
    (t) => t.replace('{"', '{"a":1,"a":2,"'),
    (t) => t.replace('{"', '{"dup":1, "dup":1,"'),
    (t) => t.replace('"a"', '"\\u0061"'),
    (t) => t.replace(':', ' :'),
    (t) => t.replace(/\n/g, '\r\n'),
    (t) => t.replace('[', '[[[[[[[[[[').replace(']', ']]]]]]]]]]'),
    (t) => t.replace('123456789012345', '12345678901234567890'),
  ];
  let fast = 0;
  for (let i = 0; i < 3000; i++) {
    const v = value(0);
    const base = JSON.stringify(v, null, i % 2 === 0 ? undefined : 2);
    if (base === undefined) continue;
    const text = pick(mutations)(base);
    for (const [maxDepth, integersOnly] of [[64, false], [64, true], [3, false]] as const) {
      const quick = parseSimple(text, maxDepth, integersOnly);
      if (quick === undefined) continue;
      fast++;
      assert.deepEqual(quick, parseStrictText(text, maxDepth, integersOnly), JSON.stringify(text));
    }
  }
  assert.ok(fast > 2000, `the shortcut answered only ${fast} times`);
  const doc = { version: 1, entries: [{ path: 'a/b.ts', mode: 420, size: 12, sha256: 'ab'.repeat(32) }], note: 'é 😀' };
  for (const text of [canonicalJson(doc as unknown as JsonValue), `${JSON.stringify(doc, null, 2)}\n`]) assert.deepEqual(parseSimple(text, 64, true), doc);
});

test('UTF-8 is refused exactly when Buffer\'s decoder would have to replace a sequence', () => {
  let seed = 99;
  const r = () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed / 4294967296;
  };
  for (let i = 0; i < 50_000; i++) {
    const n = 1 + Math.floor(r() * 6);
    const b = Buffer.alloc(n);
    for (let k = 0; k < n; k++) {
      const x = r();
      // ASCII letters only (no quote, backslash or control), continuation bytes, and every lead-byte range.
      b[k] = x < 0.3 ? 0x61 + Math.floor(r() * 26) : x < 0.5 ? 0x80 + Math.floor(r() * 64) : x < 0.7 ? 0xc0 + Math.floor(r() * 32) : x < 0.85 ? 0xe0 + Math.floor(r() * 16) : 0xf0 + Math.floor(r() * 16);
    }
    const text = b.toString('utf8');
    const wellFormed = Buffer.from(text, 'utf8').equals(b);
    const doc = Buffer.concat([Buffer.from('"'), b, Buffer.from('"')]);
    if (wellFormed) assert.equal(parse(doc), text, b.toString('hex'));
    else refused(doc, 'INVALID_UTF8', b.toString('hex'));
  }
});
