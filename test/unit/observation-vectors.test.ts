// Golden vectors for seed 000 "Observation signing bytes". The expected bytes and digests below were
// computed outside this code base (Python's json.dumps(obj, separators=(',', ':'), ensure_ascii=False),
// whose escaping was checked character by character against the seed's rules for U+0000..U+07FF,
// U+2028, U+2029, U+FEFF, U+FFFD, U+FFFF, U+1F600 and U+10FFFF, and hashlib.sha256 over
// domain || 0x00 || u64be(len) || bytes) and pasted here as literals. Never regenerate them from
// this code: a change that alters them is a change of the wire contract.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseStrictJson } from '../../src/core/canonical/json.js';
import {
  ASSERTION_MAX_BYTES,
  decodeAssertion,
  observationDigest,
  observationSigningBytes,
  validateAssertion,
} from '../../src/core/contract/assertion.js';
import { AgentscmError } from '../../src/core/errors.js';

interface Vector {
  input: string;
  inputRaw: string;
  signingBytesHex: string;
  signingBytesLength: number;
  digest: string;
}

// v1: agent assertion, executor null, empty findings and evidence arrays.
// v2: registered observation, fence = u64 max, registration_epoch = 2^53 + 1, executor_provenance present
//     (serialized as null), findings with C0 controls, quotes, backslashes, /, DEL, U+2028/U+2029,
//     emoji (incl. a ZWJ sequence), decomposed and precomposed é, CJK, an empty finding; three criteria.
// v3: fence = 2^53 + 1, registration_epoch = u64 max, two criteria in non-sorted order.
const VECTORS: Record<'v1' | 'v2' | 'v3', Vector> = {
  v1: {
    // input: keys in reverse order, indented, every non-ASCII character \u-escaped
    input: String.raw`{
 "executor_provenance": null,
 "criteria": [
  {
   "criterion": "tests-pass",
   "outcome": "passed",
   "findings": [],
   "evidence_digests": []
  }
 ],
 "outcome": "passed",
 "trust_class": "agent_assertion",
 "fence": 1,
 "executor": null,
 "agent": {
  "owner_id": "alice",
  "agent_id": "claude.code"
 },
 "execution_operation_id": "op-1",
 "request_id": "req-1",
 "attempt_digest": "2222222222222222222222222222222222222222222222222222222222222222",
 "attempt_id": "attempt-1",
 "task_digest": "1111111111111111111111111111111111111111111111111111111111111111",
 "task_id": "task-1",
 "version": 1
}`,
    // the same document as compact JSON with raw UTF-8
    inputRaw: String.raw`{"version":1,"task_id":"task-1","task_digest":"1111111111111111111111111111111111111111111111111111111111111111","attempt_id":"attempt-1","attempt_digest":"2222222222222222222222222222222222222222222222222222222222222222","request_id":"req-1","execution_operation_id":"op-1","agent":{"owner_id":"alice","agent_id":"claude.code"},"executor":null,"fence":1,"trust_class":"agent_assertion","outcome":"passed","criteria":[{"criterion":"tests-pass","outcome":"passed","findings":[],"evidence_digests":[]}],"executor_provenance":null}`,
    signingBytesHex:
      '7b2276657273696f6e223a312c227461736b5f6964223a227461736b2d31222c227461736b5f646967657374223a2231313131313131313131313131' +
      '313131313131313131313131313131313131313131313131313131313131313131313131313131313131313131313131313131222c22617474656d70' +
      '745f6964223a22617474656d70742d31222c22617474656d70745f646967657374223a22323232323232323232323232323232323232323232323232' +
      '32323232323232323232323232323232323232323232323232323232323232323232323232323232222c22726571756573745f6964223a227265712d' +
      '31222c22657865637574696f6e5f6f7065726174696f6e5f6964223a226f702d31222c226167656e74223a7b226f776e65725f6964223a22616c6963' +
      '65222c226167656e745f6964223a22636c617564652e636f6465227d2c226578656375746f72223a6e756c6c2c2266656e6365223a312c2274727573' +
      '745f636c617373223a226167656e745f617373657274696f6e222c226f7574636f6d65223a22706173736564222c226372697465726961223a5b7b22' +
      '637269746572696f6e223a2274657374732d70617373222c226f7574636f6d65223a22706173736564222c2266696e64696e6773223a5b5d2c226576' +
      '6964656e63655f64696765737473223a5b5d7d5d2c226578656375746f725f70726f76656e616e6365223a6e756c6c7d',
    signingBytesLength: 528,
    digest: 'aee63fff6e808e072d1b4a1efb5961337b22dd2ea5fb8ac503dd945322018f31',
  },
  v2: {
    // input: keys in reverse order, indented, every non-ASCII character \u-escaped
    input: String.raw`{
 "executor_provenance": {
  "observation_digest": "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
  "signature": "efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef"
 },
 "criteria": [
  {
   "criterion": "unit-tests",
   "outcome": "failed",
   "findings": [
    "ctl:\u0001|\u001f|\b|\t|\n|\f|\r|\u000b|\u007f",
    "quote\" backslash\\ slash/ \\u0041",
    "line\u2028para\u2029end",
    "emoji \ud83d\ude00 \ud83d\udc68\u200d\ud83d\udc69 e\u0301 \u00e9 \u65e5\u672c \u00fc\u00df",
    ""
   ],
   "evidence_digests": [
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "0000000000000000000000000000000000000000000000000000000000000000"
   ]
  },
  {
   "criterion": "lint",
   "outcome": "not_claimed",
   "findings": [],
   "evidence_digests": []
  },
  {
   "criterion": "review:1",
   "outcome": "uncertain",
   "findings": [
    "</script>"
   ],
   "evidence_digests": [
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
   ]
  }
 ],
 "outcome": "failed",
 "trust_class": "registered_executor_observation",
 "fence": 18446744073709551615,
 "executor": {
  "registration_id": "reg-3",
  "executor_id": "ci.runner",
  "registration_epoch": 9007199254740993,
  "verification_key_id": "abababababababababababababababababababababababababababababababab"
 },
 "agent": {
  "owner_id": "owner_1",
  "agent_id": "agent-2"
 },
 "execution_operation_id": "exec:op.42",
 "request_id": "result-7",
 "attempt_digest": "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
 "attempt_id": "A._:-z9",
 "task_digest": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
 "task_id": "repo:main.step-test",
 "version": 1
}`,
    // the same document as compact JSON with raw UTF-8
    inputRaw: String.raw`{"version":1,"task_id":"repo:main.step-test","task_digest":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","attempt_id":"A._:-z9","attempt_digest":"fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210","request_id":"result-7","execution_operation_id":"exec:op.42","agent":{"owner_id":"owner_1","agent_id":"agent-2"},"executor":{"registration_id":"reg-3","executor_id":"ci.runner","registration_epoch":9007199254740993,"verification_key_id":"abababababababababababababababababababababababababababababababab"},"fence":18446744073709551615,"trust_class":"registered_executor_observation","outcome":"failed","criteria":[{"criterion":"unit-tests","outcome":"failed","findings":["ctl:\u0001|\u001f|\b|\t|\n|\f|\r|\u000b|","quote\" backslash\\ slash/ \\u0041","line para end","emoji 😀 👨‍👩 é é 日本 üß",""],"evidence_digests":["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","0000000000000000000000000000000000000000000000000000000000000000"]},{"criterion":"lint","outcome":"not_claimed","findings":[],"evidence_digests":[]},{"criterion":"review:1","outcome":"uncertain","findings":["</script>"],"evidence_digests":["ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"]}],"executor_provenance":{"observation_digest":"cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd","signature":"efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef"}}`,
    signingBytesHex:
      '7b2276657273696f6e223a312c227461736b5f6964223a227265706f3a6d61696e2e737465702d74657374222c227461736b5f646967657374223a22' +
      '303132333435363738396162636465663031323334353637383961626364656630313233343536373839616263646566303132333435363738396162' +
      '63646566222c22617474656d70745f6964223a22412e5f3a2d7a39222c22617474656d70745f646967657374223a2266656463626139383736353433' +
      '323130666564636261393837363534333231306665646362613938373635343332313066656463626139383736353433323130222c22726571756573' +
      '745f6964223a22726573756c742d37222c22657865637574696f6e5f6f7065726174696f6e5f6964223a22657865633a6f702e3432222c226167656e' +
      '74223a7b226f776e65725f6964223a226f776e65725f31222c226167656e745f6964223a226167656e742d32227d2c226578656375746f72223a7b22' +
      '726567697374726174696f6e5f6964223a227265672d33222c226578656375746f725f6964223a2263692e72756e6e6572222c227265676973747261' +
      '74696f6e5f65706f6368223a393030373139393235343734303939332c22766572696669636174696f6e5f6b65795f6964223a226162616261626162' +
      '6162616261626162616261626162616261626162616261626162616261626162616261626162616261626162616261626162616261626162227d2c22' +
      '66656e6365223a31383434363734343037333730393535313631352c2274727573745f636c617373223a22726567697374657265645f657865637574' +
      '6f725f6f62736572766174696f6e222c226f7574636f6d65223a226661696c6564222c226372697465726961223a5b7b22637269746572696f6e223a' +
      '22756e69742d7465737473222c226f7574636f6d65223a226661696c6564222c2266696e64696e6773223a5b2263746c3a5c75303030317c5c753030' +
      '31667c5c627c5c747c5c6e7c5c667c5c727c5c75303030627c7f222c2271756f74655c22206261636b736c6173685c5c20736c6173682f205c5c7530' +
      '303431222c226c696e65e280a870617261e280a9656e64222c22656d6f6a6920f09f988020f09f91a8e2808df09f91a92065cc8120c3a920e697a5e6' +
      '9cac20c3bcc39f222c22225d2c2265766964656e63655f64696765737473223a5b226161616161616161616161616161616161616161616161616161' +
      '6161616161616161616161616161616161616161616161616161616161616161616161616161222c2230303030303030303030303030303030303030' +
      '303030303030303030303030303030303030303030303030303030303030303030303030303030303030303030225d7d2c7b22637269746572696f6e' +
      '223a226c696e74222c226f7574636f6d65223a226e6f745f636c61696d6564222c2266696e64696e6773223a5b5d2c2265766964656e63655f646967' +
      '65737473223a5b5d7d2c7b22637269746572696f6e223a227265766965773a31222c226f7574636f6d65223a22756e6365727461696e222c2266696e' +
      '64696e6773223a5b223c2f7363726970743e225d2c2265766964656e63655f64696765737473223a5b22666666666666666666666666666666666666' +
      '66666666666666666666666666666666666666666666666666666666666666666666666666666666666666666666225d7d5d2c226578656375746f72' +
      '5f70726f76656e616e6365223a6e756c6c7d',
    signingBytesLength: 1278,
    digest: 'd4794af82eb82f3cc293d9ac802664ea81542f4751593c85e1c9678f03244a5a',
  },
  v3: {
    // input: keys in reverse order, indented, every non-ASCII character \u-escaped
    input: String.raw`{
 "executor_provenance": null,
 "criteria": [
  {
   "criterion": "c",
   "outcome": "passed",
   "findings": [],
   "evidence_digests": []
  },
  {
   "criterion": "b",
   "outcome": "failed",
   "findings": [
    "x"
   ],
   "evidence_digests": []
  }
 ],
 "outcome": "uncertain",
 "trust_class": "registered_executor_observation",
 "fence": 9007199254740993,
 "executor": {
  "registration_id": "r",
  "executor_id": "e",
  "registration_epoch": 18446744073709551615,
  "verification_key_id": "k"
 },
 "agent": {
  "owner_id": "alice",
  "agent_id": "claude.code"
 },
 "execution_operation_id": "op-1",
 "request_id": "req-1",
 "attempt_digest": "2222222222222222222222222222222222222222222222222222222222222222",
 "attempt_id": "attempt-1",
 "task_digest": "1111111111111111111111111111111111111111111111111111111111111111",
 "task_id": "task-1",
 "version": 1
}`,
    // the same document as compact JSON with raw UTF-8
    inputRaw: String.raw`{"version":1,"task_id":"task-1","task_digest":"1111111111111111111111111111111111111111111111111111111111111111","attempt_id":"attempt-1","attempt_digest":"2222222222222222222222222222222222222222222222222222222222222222","request_id":"req-1","execution_operation_id":"op-1","agent":{"owner_id":"alice","agent_id":"claude.code"},"executor":{"registration_id":"r","executor_id":"e","registration_epoch":18446744073709551615,"verification_key_id":"k"},"fence":9007199254740993,"trust_class":"registered_executor_observation","outcome":"uncertain","criteria":[{"criterion":"c","outcome":"passed","findings":[],"evidence_digests":[]},{"criterion":"b","outcome":"failed","findings":["x"],"evidence_digests":[]}],"executor_provenance":null}`,
    signingBytesHex:
      '7b2276657273696f6e223a312c227461736b5f6964223a227461736b2d31222c227461736b5f646967657374223a2231313131313131313131313131' +
      '313131313131313131313131313131313131313131313131313131313131313131313131313131313131313131313131313131222c22617474656d70' +
      '745f6964223a22617474656d70742d31222c22617474656d70745f646967657374223a22323232323232323232323232323232323232323232323232' +
      '32323232323232323232323232323232323232323232323232323232323232323232323232323232222c22726571756573745f6964223a227265712d' +
      '31222c22657865637574696f6e5f6f7065726174696f6e5f6964223a226f702d31222c226167656e74223a7b226f776e65725f6964223a22616c6963' +
      '65222c226167656e745f6964223a22636c617564652e636f6465227d2c226578656375746f72223a7b22726567697374726174696f6e5f6964223a22' +
      '72222c226578656375746f725f6964223a2265222c22726567697374726174696f6e5f65706f6368223a313834343637343430373337303935353136' +
      '31352c22766572696669636174696f6e5f6b65795f6964223a226b227d2c2266656e6365223a393030373139393235343734303939332c2274727573' +
      '745f636c617373223a22726567697374657265645f6578656375746f725f6f62736572766174696f6e222c226f7574636f6d65223a22756e63657274' +
      '61696e222c226372697465726961223a5b7b22637269746572696f6e223a2263222c226f7574636f6d65223a22706173736564222c2266696e64696e' +
      '6773223a5b5d2c2265766964656e63655f64696765737473223a5b5d7d2c7b22637269746572696f6e223a2262222c226f7574636f6d65223a226661' +
      '696c6564222c2266696e64696e6773223a5b2278225d2c2265766964656e63655f64696765737473223a5b5d7d5d2c226578656375746f725f70726f' +
      '76656e616e6365223a6e756c6c7d',
    signingBytesLength: 734,
    digest: 'c22de946d88518ca458498e054fbd48dc8446fe0f01669db1f3644694d14d937',
  },
};

const hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');

for (const [name, v] of Object.entries(VECTORS)) {
  test(`golden vector ${name}: signing bytes and digest`, () => {
    for (const text of [v.input, v.inputRaw]) {
      const a = decodeAssertion(text);
      const bytes = observationSigningBytes(a);
      assert.equal(bytes.length, v.signingBytesLength);
      assert.equal(bytes.toString('hex'), v.signingBytesHex);
      assert.equal(observationDigest(a), v.digest);
    }
    // The same bytes arriving as UTF-8 (the CLI path) decode to the same digest.
    assert.equal(observationDigest(decodeAssertion(Buffer.from(v.inputRaw, 'utf8'))), v.digest);
  });
}

test('golden vector v2 spells the escapes the seed requires', () => {
  const text = Buffer.from(VECTORS.v2.signingBytesHex, 'hex').toString('utf8');
  for (const piece of ['\\u0001', '\\u001f', '\\b', '\\t', '\\n', '\\f', '\\r', '\\u000b', '\\"', '\\\\', 'slash/', '\u007f', '\u2028', '\u2029', '\u{1F600}']) {
    assert.ok(text.includes(piece), `signing text contains ${JSON.stringify(piece)}`);
  }
  assert.ok(!/\\u00[0-9a-f]*[A-F]/.test(text), 'no uppercase hex in \\u escapes');
  assert.ok(text.endsWith('"executor_provenance":null}'), 'executor_provenance is null in the signing bytes');
  assert.ok(text.includes('"fence":18446744073709551615,'));
  assert.ok(text.includes('"registration_epoch":9007199254740993,'));
  assert.ok(hex('\u2028').length === 6 && VECTORS.v2.signingBytesHex.includes(hex('\u2028')));
});

