// The collector's typed Hub calls: collector-claim, collector-descriptor, collector-finalize, and the
// shared pieces collect and retry-upload use (the session, the local subject, strict answer checks).

import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import { subjectToJson } from '../../core/authority/plan.js';
import type { JsonValue } from '../../core/canonical/json.js';
import { CollectorClaimAnswer, DescriptorAnswer, FinalizeAnswer, UploadAnswer } from '../../core/contract/collector.js';
import { formatIssues } from '../../core/contract/common.js';
import { LEASE_MAX_MS, LEASE_MIN_MS } from '../../core/contract/mutations.js';
import { ANSWER_MAX_BYTES, ANSWERS } from '../../core/contract/ops.js';
import { AgentscmError } from '../../core/errors.js';
import { HubClient, readTokenFile } from '../../core/hub-client/client.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { localSubject as localSubjectOf, newRequestId, optId, pickTask } from './local.js';

export { newRequestId, optId, pickTask };

/** The Change's current subject for the repository and profile named by the call's options. */
export function localSubject(inv: Invocation): ReturnType<typeof localSubjectOf> {
  return localSubjectOf(inv, repositoryOpt(inv), idOpt(inv, 'profile'));
}
import { idArg, idOpt, intOpt, repositoryOpt, stringOpt } from '../options.js';

export const malformed = (why: string) => new AgentscmError('HUB_MALFORMED', 'HUB_MALFORMED', `the Hub answer failed validation: ${why}`);

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
