// The hooks' hand-written stand-ins for regular expressions (src/core/ascii-pattern.ts and its users)
// against the RegExps they replace, on generated strings: lengths around every bound, valid strings with
// one character changed, and characters from every class the patterns care about (controls, DEL, C1,
// non-ASCII, line and paragraph separators, surrogate pairs).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asciiClass, asciiLowercase, AsciiRun, hasAsciiControl, hasNonAscii, HEX64_LOWER, keepOnly } from '../../src/core/ascii-pattern.js';
import { HOOK_ID, HOOK_ID_RE, ID, ID_RE, isRepository, REPOSITORY_RE } from '../../src/core/contract/paths.js';
import { isWorkspaceToken, WORKSPACE_TOKEN_RE } from '../../src/core/hub-client/answer.js';
import { projectAlias } from '../../src/core/treering/activation/alias.js';
import { CAPABILITY_PARTS, CLAIM } from '../../src/core/treering/activation/input.js';
import { ADAPTER_VERSION, BLOCK_ID, CLI_VERSION, HARNESS_ID } from '../../src/core/treering/activation/manifest.js';
import { SENSITIVE, sensitive } from '../../src/core/treering/activation/preflight.js';
import { HARNESS_DIR, HARNESS_NAME, newReceiptId, RECEIPT_ID, RFC3339_UTC, rfc3339Seconds } from '../../src/core/treering/activation/receipts.js';
import { HEX64, SAFE_ID } from '../../src/core/treering/activation/validate.js';
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
    ['ID', ID, ID_RE.source],
    ['HOOK_ID', HOOK_ID, HOOK_ID_RE.source],
    ['HEX64_LOWER', HEX64_LOWER, '^[0-9a-f]{64}$'],
    ['treering HEX64', HEX64 as AsciiRun, '^[0-9a-f]{64}$'],
    ['SAFE_ID', SAFE_ID as AsciiRun, '^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$'],
    ['HARNESS_ID', HARNESS_ID, '^[a-z][a-z0-9-]{0,31}$'],
    ['HARNESS_DIR', HARNESS_DIR, '^[a-z][a-z0-9-]{0,31}$'],
    ['HARNESS_NAME', HARNESS_NAME, '^[a-z][a-z0-9-]*$'],
    ['CLI_VERSION', CLI_VERSION, '^[0-9A-Za-z.+-]+$'],
    ['BLOCK_ID', BLOCK_ID, '^[A-Za-z0-9._-]+$'],
    ['ADAPTER_VERSION', ADAPTER_VERSION, '^[0-9A-Za-z.-]+$'],
    ['RECEIPT_ID', RECEIPT_ID, '^[A-Za-z0-9._-]+$'],
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

