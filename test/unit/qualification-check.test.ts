import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QualificationAnswer } from '../../src/core/contract/ops.js';
import { checkQualification } from '../../src/core/contract/qualification-check.js';

const H = (c: string) => c.repeat(64);
const good = {
  capability: 'agentscm.agent-workflow-tasks/v1',
  schema_version: 1,
  qualified: false,
  subject_current: true,
  receipt_digest: null,
  revision: H('a'),
  tasks: [{ task_id: 'task-1', task_digest: H('b'), step_id: 'check', required: true, state: 'pending' }],
  failures: [{ task_id: 'task-1', code: 'task_pending' }],
  next: { operation: 'collector_claim', task_id: 'task-1' },
};

test('the zod-free checker and the zod schema agree on good and mutated answers', () => {
  const mutants: [string, unknown][] = [
    ['good', good],
    ['qualified with receipt', { ...good, qualified: true, receipt_digest: H('c'), failures: [], next: { operation: 'none' } }],
    ['extra field', { ...good, extra: 1 }],
    ['missing next', { ...good, next: undefined }],
    ['next without task', { ...good, next: { operation: 'reconcile' } }],
    ['none with task', { ...good, next: { operation: 'none', task_id: 'x' } }],
    ['unknown next', { ...good, next: { operation: 'run', task_id: 'x' } }],
    ['bad revision', { ...good, revision: 'A'.repeat(64) }],
    ['33 failures', { ...good, failures: Array.from({ length: 33 }, () => ({ task_id: 't', code: 'c' })) }],
    ['bad code', { ...good, failures: [{ task_id: 't', code: 'has space' }] }],
    ['bad state', { ...good, tasks: [{ ...good.tasks[0], state: 'done' }] }],
    ['wrong capability', { ...good, capability: 'other' }],
  ];
  for (const [name, v] of mutants) {
    const clean = JSON.parse(JSON.stringify(v));
    const zodOk = QualificationAnswer.safeParse(clean).success;
    const ours = checkQualification(clean).ok;
    assert.equal(ours, zodOk, `${name}: zod says ${zodOk}`);
  }
  assert.equal(checkQualification(good).ok, true);
  // Rules only the hook adds: a qualified answer names a receipt and a current subject.
  assert.equal(checkQualification({ ...good, qualified: true }).ok, false);
  assert.equal(checkQualification({ ...good, receipt_digest: H('c') }).ok, false);
});
