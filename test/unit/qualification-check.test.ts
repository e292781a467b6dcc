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

test('the Stop hook\'s check refuses what the wire schema refuses, and adds only its own rules', () => {
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
    const schemaOk = QualificationAnswer.safeParse(clean).success;
    const ours = checkQualification(clean);
    assert.equal(ours.ok, schemaOk, `${name}: the schema says ${schemaOk}`);
    if (!ours.ok) assert.ok(ours.reason.length > 0, name);
  }
  assert.equal(checkQualification(good).ok, true);
  // Rules only the hook adds: a qualified answer names a receipt and a current subject.
  assert.equal(checkQualification({ ...good, qualified: true }).ok, false);
  assert.equal(checkQualification({ ...good, receipt_digest: H('c') }).ok, false);
  // The wire's ids may hold ":", the hook's may not.
  for (const v of [
    { ...good, tasks: [{ ...good.tasks[0], task_id: 'task:1' }] },
    { ...good, tasks: [{ ...good.tasks[0], step_id: 'step:1' }] },
    { ...good, failures: [{ task_id: 'task:1', code: 'task_pending' }] },
    { ...good, next: { operation: 'reconcile', task_id: 'task:1' } },
  ]) {
    assert.equal(QualificationAnswer.safeParse(v).success, true);
    assert.equal(checkQualification(v).ok, false, JSON.stringify(v));
  }
  const refused = checkQualification({ ...good, revision: 'A'.repeat(64) });
  assert.ok(!refused.ok && refused.reason.startsWith('revision: '), 'the reason names the field');
});
