// The Hub's hand-written acceptance of read requests (src/core/contract/fast-reads.ts) against the zod
// schema it stands in for (ReadRequest): over valid documents and thousands of variations of them
// (every field replaced by values of every kind and edge, fields removed, fields added), whatever it
// accepts the schema accepts too, with an equal value; and the common valid documents take it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseStrictJson, type JsonValue } from '../../src/core/canonical/json.js';
import { fastReadRequest } from '../../src/core/contract/fast-reads.js';
import { ReadRequest } from '../../src/core/contract/ops.js';
import { edgeVariants, fastAgreesWithSchema, hex64, SAMPLE_SUBJECT } from '../support/variants.js';

const H = hex64;
const subject = SAMPLE_SUBJECT;
const BASES: Record<string, unknown>[] = [
  { operation: 'capabilities' },
  { operation: 'requirements', subject },
  { operation: 'next', subject },
  { operation: 'qualification', subject },
  { operation: 'status', subject, task_id: 'task-1', task_digest: H('e'), attempt_id: null },
  { operation: 'status', subject, task_id: 'task-1', task_digest: H('e'), attempt_id: 'att-1' },
];

function variants(base: Record<string, unknown>): unknown[] {
  const out = edgeVariants(base);
  // The subject's own fields varied too: the one nested object every read but capabilities carries.
  if (base.subject) for (const s of edgeVariants(subject)) out.push({ ...base, subject: s });
  // Operations swapped between shapes (a status body named qualification, and so on).
  for (const other of BASES) out.push({ ...base, operation: other.operation });
  return out;
}

test('whatever the fast read path accepts, the schema accepts with an equal value', () => {
  const { total, accepted, refusedBySchema } = fastAgreesWithSchema(BASES.flatMap((b) => variants(b)), fastReadRequest, ReadRequest);
  assert.ok(total > 1000, `${total}`);
  assert.ok(refusedBySchema > total / 2, `${refusedBySchema} of ${total}`);
  assert.ok(accepted > 30, `${accepted}`);
});

test('the common valid reads take the fast path, as parsed from the wire', () => {
  for (const base of BASES) {
    const doc = parseStrictJson(Buffer.from(JSON.stringify(base)), { maxBytes: 1 << 16 }) as JsonValue;
    const fast = fastReadRequest(doc);
    assert.ok(fast, `not taken: ${JSON.stringify(base)}`);
    assert.deepStrictEqual(fast, ReadRequest.parse(doc));
  }
  // Reads the fast path leaves to the schema still parse there.
  const instructions = { operation: 'instructions', subject, task_id: 'task-1', task_digest: H('e'), supported_schema_versions: [1] };
  assert.equal(fastReadRequest(instructions), undefined);
  assert.ok(ReadRequest.safeParse(instructions).success);
  // A JSON "__proto__" member is an own data member: an unknown field, never accepted here.
  const proto = parseStrictJson(Buffer.from('{"operation":"capabilities","__proto__":{}}'), { maxBytes: 1 << 16 });
  assert.equal(fastReadRequest(proto), undefined);
  assert.equal(ReadRequest.safeParse(proto).success, false);
});
