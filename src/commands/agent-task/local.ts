// What every typed agent-task call takes from the local side: the Change's current subject and its
// derived tasks (read-only from the authority in --data-dir), the task a call names, and the
// idempotency key of a mutation (given, or generated and printed so a script can retry it).

import { randomBytes } from 'node:crypto';
import type { Task } from '../../core/authority/plan.js';
import { Authority } from '../../core/authority/store.js';
import type { Subject } from '../../core/authority/types.js';
import { canonicalJsonBytes } from '../../core/canonical/json.js';
import { DOMAINS, domainDigest } from '../../core/crypto/digest.js';
import { AgentscmError, usageError } from '../../core/errors.js';
import type { CommandContext, Invocation } from '../../cli/types.js';
import { idArg, idOpt, optionalStringOpt, stringOpt } from '../options.js';

export function optId(inv: Invocation, flag: string): string | undefined {
  return optionalStringOpt(inv, flag) === undefined ? undefined : idOpt(inv, flag);
}

export function newRequestId(ctx: CommandContext, inv: Invocation): string {
  const given = optId(inv, 'request-id');
  if (given !== undefined) return given;
  const id = `req-${randomBytes(16).toString('hex')}`;
  ctx.stderr.write(`agentscm: request_id ${id} (pass --request-id ${id} to retry this exact request)\n`);
  return id;
}

/**
 * The execution operation id of a claim: --execution-operation-id, else derived from the request id and
 * the task (never random), so that the identical command run again is the identical request and gets
 * the retained outcome instead of a request-id conflict.
 */
export function executionOperationId(inv: Invocation, requestId: string, taskId: string): string {
  const given = optId(inv, 'execution-operation-id');
  if (given !== undefined) return given;
  return `exec-${domainDigest(DOMAINS.executionOperation, canonicalJsonBytes({ request_id: requestId, task_id: taskId })).slice(0, 32)}`;
}

/** Whether the call reads the Change's current subject from a local data dir (else the Hub derives it). */
export function hasDataDir(inv: Invocation): boolean {
  return optionalStringOpt(inv, 'data-dir') !== undefined;
}

export function localSubject(inv: Invocation, repository: string, profile: string): { subject: Subject; tasks: Task[] } {
  const a = Authority.open(stringOpt(inv, 'data-dir'), { readonly: true });
  try {
    const subject = a.currentSubject(repository, profile, idArg(inv, 0, 'CHANGE'));
    return { subject, tasks: a.tasksFor(subject) };
  } finally {
    a.close();
  }
}

export function pickTask(inv: Invocation, tasks: readonly Task[]): Task {
  const taskId = optId(inv, 'task-id');
  const step = optId(inv, 'step');
  if ((taskId === undefined) === (step === undefined)) throw usageError('name the task with exactly one of --task-id ID or --step STEP');
  const t = taskId !== undefined ? tasks.find((x) => x.task_id === taskId) : tasks.find((x) => x.step.id === step);
  if (!t) throw new AgentscmError('NOT_FOUND', 'TASK_NOT_FOUND', 'no such task for the current subject of this Change');
  return t;
}