// ---- mutants: every change of a signed field, of array order or of text must change the digest --------

type Obj = Record<string, unknown>;
const base = (v: Vector): Obj => parseStrictJson(v.inputRaw, { maxBytes: ASSERTION_MAX_BYTES }) as Obj;
const crit = (a: Obj, i: number) => (a.criteria as Obj[])[i]!;

const MUTANTS: [string, Vector, (a: Obj) => void][] = [
  ['task_id', VECTORS.v2, (a) => (a.task_id = 'repo:main.step-tesu')],
  ['task_digest', VECTORS.v2, (a) => (a.task_digest = '0123456789abcdef'.repeat(4).slice(0, 63) + 'e')],
  ['attempt_id', VECTORS.v2, (a) => (a.attempt_id = 'A._:-z8')],
  ['attempt_digest', VECTORS.v2, (a) => (a.attempt_digest = 'fedcba9876543210'.repeat(4).slice(0, 63) + '1')],
  ['request_id', VECTORS.v2, (a) => (a.request_id = 'result-8')],
  ['execution_operation_id', VECTORS.v2, (a) => (a.execution_operation_id = 'exec:op.43')],
  ['agent.owner_id', VECTORS.v2, (a) => ((a.agent as Obj).owner_id = 'owner_2')],
  ['agent.agent_id', VECTORS.v2, (a) => ((a.agent as Obj).agent_id = 'agent-3')],
  ['agent ids swapped', VECTORS.v2, (a) => (a.agent = { owner_id: 'agent-2', agent_id: 'owner_1' })],
  ['executor.registration_id', VECTORS.v2, (a) => ((a.executor as Obj).registration_id = 'reg-4')],
  ['executor.executor_id', VECTORS.v2, (a) => ((a.executor as Obj).executor_id = 'ci.runner2')],
  ['executor.registration_epoch 2^53+1 -> 2^53', VECTORS.v2, (a) => ((a.executor as Obj).registration_epoch = 2n ** 53n)],
  ['executor.verification_key_id', VECTORS.v2, (a) => ((a.executor as Obj).verification_key_id = 'ab'.repeat(31) + 'ac')],
  ['fence u64 max -> u64 max - 1', VECTORS.v2, (a) => (a.fence = 18446744073709551614n)],
  ['outcome', VECTORS.v2, (a) => (a.outcome = 'uncertain')],
  ['criterion name', VECTORS.v2, (a) => (crit(a, 1).criterion = 'lint2')],
  ['criterion outcome', VECTORS.v2, (a) => (crit(a, 1).outcome = 'passed')],
  ['criteria order', VECTORS.v2, (a) => (a.criteria = [crit(a, 1), crit(a, 0), crit(a, 2)])],
  ['findings order', VECTORS.v2, (a) => (crit(a, 0).findings = [...(crit(a, 0).findings as string[])].reverse())],
  ['finding one character', VECTORS.v2, (a) => ((crit(a, 2).findings as string[])[0] = '</script >')],
  ['empty finding dropped', VECTORS.v2, (a) => (crit(a, 0).findings = (crit(a, 0).findings as string[]).slice(0, 4))],
  ['empty finding added', VECTORS.v2, (a) => (crit(a, 1).findings = [''])],
  ['decomposed é normalized to NFC', VECTORS.v2, (a) => ((crit(a, 0).findings as string[])[3] = (crit(a, 0).findings as string[])[3]!.normalize('NFC'))],
  ['U+2028 -> \\n', VECTORS.v2, (a) => ((crit(a, 0).findings as string[])[2] = 'line\npara\u2029end')],
  ['evidence order', VECTORS.v2, (a) => (crit(a, 0).evidence_digests = [...(crit(a, 0).evidence_digests as string[])].reverse())],
  ['evidence dropped', VECTORS.v2, (a) => (crit(a, 0).evidence_digests = ['aa'.repeat(32)])],
  ['evidence moved to another criterion', VECTORS.v2, (a) => ((crit(a, 1).evidence_digests = ['00'.repeat(32)]), (crit(a, 0).evidence_digests = ['aa'.repeat(32)]))],
  ['fence 1 -> 2', VECTORS.v1, (a) => (a.fence = 2)],
  ['fence 2^53+1 -> 2^53+2', VECTORS.v3, (a) => (a.fence = 2n ** 53n + 2n)],
  ['executor null -> present', VECTORS.v1, (a) => ((a.trust_class = 'registered_executor_observation'), (a.executor = { registration_id: 'r', executor_id: 'e', registration_epoch: 0, verification_key_id: 'k' }))],
  ['registration_epoch u64 max -> 0', VECTORS.v3, (a) => ((a.executor as Obj).registration_epoch = 0)],
  ['criteria order v3', VECTORS.v3, (a) => (a.criteria = [crit(a, 1), crit(a, 0)])],
];