test('hasAsciiControl, hasNonAscii and keepOnly agree with the RegExps they replace', () => {
  const inputs = samples(7, 'ab c', [0, 1, 3, 16], ['plain', 'tab\there']);
  agree('hasAsciiControl', hasAsciiControl, (s) => /[\u0000-\u001f\u007f]/.test(s), inputs);
  agree('hasNonAscii', hasNonAscii, (s) => /[^\x00-\x7f]/.test(s), inputs);
  const kind = asciiClass('A-Za-z0-9_-');
  agree('keepOnly', (s) => keepOnly(s, kind), (s) => s.replace(/[^A-Za-z0-9_-]/g, ''), inputs);
  agree('asciiLowercase', asciiLowercase, (s) => (/[^\x00-\x7f]/.test(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s.toLowerCase()), inputs);
});

test('isRepository is REPOSITORY_RE plus its dot-segment rule', () => {
  const inputs = samples(11, 'acme/demo._-', [0, 1, 3, 9, 64, 65, 66, 100, 164, 165, 166], [
    'acme/demo', 'a/b', '_x/_y', `${'a'.repeat(64)}/${'b'.repeat(100)}`, `${'a'.repeat(65)}/b`, `a/${'b'.repeat(101)}`, './x', 'x/..', 'a//b', 'a/b/c', '/a', 'a/',
  ]);
  agree('isRepository', isRepository, (s) => REPOSITORY_RE.test(s) && !s.split('/').some((seg) => seg === '.' || seg === '..'), inputs);
});

test('isWorkspaceToken agrees with the workspace token RegExp', () => {
  const token = `agentscm_wt1_${'0123456789abcdef01234567'}_${'A'.repeat(20)}-_${'z9'.repeat(10)}x`;
  assert.equal(token.length, 81);
  assert.ok(isWorkspaceToken(token));
  agree('isWorkspaceToken', isWorkspaceToken, (s) => WORKSPACE_TOKEN_RE.test(s), samples(13, 'agentscm_wt1_0a9fAZ-', [80, 81, 82], [token]));
});

test('the hook screen\'s capability and claim checks are the alternations they spell out', () => {
  const capability = /capab|token|authori[sz]|secret|passw|credential|coordinator|api[_-]?key|cookie|bearer/;
  const claim = /^(?:store|store_id|store_root|root|memory_root|project_root|project_root_fingerprint|bridge|bridge_fingerprint|bridge_path|harness|harness_id|adapter_version|receipt|receipt_id|receipt_state|state|manifest|descriptor)$/;
  const words = ['session_id', 'cwd', 'x_api-key', 'apikey', 'api_key', 'api-key', 'apixkey', 'authorisation', 'authorization', 'authoriy', 'cookies', 'my_token', 'coordinator_id', 'passwd', 'store', 'stores', 'root', 'state', 'states', 'receipt_state', 'descriptor', 'bearer'];
  const inputs = [...words, ...samples(19, 'abcdeikmnoprstuwy_-', [3, 6, 12], words, 200)];
  agree('capability', (k) => CAPABILITY_PARTS.some((p) => k.includes(p)), (k) => capability.test(k), inputs);
  agree('claim', (k) => CLAIM.has(k), (k) => claim.test(k), inputs);
});

test('secret screening with needles answers what the RegExps alone answer', () => {
  const secrets = [
    '-----BEGIN RSA PRIVATE KEY-----', 'password: hunter2', 'API-KEY = x', 'Bearer= abc', 'sk-0123456789abcdefXYZ', 'xoxb_0123456789abcdefgh', 'ghp-0123456789ABCDEFgh',
    'AKIA0123456789ABCDEF', 'id AKIA0123456789ABCDEFG', 'token=abc', 'Credentials :x', 'PK_0123456789abcdef0', `${'A'.repeat(40)}`,
  ];
  const inputs = [...secrets, ...samples(23, 'skpghoxabAKIA0123456789-_:= ', [10, 30, 60], secrets, 600)];
  for (const count of [4, SENSITIVE.length]) {
    agree(`sensitive/${count}`, (s) => sensitive(s, count), (s) => SENSITIVE.slice(0, count).some((p) => p.re.test(p.caseless ? asciiLowercase(s) : s)), inputs);
  }
});

test('receipt times and ids: the written-out forms equal what the RegExps gave', () => {
  const rfc = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$/;
  const dates = [0, 1, 999, 1000, Date.UTC(2026, 10, 30, 5, 40, 1, 123), Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(10000, 0, 1), Date.UTC(-1, 0, 1), -1].map((t) => new Date(t));
  for (const d of dates) {
    assert.equal(rfc3339Seconds(d), d.toISOString().replace(/\.[0-9]{3}Z$/, 'Z'));
    const id = newReceiptId(d);
    assert.equal(id.slice(0, -13), `r-${d.toISOString().replace(/[-:]/g, '').replace('.', '')}`);
    assert.match(id.slice(-13), /^-[0-9a-f]{12}$/);
  }
  agree('RFC3339_UTC', (s) => RFC3339_UTC.test(s), (s) => rfc.test(s), samples(29, '0123456789-T:Z', [19, 20, 21], dates.map((d) => rfc3339Seconds(d))));
});

test('projectAlias is the RegExp replacement it writes out', () => {
  const inputs = samples(31, 'ab -_.', [0, 1, 2, 5, 12], ['my project', '--x--', 'ünïcode name', 'a😀b', '...', ' - ']);
  agree('projectAlias', projectAlias, (s) => s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'project', inputs);
});
