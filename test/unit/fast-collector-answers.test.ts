// The hand-written checks of the answers `agent-task collect` waits for (src/core/contract/
// fast-collector-answers.ts) against the zod schemas they stand in for: over valid answers and thousands
// of variations of them (every member replaced by values of every kind and edge, removed, or joined by
// an extra one), whatever a check accepts the schema accepts too. Each check must also accept the valid
// answers a Hub sends, or collect would load zod after all.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { z } from 'zod';
import { DescriptorAnswer, UploadAnswer } from '../../src/core/contract/collector.js';
import { fastDescriptorAnswer, fastStatusAnswer, fastUploadAnswer } from '../../src/core/contract/fast-collector-answers.js';
import { ANSWERS } from '../../src/core/contract/ops.js';
import { edgeVariants, EDGES } from '../support/variants.js';

const H = (c: string) => c.repeat(64);
const ENVELOPE = { capability: 'agentscm.agent-workflow-tasks/v1', schema_version: 1 };

const descriptor = {
  version: 1,
  audience: 'auth-1',
  repository: 'acme/demo',
  profile: 'default',
  step_id: 'check',
  revision: H('a'),
  task_id: 'task-1',
  task_digest: H('b'),
  attempt_id: 'att-1',
  attempt_digest: H('c'),
  execution_operation_id: 'exec-1',
  fence: 1,
  origin: { owner_id: 'alice', agent_id: 'claude', grant_generation: 'tok-1' },
  registration: { registration_id: 'reg-1', executor_id: 'c1', registration_epoch: 2, verification_key_id: H('d') },
  collector_profile: { install_id: 'inst-1', profile_digest: H('e') },
  recipe: { image_id: `sha256:${H('f')}`, argv: ['sh', 'check.sh'], working_dir: '/snapshot', timeout_ms: 60_000, max_output_bytes: 65_536, network: 'none' },
  runtime_identity_digest: H('0'),
  execution_request_digest: H('1'),
};
const attempt = {
  task_id: 'task-1',
  task_digest: H('b'),
  attempt_id: 'att-1',
  attempt_digest: H('c'),
  claim_request_id: 'req-1',
  execution_operation_id: 'exec-1',
  kind: 'collector',
  agent: { owner_id: 'alice', agent_id: 'claude' },
  executor: { registration_id: 'reg-1', executor_id: 'c1', registration_epoch: 2, verification_key_id: H('d') },
  fence: 1,
  lease_ms: 600_000,
  lease_expires_at: 1_764_500_000_000,
  state: 'leased',
  outcome: null,
  superseded_by_fence: null,
};

/** Valid answers as a Hub sends them, with the check and the schema each must agree with. */
const CASES: { name: string; fast: (v: unknown) => boolean; schema: z.ZodType; bases: Record<string, unknown>[] }[] = [
  {
    name: 'collector_descriptor',
    fast: fastDescriptorAnswer,
    schema: DescriptorAnswer,
    bases: [
      { ...ENVELOPE, operation: 'collector_descriptor', descriptor, attempt },
      { ...ENVELOPE, operation: 'collector_descriptor', descriptor, attempt: { ...attempt, kind: 'agent', executor: null, state: 'replaced', outcome: 'uncertain', superseded_by_fence: 2 } },
    ],
  },
  {
    name: 'status',
    fast: fastStatusAnswer,
    schema: ANSWERS.status,
    bases: [
      { ...ENVELOPE, subject_current: true, task_id: 'task-1', task_digest: H('b'), step_id: 'check', state: 'claimed', attempt: { attempt_id: 'att-1', attempt_digest: H('c'), fence: 1, state: 'leased', outcome: null, currently_applicable: true } },
      { ...ENVELOPE, subject_current: false, task_id: 'task-1', task_digest: H('b'), step_id: 'check', state: 'pending', attempt: null },
    ],
  },
  {
    name: 'collector_upload',
    fast: fastUploadAnswer,
    schema: UploadAnswer,
    bases: [
      {
        ...ENVELOPE, operation: 'collector_upload', upload_request_id: 'upl-1', transfer_digest: H('2'), bytes_sha256: H('3'), length: 4096, task_id: 'task-1',
        attempt_id: 'att-1', fence: 1, outcome: 'passed', replayed: false, currently_applicable: true,
      },
    ],
  },
];

/** Edges that matter to these answers besides the common ones: recipe bounds and container paths. */
const MORE_EDGES: unknown[] = [
  ...EDGES,
  'collector_descriptor', 'collector_upload', 'collector', 'agent', 'leased', 'replaced', 'claimed', 'pending', 'none', 'host',
  `sha256:${H('f')}`, `sha256:${H('F')}`, H('f'), '/', '/snapshot', '/a/../b', '/a/./b', '/a b', 'snapshot', `/${'x'.repeat(1023)}`, `/${'x'.repeat(1024)}`,
  ['sh'], [''], ['a\u0000'], Array(256).fill('a'), Array(257).fill('a'), 999, 21_600_000, 21_600_001, 6_000_000, 6_000_001, 3_600_000, 3_600_001,
  'agentscm.agent-workflow-tasks/v1', 'agentscm.agent-workflow-tasks/v2',
];

for (const c of CASES) {
  test(`${c.name}: whatever the hand-written check accepts, the schema accepts`, () => {
    let accepted = 0;
    let total = 0;
    for (const base of c.bases) {
      assert.ok(c.schema.safeParse(base).success, 'the valid answer is valid');
      assert.ok(c.fast(base), 'the check accepts the valid answer');
      for (const doc of edgeVariants(base, MORE_EDGES)) {
        total++;
        if (!c.fast(doc)) continue;
        accepted++;
        assert.ok(c.schema.safeParse(doc).success, `accepted what the schema refuses: ${JSON.stringify(doc, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`);
      }
    }
    assert.ok(total > 1000, `${total} variations`);
    assert.ok(accepted > c.bases.length, 'some variations are valid too');
  });
}
