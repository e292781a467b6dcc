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
import { edgeVariants, fastAgreesWithSchema, hex64, SAMPLE_SUBJECT } from '../support/variants.js';

const H = hex64;
const subject = SAMPLE_SUBJECT;
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

function variants(base: Record<string, unknown>): unknown[] {
  const out = edgeVariants(base);
  // Criteria rows duplicated, emptied and over the bound.
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
  const { total, accepted, refusedBySchema } = fastAgreesWithSchema(BASES.flatMap((b) => variants(b)), fastMutationRequest, MutationRequest);
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