test('mutants: every changed field, array order or character changes the digest', () => {
  const seen = new Map<string, string>(Object.entries(VECTORS).map(([n, v]) => [v.digest, n]));
  for (const [name, v, mutate] of MUTANTS) {
    const a = structuredClone(base(v));
    mutate(a);
    const d = observationDigest(validateAssertion(a, name));
    assert.notEqual(d, v.digest, `${name} must change the digest`);
    assert.ok(!seen.has(d), `${name} collides with ${seen.get(d)}`);
    seen.set(d, name);
  }
});

test('executor_provenance and input key order are not signed', () => {
  const a = base(VECTORS.v2);
  const other = { ...a, executor_provenance: { observation_digest: '11'.repeat(32), signature: '22'.repeat(64) } };
  assert.equal(observationDigest(validateAssertion(other)), VECTORS.v2.digest);
  assert.equal(observationDigest(validateAssertion({ ...a, executor_provenance: null })), VECTORS.v2.digest);
  const reordered = Object.fromEntries(Object.entries(a).reverse());
  assert.equal(observationDigest(validateAssertion(reordered)), VECTORS.v2.digest);
});

// ---- refusals ---------------------------------------------------------------------------------------

const V1 = VECTORS.v1.inputRaw;
function refused(text: string | Buffer, why: string, code?: string): void {
  assert.throws(
    () => decodeAssertion(text),
    (e: unknown) => {
      assert.ok(e instanceof AgentscmError, `${why}: expected AgentscmError, got ${String(e)}`);
      assert.equal(e.kind, 'BAD_INPUT', why);
      if (code) assert.equal(e.code, code, why);
      return true;
    },
    why,
  );
}
const replaceOnce = (s: string, from: string, to: string): string => {
  assert.ok(s.includes(from), `fixture contains ${from}`);
  return s.replace(from, to);
};
const criterion = (name: string, findings: string[] = []) => ({ criterion: name, outcome: 'passed', findings, evidence_digests: [] });
const withCriteria = (criteria: unknown[]) => JSON.stringify({ ...(JSON.parse(V1) as Obj), criteria });

