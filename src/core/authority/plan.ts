// Compiling a requirement into its immutable plan, and deriving the logical tasks of a subject.
// Pure functions over stored canonical bytes: the Hub, the typed CLI, the collector and the hooks all
// derive the same task ids and digests from the same authority rows.

import { canonicalJsonBytes, type JsonValue } from '../canonical/json.js';
import { DOMAINS, domainDigest } from '../crypto/digest.js';
import { badInput, localState } from '../errors.js';
import type { Requirement, RequirementStep, Subject } from './types.js';

export interface Plan {
  readonly workflow: string;
  readonly requirement_digest: string;
  /** Step ids in execution order: a stable topological order (file order among ready steps). */
  readonly order: readonly string[];
}

/** Topologically orders the steps; a dependency cycle is BAD_INPUT. */
export function compilePlan(requirement: Requirement, requirementDigest: string): { plan: Plan; digest: string } {
  const done = new Set<string>();
  const order: string[] = [];
  while (order.length < requirement.steps.length) {
    const next = requirement.steps.find((s) => !done.has(s.id) && s.depends_on.every((d) => done.has(d)));
    if (!next) throw badInput('requirement steps have a dependency cycle', 'INVALID_REQUIREMENT');
    done.add(next.id);
    order.push(next.id);
  }
  const plan: Plan = { workflow: requirement.workflow, requirement_digest: requirementDigest, order };
  const bytes = canonicalJsonBytes({ version: 1, workflow: plan.workflow, requirement_digest: plan.requirement_digest, order: [...order] });
  return { plan, digest: domainDigest(DOMAINS.plan, bytes) };
}

/**
 * An installed requirement as stored (canonical bytes and plan digest), rechecked against its digest
 * and recompiled: what both the authority store and its read-only reader load.
 */
export function checkStoredRequirement(digest: string, canonical: Uint8Array, storedPlanDigest: string): { requirement: Requirement; plan: Plan; plan_digest: string } {
  if (domainDigest(DOMAINS.requirement, canonical) !== digest) throw localState(`installed requirement ${digest} does not match its digest`, 'STORE_CORRUPT');
  const requirement = JSON.parse(Buffer.from(canonical).toString('utf8')) as Requirement;
  const { plan, digest: planDigest } = compilePlan(requirement, digest);
  if (planDigest !== storedPlanDigest) throw localState(`installed plan of ${digest} does not match its digest`, 'STORE_CORRUPT');
  return { requirement, plan, plan_digest: planDigest };
}

/** One logical task: a step of the plan bound to an exact subject. */
export interface Task {
  readonly task_id: string;
  readonly task_digest: string;
  readonly subject: Subject;
  readonly workflow: string;
  readonly step: RequirementStep;
  /** The canonical binding bytes the digest covers (stored by the journal at claim time). */
  readonly canonical: Buffer;
}

export function subjectToJson(s: Subject): JsonValue {
  return {
    repository: s.repository,
    profile: s.profile,
    target: s.target,
    change_id: s.change_id,
    change_version: s.change_version,
    revision: s.revision,
    context_digest: s.context_digest,
    policy_epoch: s.policy_epoch,
    requirement_digest: s.requirement_digest,
    plan_digest: s.plan_digest,
  };
}

/**
 * Derives every task of the subject in plan order. The task digest covers every bound input (subject
 * fields, workflow, skill, step, class, graph status, dependencies, criteria, references, summary); the
 * task id covers the logical identity (subject and step), so a new checkpoint or policy epoch gives
 * fresh task ids.
 */
export function deriveTasks(subject: Subject, requirement: Requirement, plan: Plan): Task[] {
  const byId = new Map(requirement.steps.map((s) => [s.id, s]));
  return plan.order.map((stepId) => {
    const step = byId.get(stepId)!;
    const binding: JsonValue = {
      version: 1,
      subject: subjectToJson(subject),
      workflow: requirement.workflow,
      skill: step.skill,
      step_id: step.id,
      action_class: step.action_class,
      required: step.required,
      depends_on: [...step.depends_on],
      summary: step.summary,
      criteria: step.criteria.map((c) => ({ id: c.id, text: c.text, required: c.required, controller_only: c.controller_only })),
      references: step.references.map((r) => ({ name: r.name, path: r.path, sha256: r.sha256 })),
    };
    const canonical = canonicalJsonBytes(binding);
    const idBytes = canonicalJsonBytes({
      repository: subject.repository,
      profile: subject.profile,
      change_id: subject.change_id,
      change_version: subject.change_version,
      context_digest: subject.context_digest,
      policy_epoch: subject.policy_epoch,
      step_id: step.id,
    });
    return {
      task_id: `task-${domainDigest(DOMAINS.taskId, idBytes).slice(0, 40)}`,
      task_digest: domainDigest(DOMAINS.task, canonical),
      subject,
      workflow: requirement.workflow,
      step,
      canonical,
    };
  });
}

/** The change context digest: the Change version's identity (repository, change, version, revisions). */
export function contextDigest(repository: string, changeId: string, version: number, revision: string, parentRevision: string | null): string {
  return domainDigest(
    DOMAINS.context,
    canonicalJsonBytes({ version: 1, repository, change_id: changeId, change_version: version, revision, parent_revision: parentRevision }),
  );
}
