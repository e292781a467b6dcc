import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { compilePlan, deriveTasks } from '../../src/core/authority/plan.js';
import type { Requirement, Subject } from '../../src/core/authority/types.js';
import { decodeRequirement } from '../../src/core/contract/requirement.js';
import { referencePathProblem } from '../../src/core/contract/paths.js';
import { REPO_ROOT } from '../support/cli.js';

const example = decodeRequirement(fs.readFileSync(path.join(REPO_ROOT, 'examples', 'requirement.json')));
const plan = compilePlan(example.requirement, example.digest);

const base: Subject = {
  repository: 'acme/demo',
  profile: 'default',
  target: 'main',
  change_id: 'c1',
  change_version: 1,
  revision: 'a'.repeat(64),
  context_digest: 'b'.repeat(64),
  policy_epoch: 1,
  requirement_digest: example.digest,
  plan_digest: plan.digest,
};

function digests(subject: Subject, requirement: Requirement = example.requirement): string[] {
  const p = compilePlan(requirement, subject.requirement_digest).plan;
  return deriveTasks(subject, requirement, p).map((t) => t.task_digest);
}

test('derivation is deterministic and every task has a criterion', () => {
  assert.deepEqual(digests(base), digests({ ...base }));
  const tasks = deriveTasks(base, example.requirement, plan.plan);
  assert.equal(tasks.length, 2);
  for (const t of tasks) assert.ok(t.step.criteria.length >= 1);
  assert.notEqual(tasks[0]!.task_id, tasks[1]!.task_id);
});

test('every bound subject input changes every task digest', () => {
  const before = digests(base);
  const mutants: Partial<Subject>[] = [
    { repository: 'acme/other' },
    { profile: 'p2' },
    { target: 'release' },
    { change_id: 'c2' },
    { change_version: 2 },
    { revision: 'c'.repeat(64) },
    { context_digest: 'd'.repeat(64) },
    { policy_epoch: 2 },
    { requirement_digest: 'e'.repeat(64) },
    { plan_digest: 'f'.repeat(64) },
  ];
  for (const m of mutants) {
    const after = digests({ ...base, ...m });
    for (let i = 0; i < before.length; i++) assert.notEqual(after[i], before[i], `changing ${Object.keys(m)[0]} must change task ${i}`);
  }
});

test('skill, step, criteria, references and graph status are bound too', () => {
  const before = digests(base);
  const step0 = example.requirement.steps[0]!;
  const variants: Requirement[] = [
    { ...example.requirement, workflow: 'other' },
    { ...example.requirement, steps: [{ ...step0, skill: 'other-skill' }, example.requirement.steps[1]!] },
    { ...example.requirement, steps: [{ ...step0, required: false }, example.requirement.steps[1]!] },
    { ...example.requirement, steps: [{ ...step0, summary: 'different' }, example.requirement.steps[1]!] },
    { ...example.requirement, steps: [{ ...step0, criteria: [{ ...step0.criteria[0]!, text: 'changed' }] }, example.requirement.steps[1]!] },
    { ...example.requirement, steps: [{ ...step0, references: [] }, example.requirement.steps[1]!] },
  ];
  for (const r of variants) assert.notEqual(digests(base, r)[0], before[0]);
  // A different step id is a different logical task.
  const renamed: Requirement = { ...example.requirement, steps: [{ ...step0, id: 'check2' }, { ...example.requirement.steps[1]!, depends_on: ['check2'] }] };
  const t0 = deriveTasks(base, renamed, compilePlan(renamed, base.requirement_digest).plan)[0]!;
  assert.notEqual(t0.task_digest, before[0]);
  assert.notEqual(t0.task_id, deriveTasks(base, example.requirement, plan.plan)[0]!.task_id);
});

test('requirement validation: no criterion, a cycle, unknown dependency and bad reference paths are refused', () => {
  const doc = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples', 'requirement.json'), 'utf8'));
  const bad = (mutate: (d: any) => void): void => { // eslint-disable-line @typescript-eslint/no-explicit-any
    const d = structuredClone(doc);
    mutate(d);
    assert.throws(() => {
      const r = decodeRequirement(Buffer.from(JSON.stringify(d)));
      compilePlan(r.requirement, r.digest);
    }, /invalid|cycle/);
  };
  bad((d) => (d.steps[0].criteria = []));
  bad((d) => (d.steps[0].depends_on = ['notes']));
  bad((d) => (d.steps[0].depends_on = ['ghost']));
  bad((d) => (d.steps[0].unknown = true));
  bad((d) => (d.version = 2));
  bad((d) => (d.steps[1].criteria[0].controller_only = true));
  for (const p of ['', '/etc/passwd', 'a//b', './a', 'a/./b', '../a', 'a/..', 'a\\b', 'C:/x', 'c:x', 'a\u0000b', 'a\u007fb', 'a\nb', 'é.md']) {
    assert.ok(referencePathProblem(p), `path ${JSON.stringify(p)} must be refused`);
    bad((d) => (d.steps[0].references[0].path = p));
  }
  for (const p of ['docs/CHECK.md', 'a', 'a/b/c.txt', '.hidden/x']) assert.equal(referencePathProblem(p), undefined);
});