test('the unmodified fixture is accepted (refusals below are meaningful)', () => {
  assert.equal(observationDigest(decodeAssertion(V1)), VECTORS.v1.digest);
  assert.doesNotThrow(() => decodeAssertion(withCriteria(Array.from({ length: 64 }, (_, i) => criterion(`c${i}`, Array(32).fill('f'))))));
  assert.doesNotThrow(() => decodeAssertion(withCriteria([criterion('c', ['x'.repeat(4096)])])));
  assert.doesNotThrow(() => decodeAssertion(replaceOnce(V1, '"task_id":"task-1"', `"task_id":"${'a'.repeat(128)}"`)));
  assert.doesNotThrow(() => decodeAssertion(replaceOnce(V1, '"fence":1', '"fence":18446744073709551615')));
  assert.doesNotThrow(() => decodeAssertion(replaceOnce(V1, '"fence":1', '"fence":0')));
});

test('refused: unknown fields, duplicate keys, wrong versions', () => {
  refused(replaceOnce(V1, '{"version":1', '{"extra":1,"version":1'), 'unknown top-level field', 'INVALID_ASSERTION');
  refused(replaceOnce(V1, '"agent":{', '"agent":{"x":"y",'), 'unknown nested field', 'INVALID_ASSERTION');
  refused(replaceOnce(V1, '"findings":[]', '"findings":[],"note":""'), 'unknown criterion field', 'INVALID_ASSERTION');
  refused(replaceOnce(V1, '{"version":1', '{"version":1,"version":1'), 'duplicate top-level key', 'DUPLICATE_KEY');
  refused(replaceOnce(V1, '"owner_id":"alice"', '"owner_id":"alice","owner_id":"bob"'), 'duplicate nested key', 'DUPLICATE_KEY');
  refused(replaceOnce(V1, '"fence":1', '"fence":1,"fen\\u0063e":1'), 'duplicate key spelled with an escape', 'DUPLICATE_KEY');
  refused(replaceOnce(V1, '"version":1', '"version":2'), 'version 2');
  refused(replaceOnce(V1, '"version":1', '"version":0'), 'version 0');
  refused(replaceOnce(V1, '"version":1', '"version":"1"'), 'version as a string');
  refused(replaceOnce(V1, '"version":1', '"version":1.0'), 'version 1.0');
  refused(replaceOnce(V1, ',"executor_provenance":null', ''), 'missing executor_provenance');
  refused('[]', 'not an object');
});

