// The stand-ins for regular expressions that remain (src/core/ascii-pattern.ts and the Stop hooks' HTTP
// client) against the RegExps they replace, on generated strings: lengths around every bound, valid strings with
// one character changed, and characters from every class the patterns care about (controls, DEL, C1,
// non-ASCII, line and paragraph separators, surrogate pairs).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asciiClass, AsciiRun, hasAsciiControl, HTTP_CONTENT_LENGTH, HTTP_TOKEN } from '../../src/core/ascii-pattern.js';
import { CONTENT_LENGTH, statusLineCode, TOKEN } from '../../src/core/hub-client/http1.js';
import { rng } from '../../bench/treering-populate.js';

const SPECIALS = ['\0', '\t', '\n', '\r', '\x1f', ' ', '\x7f', '\x80', '\x85', '\x9f', '\xa0', 'é', 'ß', '\u2028', '\u2029', '\u3000', '\ufeff', '😀', '\\', '[', ']', '^'];
const ASCII_PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');

/** Strings to try: random ones over `alphabet` (plus specials) at lengths around the bounds, and each `valid` string with one character replaced, inserted or removed. */
function samples(seed: number, alphabet: string, lengths: readonly number[], valid: readonly string[] = [], count = 400): string[] {
  const r = rng(seed);
  const pick = (s: string | readonly string[]) => s[Math.floor(r() * s.length)]!;
  const out: string[] = ['', ...valid];
  for (let i = 0; i < count; i++) {
    const n = lengths[i % lengths.length]!;
    let s = '';
    for (let k = 0; k < n; k++) s += r() < 0.03 ? pick(SPECIALS) : r() < 0.1 ? pick(ASCII_PRINTABLE) : pick(alphabet);
    out.push(s);
  }
  for (const v of valid) {
    for (let k = 0; k < Math.min(v.length, 80); k++) {
      const at = Math.floor(r() * v.length);
      const ch = r() < 0.5 ? pick(SPECIALS) : pick(ASCII_PRINTABLE);
      out.push(v.slice(0, at) + ch + v.slice(at + 1), v.slice(0, at) + ch + v.slice(at), v.slice(0, at) + v.slice(at + 1));
    }
    out.push(v + v, v.slice(1), v + '\n', '\n' + v);
  }
  return out;
}

function agree(name: string, ours: (s: string) => unknown, theirs: (s: string) => unknown, inputs: readonly string[]): void {
  for (const s of inputs) assert.deepEqual(ours(s), theirs(s), `${name}: ${JSON.stringify(s)}`);
}

test('asciiClass reads a RegExp class body: ranges, a literal "-" first or last, and refuses what it does not support', () => {
  const members = (spec: string) => [...asciiClass(spec)].flatMap((v, c) => (v ? [String.fromCharCode(c)] : [])).join('');
  assert.equal(members('a-c._:-'), '-.:_abc');
  assert.equal(members('-a'), '-a');
  assert.equal(members("!#$%&'*+.^_`|~0-9A-Za-z-").length, 77);
  for (const bad of ['^a', 'a\\d', ']', 'é', 'z-a']) assert.throws(() => asciiClass(bad), /asciiClass/);
});

test('every AsciiRun agrees with the RegExp of its own source, and the named ones carry the source they replace', () => {
  const named: [string, AsciiRun, string][] = [
    ['HTTP_TOKEN', HTTP_TOKEN, "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"],
    ['HTTP_CONTENT_LENGTH', HTTP_CONTENT_LENGTH, '^[0-9]{1,15}$'],
    ['http TOKEN', TOKEN, "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"],
    ['CONTENT_LENGTH', CONTENT_LENGTH, '^[0-9]{1,15}$'],
  ];
  let seed = 1;
  for (const [name, run, source] of named) {
    assert.equal(run.source, source, name);
    const re = new RegExp(source);
    const valid = samples(seed++, 'abcdef0123456789', [1, 5, 64], [], 40).filter((s) => re.test(s));
    const inputs = samples(seed++, 'abcxyzABCXYZ0189._:@-+', [0, 1, 2, 31, 32, 33, 63, 64, 65, 127, 128, 129], [...valid, 'a', 'claude-code', '0.1.0', 'a'.repeat(64)]);
    agree(name, (s) => run.test(s), (s) => re.test(s), inputs);
  }
  // Counts of every form the constructor writes.
  for (const [rest, min, max, first] of [['a-c', 0, Infinity], ['a-c', 1, Infinity], ['a-c', 2, Infinity], ['a-c', 3, 3], ['a-c', 0, 2], ['a-c', 1, 1, 'x'], ['a-c', 2, Infinity, 'x-z']] as const) {
    const run = new AsciiRun(rest, min, max, first);
    const re = new RegExp(run.source);
    agree(run.source, (s) => run.test(s), (s) => re.test(s), samples(seed++, 'abcxyz', [0, 1, 2, 3, 4], [], 200));
  }
});

test('hasAsciiControl agrees with the RegExp it replaces', () => {
  const inputs = samples(7, 'ab c', [0, 1, 3, 16], ['plain', 'tab\there']);
  agree('hasAsciiControl', hasAsciiControl, (s) => /[\u0000-\u001f\u007f]/.test(s), inputs);
});

test('statusLineCode reads the status lines the RegExp reads, and refuses the rest', () => {
  const re = /^HTTP\/1\.[01] ([1-5][0-9]{2})(?: [^\r\n\0]*)?$/;
  const valid = ['HTTP/1.1 200 OK', 'HTTP/1.0 404', 'HTTP/1.1 599 ', 'HTTP/1.1 100 Continue', 'HTTP/1.1 503 Service Unavailable'];
  const inputs = samples(17, 'HTTP/1. 0123456789OK', [8, 11, 12, 13, 20], [...valid, 'HTTP/1.1 600 x', 'HTTP/1.2 200', 'HTTP/1.1 20', 'HTTP/1.1  200', 'HTTP/1.1 200\0', 'HTTP/1.1 200 a\rb']);
  agree('statusLineCode', statusLineCode, (s) => {
    const m = re.exec(s);
    return m ? Number(m[1]) : undefined;
  }, inputs);
});
