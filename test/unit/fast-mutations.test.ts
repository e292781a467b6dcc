// The Hub's hand-written acceptance of mutation requests (src/core/contract/fast-mutations.ts) against
// the zod schemas it stands in for: over valid documents and thousands of variations of them (every
// field replaced by values of every kind and edge, fields removed, fields added, criteria rows
// duplicated or over the bounds), whatever it accepts the schema accepts too, with an equal value. It
// must also accept the common valid documents, or it would be dead code.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseStrictJson, type JsonValue } from '../../src/core/canonical/json.js';
import { fastMutationRequest } from '../../src/core/contract/fast-mutations.js';
import { MutationRequest } from '../../src/core/contract/mutations.js';

const H = (c: string) => c.repeat(64);
const subject = {
  repository: 'acme/demo',
  profile: 'default',
  target: 'main',
  change_id: 'c1',
  change_version: 3,
  revision: H('a'),
  context_digest: H('b'),
  policy_epoch: 1,
  requirement_digest: H('c'),
  plan_digest: H('d'),
};
const binding = {
  request_id: 'r-1',
  task_id: 'task-1',
  task_digest: H('e'),
  attempt_id: 'att-1',
  attempt_digest: H('f'),
  execution_operation_id: 'exec-1',
  executor_id: null,
  fence: 2,
};
const assertion = {
  version: 1,
  task_id: 'task-1',
  task_digest: H('e'),
  attempt_id: 'att-1',
  attempt_digest: H('f'),
  request_id: 'r-2',
  execution_operation_id: 'exec-1',
  agent: { owner_id: 'alice', agent_id: 'claude' },
  executor: null,
  fence: 2,
  trust_class: 'agent_assertion',
  outcome: 'failed',
  criteria: [
    { criterion: 'ok', outcome: 'failed', findings: ['looked', ''], evidence_digests: [H('0')] },
    { criterion: 'ctl', outcome: 'not_claimed', findings: [], evidence_digests: [] },
  ],
  executor_provenance: null,
};
const BASES: Record<string, unknown>[] = [
  { operation: 'claim', request_id: 'r-0', subject, task_id: 'task-1', task_digest: H('e'), execution_operation_id: 'exec-1', requested_lease_ms: 600_000, executor_id: null },
  { operation: 'claim', request_id: 'r-0', subject, task_id: 'task-1', task_digest: H('e'), execution_operation_id: 'exec-1', requested_lease_ms: 1000, executor_id: 'ex.1:a-b' },
  { operation: 'heartbeat', ...binding, requested_lease_ms: 3_600_000 },
  { operation: 'cancel', ...binding, reason: 'stop' },
  { operation: 'reconcile', ...binding, executor_id: 'ex-1', reason: '' },
  { operation: 'result', assertion },
  { operation: 'result', assertion: { ...assertion, outcome: 'passed', fence: 18446744073709551615n } },
];

const EDGES: unknown[] = [
  undefined, // the key is removed
  null, true, false, 0, -0, 1, 2, 1.5, -1, 999, 1000, 3_600_000, 3_600_001, 2 ** 53 - 1, 2 ** 53, 1e300, 18446744073709551615n, 18446744073709551616n, -1n, 0n,
  '', 'a', 'x'.repeat(128), 'x'.repeat(129), 'a b', 'é', 'a\u0000b', 'x'.repeat(1024), 'x'.repeat(1025), 'x'.repeat(4096), 'x'.repeat(4097),
  H('a'), H('A'), 'a'.repeat(63), 'a'.repeat(65), 'acme/demo', 'acme/..', './x', 'a/b/c', `${'o'.repeat(64)}/${'n'.repeat(100)}`, `${'o'.repeat(65)}/n`,
  'claim', 'heartbeat', 'cancel', 'reconcile', 'result', 'recovery', 'passed', 'failed', 'uncertain', 'not_claimed', 'agent_assertion', 'registered_executor_observation',
  [], [1], ['a'], [H('a')], {}, { owner_id: 'a', agent_id: 'b' }, { owner_id: 'a', agent_id: 'b', x: 1 },
  { registration_id: 'reg', executor_id: 'ex', registration_epoch: 1, verification_key_id: 'k' },
  { observation_digest: H('a'), signature: 'a'.repeat(128) },
];

type Path = (string | number)[];