test('refused: bad identifiers, hex and enums', () => {
  for (const id of ['task 1', 'task/1', '', 'a'.repeat(129), 't\u00e2sk', 'task\\u0000']) {
    refused(replaceOnce(V1, '"task_id":"task-1"', `"task_id":"${id}"`), `task_id ${JSON.stringify(id)}`);
  }
  refused(replaceOnce(V1, '"agent_id":"claude.code"', '"agent_id":"claude code"'), 'agent_id with a space');
  refused(replaceOnce(V1, '1'.repeat(64), '1'.repeat(63) + 'g'), 'non-hex digest');
  refused(replaceOnce(V1, '1'.repeat(64), 'A'.repeat(64)), 'uppercase hex digest');
  refused(replaceOnce(V1, '1'.repeat(64), '1'.repeat(63)), '63-character digest');
  refused(replaceOnce(V1, '1'.repeat(64), '1'.repeat(65)), '65-character digest');
  refused(replaceOnce(V1, '"evidence_digests":[]', `"evidence_digests":["${'A'.repeat(64)}"]`), 'uppercase evidence digest');
  refused(replaceOnce(V1, '"trust_class":"agent_assertion"', '"trust_class":"independent_controller_evidence"'), 'trust class not selectable on the wire');
  refused(replaceOnce(V1, '"outcome":"passed","criteria"', '"outcome":"not_claimed","criteria"'), 'not_claimed is not an assertion outcome');
  refused(replaceOnce(V1, '"outcome":"passed","findings"', '"outcome":"PASSED","findings"'), 'enum spelled in uppercase');
  refused(replaceOnce(V1, '"trust_class":"agent_assertion"', '"trust_class":"registered_executor_observation"'), 'registered observation without executor');
  const prov = (sig: string) => replaceOnce(VECTORS.v2.inputRaw, '"ef'.concat('ef'.repeat(63), '"'), `"${sig}"`);
  assert.doesNotThrow(() => decodeAssertion(prov('ef'.repeat(64))));
  refused(prov('ef'.repeat(63) + 'e'), '127-character provenance signature');
  refused(prov('EF'.repeat(64)), 'uppercase provenance signature');
});

