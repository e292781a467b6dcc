// The collector's typed Hub calls: collector-claim, collector-descriptor, collector-finalize, and the
// shared pieces collect and retry-upload use (the session, the local subject, strict answer checks).

import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import { subjectToJson, type Task } from '../../core/authority/plan.js';
import { Authority } from '../../core/authority/store.js';
import type { Subject } from '../../core/authority/types.js';
import type { JsonValue } from '../../core/canonical/json.js';
import { CollectorClaimAnswer, DescriptorAnswer, FinalizeAnswer, UploadAnswer } from '../../core/contract/collector.js';
import { formatIssues } from '../../core/contract/common.js';
import { LEASE_MAX_MS, LEASE_MIN_MS } from '../../core/contract/mutations.js';
import { ANSWER_MAX_BYTES, ANSWERS } from '../../core/contract/ops.js';
import { AgentscmError, usageError } from '../../core/errors.js';
import { HubClient, readTokenFile } from '../../core/hub-client/client.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { idArg, idOpt, intOpt, optionalStringOpt, repositoryOpt, stringOpt } from '../options.js';

export const malformed = (why: string) => new AgentscmError('HUB_MALFORMED', 'HUB_MALFORMED', `the Hub answer failed validation: ${why}`);

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

export function localSubject(inv: Invocation): { subject: Subject; tasks: Task[] } {
  const a = Authority.open(stringOpt(inv, 'data-dir'), { readonly: true });
  try {
    const subject = a.currentSubject(repositoryOpt(inv), idOpt(inv, 'profile'), idArg(inv, 0, 'CHANGE'));
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

const SCHEMAS = {
  collector_claim: CollectorClaimAnswer,
  collector_descriptor: DescriptorAnswer,
  collector_finalize: FinalizeAnswer,
  collector_upload: UploadAnswer,
  status: ANSWERS.status,
} as const;

export class CollectorSession {
  readonly client: HubClient;
  constructor(inv: Invocation, timeoutMs?: number) {
    this.client = new HubClient({
      endpoint: stringOpt(inv, 'endpoint'),
      repository: repositoryOpt(inv),
      profile: idOpt(inv, 'profile'),
      token: readTokenFile(stringOpt(inv, 'token-file')),
      maxAnswerBytes: ANSWER_MAX_BYTES,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
  }

  private check(op: keyof typeof SCHEMAS, answer: JsonValue): Record<string, JsonValue> {
    const r = (SCHEMAS[op] as z.ZodType).safeParse(answer);
    if (!r.success) throw malformed(formatIssues(r.error));
    return answer as Record<string, JsonValue>;
  }

  async call(op: 'collector_claim' | 'collector_descriptor' | 'collector_finalize' | 'status', body: JsonValue): Promise<Record<string, JsonValue>> {
    return this.check(op, await this.client.call(body));
  }

  async upload(bytes: Buffer, onSent?: () => void): Promise<Record<string, JsonValue>> {
    return this.check('collector_upload', await this.client.upload(bytes, onSent));
  }

  close(): void {
    this.client.close();
  }
}

export async function runCollectorCall(op: 'collector_claim' | 'collector_descriptor' | 'collector_finalize', ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const s = new CollectorSession(inv);
  try {
    switch (op) {
      case 'collector_claim': {
        const { subject, tasks } = localSubject(inv);
        const task = pickTask(inv, tasks);
        const lease = intOpt(inv, 'lease-ms', LEASE_MIN_MS, LEASE_MAX_MS)!;
        const a = await s.call(op, {
          operation: op,
          request_id: newRequestId(ctx, inv),
          subject: subjectToJson(subject),
          task_id: task.task_id,
          task_digest: task.task_digest,
          execution_operation_id: optId(inv, 'execution-operation-id') ?? `exec-${randomBytes(16).toString('hex')}`,
          requested_lease_ms: lease,
          executor_id: idOpt(inv, 'executor-id'),
        });
        const d = a.descriptor as Record<string, JsonValue>;
        const att = a.attempt as Record<string, JsonValue>;
        if (d.task_id !== task.task_id || d.task_digest !== task.task_digest || att.task_id !== task.task_id || d.revision !== subject.revision) throw malformed('answer is about another task');
        if ((att.lease_ms as number) > lease) throw malformed('the issued lease is longer than requested');
        return { data: a, text: `claimed ${task.task_id}: attempt ${String(att.attempt_id)} fence ${String(att.fence)}\nnext: agentscm agent-task collect ${idArg(inv, 0, 'CHANGE')} --task-id ${task.task_id} --attempt-id ${String(att.attempt_id)} …` };
      }
      case 'collector_descriptor': {
        const taskId = idOpt(inv, 'task-id');
        const attemptId = idOpt(inv, 'attempt-id');
        const a = await s.call(op, { operation: op, task_id: taskId, attempt_id: attemptId });
        const d = a.descriptor as Record<string, JsonValue>;
        if (d.task_id !== taskId || d.attempt_id !== attemptId) throw malformed('answer is about another attempt');
        return { data: a };
      }
      case 'collector_finalize': {
        const { subject } = localSubject(inv);
        const a = await s.call(op, { operation: op, request_id: newRequestId(ctx, inv), subject: subjectToJson(subject) });
        return { data: a, text: `receipt ${String(a.receipt_digest)} (v2, ${(a.transfers as JsonValue[]).length} transfer(s))` };
      }
    }
  } finally {
    s.close();
  }
}