/** Every path to a member or array element of v. */
function paths(v: unknown, at: Path = []): Path[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => [[...at, i], ...paths(x, [...at, i])]);
  if (typeof v === 'object' && v !== null) return Object.entries(v).flatMap(([k, x]) => [[...at, k], ...paths(x, [...at, k])]);
  return [];
}

function clone<T>(v: T): T {
  if (Array.isArray(v)) return v.map(clone) as T;
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clone(x)])) as T;
  return v;
}

function withValue(doc: unknown, p: Path, value: unknown): unknown {
  const out = clone(doc) as Record<string | number, unknown>;
  let o = out;
  for (const k of p.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  const last = p[p.length - 1]!;
  if (value === undefined && !Array.isArray(o)) delete o[last];
  else o[last] = clone(value);
  return out;
}

function objects(v: unknown, at: Path = []): Path[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => objects(x, [...at, i]));
  if (typeof v === 'object' && v !== null) return [at, ...Object.entries(v).flatMap(([k, x]) => objects(x, [...at, k]))];
  return [];
}

function variants(base: Record<string, unknown>): unknown[] {
  const out: unknown[] = [base];
  for (const p of paths(base)) for (const e of EDGES) out.push(withValue(base, p, e));
  // An extra member at every level, and criteria rows duplicated, emptied and over the bound.
  for (const p of objects(base)) out.push(p.length === 0 ? { ...base, extra: 1 } : withValue(base, p, { ...(p.reduce<any>((o, k) => o[k], base) as object), extra: null })); // eslint-disable-line @typescript-eslint/no-explicit-any
  if (base.operation === 'result') {
    const a = base.assertion as typeof assertion;
    const row = a.criteria[0]!;
    for (const criteria of [[], [row, row], Array.from({ length: 64 }, (_, i) => ({ ...row, criterion: `c${i}` })), Array.from({ length: 65 }, (_, i) => ({ ...row, criterion: `c${i}` }))]) {
      out.push({ ...base, assertion: { ...a, criteria } });
    }
    out.push({ ...base, assertion: { ...a, criteria: [{ ...row, findings: Array(32).fill('f') }] } });
    out.push({ ...base, assertion: { ...a, criteria: [{ ...row, findings: Array(33).fill('f') }] } });
    out.push({ ...base, assertion: { ...a, criteria: [{ ...row, evidence_digests: Array(33).fill(H('1')) }] } });
  }
  return out;
}

test('whatever the fast path accepts, the schema accepts with an equal value', () => {
  let accepted = 0;
  let refusedBySchema = 0;
  let total = 0;
  for (const base of BASES) {
    for (const doc of variants(base)) {
      total++;
      const fast = fastMutationRequest(doc);
      const z = MutationRequest.safeParse(doc);
      if (!z.success) refusedBySchema++;
      if (fast === undefined) continue;
      accepted++;
      assert.ok(z.success, `fast path accepted what the schema refuses: ${JSON.stringify(doc, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`);
      assert.deepStrictEqual(fast, z.data);
    }
  }
  // The variations are mostly invalid, and the fast path takes a good share of the valid ones.
  assert.ok(total > 2000, `${total}`);
  assert.ok(refusedBySchema > total / 2, `${refusedBySchema} of ${total}`);
  assert.ok(accepted > 100, `${accepted}`);
});

test('the common valid documents take the fast path, as parsed from the wire', () => {
  for (const base of BASES) {
    const text = JSON.stringify(base, (_k, v) => (typeof v === 'bigint' ? `@${v}@` : v)).replace(/"@([0-9]+)@"/g, '$1');
    const doc = parseStrictJson(Buffer.from(text), { maxBytes: 1 << 16 }) as JsonValue;
    const fast = fastMutationRequest(doc);
    assert.ok(fast, `not taken: ${text}`);
    assert.deepStrictEqual(fast, MutationRequest.parse(doc));
  }
  // A JSON "__proto__" member is an own data member: an unknown field, never accepted here.
  const proto = parseStrictJson(Buffer.from('{"operation":"cancel","__proto__":{},"request_id":"r","task_id":"t","task_digest":"' + H('a') + '","attempt_id":"a","attempt_digest":"' + H('b') + '","execution_operation_id":"e","executor_id":null,"fence":1,"reason":""}'), { maxBytes: 1 << 16 });
  assert.equal(fastMutationRequest(proto), undefined);
  assert.equal(MutationRequest.safeParse(proto).success, false);
});