test('refused: NUL, lone surrogates and over-long findings', () => {
  refused(replaceOnce(V1, '"findings":[]', '"findings":["a\\u0000b"]'), 'NUL in a finding');
  refused(replaceOnce(V1, '"findings":[]', '"findings":["\\ud800"]'), 'escaped lone high surrogate');
  refused(replaceOnce(V1, '"findings":[]', '"findings":["x\\udc00"]'), 'escaped lone low surrogate');
  refused(replaceOnce(V1, '"findings":[]', '"findings":["\\udc00\\ud800"]'), 'surrogates in the wrong order');
  refused(Buffer.concat([Buffer.from(V1.slice(0, V1.indexOf('"findings":[]') + 12)), Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]), Buffer.from(V1.slice(V1.indexOf('"findings":[]') + 12))]), 'UTF-8-encoded surrogate', 'INVALID_UTF8');
  refused(replaceOnce(V1, '"findings":[]', '"findings":["a\u0001b"]'), 'raw control character in a string', 'INVALID_JSON');
  refused(withCriteria([criterion('c', ['x'.repeat(4097)])]), 'finding over 4096 characters');
});

test('refused: collection bounds and duplicate criteria', () => {
  refused(withCriteria([]), 'no criteria');
  refused(withCriteria(Array.from({ length: 65 }, (_, i) => criterion(`c${i}`))), '65 criteria');
  refused(withCriteria([criterion('c', Array(33).fill('f'))]), '33 findings');
  refused(withCriteria([{ ...criterion('c'), evidence_digests: Array(33).fill('ab'.repeat(32)) }]), '33 evidence digests');
  refused(withCriteria([criterion('c'), criterion('d'), criterion('c')]), 'duplicate criterion');
});

