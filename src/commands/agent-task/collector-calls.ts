// The collector's typed Hub calls: collector-claim, collector-descriptor, collector-finalize, and the
// shared pieces collect and retry-upload use (the session, the local subject, strict answer checks).

import type { z } from 'zod';
import { subjectToJson } from '../../core/authority/plan.js';
import type { JsonValue } from '../../core/canonical/json.js';
import { ANSWER_MAX_BYTES } from '../../core/contract/bounds.js';
import type { Authority } from '../../core/authority/store.js';
import type { Descriptor } from '../../core/contract/collector.js';
import { AgentscmError, conflict } from '../../core/errors.js';
import { HubClient, readTokenFile } from '../../core/hub-client/client.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { executionOperationId, localSubject as localSubjectOf, newRequestId, optId, pickTask } from './local.js';

export { newRequestId, optId, pickTask };

/** The Change's current subject for the repository and profile named by the call's options. */
export function localSubject(inv: Invocation): ReturnType<typeof localSubjectOf> {
  return localSubjectOf(inv, repositoryOpt(inv), idOpt(inv, 'profile'));
}
import { caFileOpt, idArg, idOpt, intOpt, repositoryOpt, stringOpt } from '../options.js';

export const malformed = (why: string) => new AgentscmError('HUB_MALFORMED', 'HUB_MALFORMED', `the Hub answer failed validation: ${why}`);

/**
 * The collector profile the local authority has installed for the descriptor's registration (command
 * or review), after rechecking that the registration is still current and the installation unchanged
 * since the claim. The caller then checks the profile's own pins.
 */
export function installedProfileRow(a: Authority, d: Pick<Descriptor, 'audience' | 'registration' | 'collector_profile'>): { canonical: Buffer } {
  if (a.authorityId() !== d.audience) throw malformed('the descriptor is for another authority than --data-dir');
  const e = a.getEnrollment(d.registration.registration_id);
  const cur = e && a.currentRegistration(e.repository, e.profile, e.step_id, e.executor_id);
  if (!e || !cur || cur.registration_id !== e.registration_id) throw conflict('the attempt\'s registration is revoked or no longer current', 'ENROLLMENT_NOT_CURRENT');
  if (e.registration_epoch !== d.registration.registration_epoch || e.verification_key_id !== d.registration.verification_key_id || e.executor_id !== d.registration.executor_id) {
    throw malformed('the descriptor names another registration than the local authority');
  }
  const row = a.currentCollectorProfile(e.registration_id);
  if (!row || row.install_id !== d.collector_profile.install_id || row.profile_digest !== d.collector_profile.profile_digest) {
    throw conflict('the installed collector profile changed since the claim', 'COLLECTOR_PROFILE_CHANGED');
  }
  return row;
}

// The answer schemas (zod, ~150 ms to load) are imported when the first request is already on its
// way, so loading them overlaps the Hub's answer instead of delaying the request.
async function loadSchemas() {
  const [collector, common, ops] = await Promise.all([import('../../core/contract/collector.js'), import('../../core/contract/common.js'), import('../../core/contract/ops.js')]);
  const schemas = {
    collector_claim: collector.CollectorClaimAnswer,
    collector_descriptor: collector.DescriptorAnswer,
    collector_finalize: collector.FinalizeAnswer,
    reconcile_collector_finalization: collector.ReconcileFinalizationAnswer,
    collector_upload: collector.UploadAnswer,
    status: ops.ANSWERS.status,
  } as const;
  return { schemas, formatIssues: common.formatIssues, Descriptor: collector.Descriptor };
}
let schemasLoading: ReturnType<typeof loadSchemas> | undefined;
/** The answer schemas and the descriptor schema, loaded once. */
export function answerSchemas(): ReturnType<typeof loadSchemas> {
  schemasLoading ??= loadSchemas();
  return schemasLoading;
}

/**
 * Parse options of a one-shot CLI check: zod's compiled fast path costs more to generate (tens of ms
 * for these answers) than one interpreted parse; the checks are the same.
 */
export const ONE_SHOT = { jitless: true } as const;

type SchemaOp = 'collector_claim' | 'collector_descriptor' | 'collector_finalize' | 'reconcile_collector_finalization' | 'collector_upload' | 'status';

export class CollectorSession {
  readonly client: HubClient;
  constructor(inv: Invocation, timeoutMs?: number) {
    this.client = new HubClient({
      endpoint: stringOpt(inv, 'endpoint'),
      ...caFileOpt(inv),
      repository: repositoryOpt(inv),
      profile: idOpt(inv, 'profile'),
      token: readTokenFile(stringOpt(inv, 'token-file')),
      maxAnswerBytes: ANSWER_MAX_BYTES,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
  }

  private async check(op: SchemaOp, pending: Promise<JsonValue>): Promise<Record<string, JsonValue>> {
    const loading = answerSchemas();
    loading.catch(() => undefined);
    const answer = await pending;
    const { schemas, formatIssues } = await loading;
    const r = (schemas[op] as z.ZodType).safeParse(answer, ONE_SHOT);
    if (!r.success) throw malformed(formatIssues(r.error));
    return answer as Record<string, JsonValue>;
  }

  call(op: 'collector_claim' | 'collector_descriptor' | 'collector_finalize' | 'reconcile_collector_finalization' | 'status', body: JsonValue): Promise<Record<string, JsonValue>> {
    return this.check(op, this.client.call(body));
  }

  upload(bytes: Buffer, onSent?: () => void): Promise<Record<string, JsonValue>> {
    return this.check('collector_upload', this.client.upload(bytes, onSent));
  }

  close(): void {
    this.client.close();
  }
}

export async function runCollectorCall(op: 'collector_claim' | 'collector_descriptor' | 'collector_finalize' | 'reconcile_collector_finalization', ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const s = new CollectorSession(inv);
  try {
    switch (op) {
      case 'collector_claim': {
        const { subject, tasks } = localSubject(inv);
        const task = pickTask(inv, tasks);
        const { LEASE_MAX_MS, LEASE_MIN_MS } = await import('../../core/contract/mutations.js');
        const lease = intOpt(inv, 'lease-ms', LEASE_MIN_MS, LEASE_MAX_MS)!;
        const requestId = newRequestId(ctx, inv);
        const a = await s.call(op, {
          operation: op,
          request_id: requestId,
          subject: subjectToJson(subject),
          task_id: task.task_id,
          task_digest: task.task_digest,
          execution_operation_id: executionOperationId(inv, requestId, task.task_id),
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
      case 'reconcile_collector_finalization': {
        const { subject } = localSubject(inv);
        const a = await s.call(op, { operation: op, request_id: newRequestId(ctx, inv), subject: subjectToJson(subject) });
        return { data: a, text: `receipt ${String(a.receipt_digest)} (v2, ${(a.transfers as JsonValue[]).length} transfer(s), ${String(a.finalization)})` };
      }
    }
  } finally {
    s.close();
  }
}