test('refused: fences that are not u64 integers', () => {
  for (const fence of ['1.5', '1.0', '1e0', '1E2', '-1', '-0', '18446744073709551616', '99999999999999999999999', '"1"', 'null', 'true']) {
    refused(replaceOnce(V1, '"fence":1', `"fence":${fence}`), `fence ${fence}`);
  }
  refused(replaceOnce(VECTORS.v3.inputRaw, '"registration_epoch":18446744073709551615', '"registration_epoch":18446744073709551616'), 'registration_epoch over u64');
  // Values built in memory go through the same schema.
  for (const fence of [-1, -0, 1.5, 2n ** 64n, -1n, Number.MAX_SAFE_INTEGER + 2]) {
    assert.throws(() => validateAssertion({ ...base(VECTORS.v1), fence }), AgentscmError, `in-memory fence ${String(fence)}`);
  }
});

test('refused: over 256 KiB, checked before parsing', () => {
  const padded = V1 + ' '.repeat(ASSERTION_MAX_BYTES - Buffer.byteLength(V1));
  assert.equal(Buffer.byteLength(padded), ASSERTION_MAX_BYTES);
  assert.doesNotThrow(() => decodeAssertion(padded));
  refused(padded + ' ', 'one byte over the bound', 'TOO_LARGE');
  // Not even valid JSON: the size bound answers first.
  refused('{'.repeat(ASSERTION_MAX_BYTES + 1), 'oversized garbage', 'TOO_LARGE');
  refused(Buffer.alloc(ASSERTION_MAX_BYTES + 1, 0x20), 'oversized bytes', 'TOO_LARGE');
});
