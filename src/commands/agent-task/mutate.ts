// Typed task mutations over authenticated HTTP: claim, heartbeat, cancel, reconcile, result, and the
// side-effect-free recovery read. Every mutation carries a request_id; when the caller gives none, one is
// generated and printed (stderr, and in the answer) so that a script can retry the identical request.

import type { z } from 'zod';
import { subjectToJson } from '../../core/authority/plan.js';
import { Authority } from '../../core/authority/store.js';
import { parseStrictJson, type JsonValue } from '../../core/canonical/json.js';
import { ASSERTION_MAX_BYTES, assertionToJson, assertionWireBytes, observationDigest, validateAssertion } from '../../core/contract/assertion.js';
import { formatIssues } from '../../core/contract/common.js';
import { LEASE_MAX_MS, LEASE_MIN_MS, MUTATION_ANSWERS } from '../../core/contract/mutations.js';
import { ANSWER_MAX_BYTES } from '../../core/contract/ops.js';
import { sign, toHex, verificationKeyId } from '../../core/crypto/ed25519.js';
import { loadKey } from '../../core/crypto/keystore.js';
import { AgentscmError, usageError } from '../../core/errors.js';
import { readBoundedInput } from '../../core/fs/safe.js';
import { HubClient, readTokenFile } from '../../core/hub-client/client.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { executionOperationId, hasDataDir, localSubject, newRequestId, optId, pickTask } from './local.js';
import { pickWireTask, remoteTasks } from './remote.js';
import { boolOpt, caFileOpt, idArg, idOpt, intOpt, optionalStringOpt, repositoryOpt, stringOpt } from '../options.js';

type Op = keyof typeof MUTATION_ANSWERS;

/** The same answer as the Hub's 413 assertion_too_large (BAD_INPUT, code ASSERTION_TOO_LARGE). */
const assertionTooLarge = () => new AgentscmError('BAD_INPUT', 'ASSERTION_TOO_LARGE', `the assertion is over the ${ASSERTION_MAX_BYTES}-byte bound`);

const malformed = (why: string) => new AgentscmError('HUB_MALFORMED', 'HUB_MALFORMED', `the Hub answer failed validation: ${why}`);

class Session {
  readonly client: HubClient;
  constructor(readonly inv: Invocation) {
    this.client = new HubClient({
      endpoint: stringOpt(inv, 'endpoint'),
      ...caFileOpt(inv),
      repository: repositoryOpt(inv),
      profile: idOpt(inv, 'profile'),
      token: readTokenFile(stringOpt(inv, 'token-file')),
      maxAnswerBytes: ANSWER_MAX_BYTES,
    });
  }

  async call(op: Op, body: JsonValue): Promise<Record<string, JsonValue>> {
    const answer = await this.client.call(body);
    const r = (MUTATION_ANSWERS[op] as z.ZodType).safeParse(answer);
    if (!r.success) throw malformed(formatIssues(r.error));
    const a = answer as Record<string, JsonValue>;
    if (op !== 'recovery' && a.operation !== op) throw malformed('answer is for another operation');
    return a;
  }

  close(): void {
    this.client.close();
  }
}

/** The exact binding of the named (or current) attempt of a task, read side-effect free from the Hub. */
async function attemptBinding(s: Session, inv: Invocation): Promise<Record<string, JsonValue>> {
  const taskId = idOpt(inv, 'task-id');
  const env = await s.call('recovery', { operation: 'recovery', subject: null, task_id: taskId, attempt_id: optId(inv, 'attempt-id') ?? null, request_id: null });
  const attempt = env.attempt as Record<string, JsonValue> | null;
  if (!attempt) throw new AgentscmError('NOT_FOUND', 'ATTEMPT_NOT_FOUND', 'the task has no attempt');
  if (attempt.task_id !== taskId) throw malformed('answer is about another task');
  return attempt;
}

export async function runMutation(op: Op, ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const session = new Session(inv);
  try {
    switch (op) {
      case 'claim': {
        // Without the data dir the Hub derives the Change's current subject (and its tasks) itself.
        const change = idArg(inv, 0, 'CHANGE');
        const local = hasDataDir(inv) ? localSubject(inv, repositoryOpt(inv), idOpt(inv, 'profile')) : undefined;
        const task = local ? pickTask(inv, local.tasks) : pickWireTask(inv, session.client, change, await remoteTasks(session.client, change));
        const lease = intOpt(inv, 'lease-ms', LEASE_MIN_MS, LEASE_MAX_MS)!;
        const requestId = newRequestId(ctx, inv);
        const body = {
          operation: 'claim',
          request_id: requestId,
          ...(local ? { subject: subjectToJson(local.subject) } : { change_id: change }),
          task_id: task.task_id,
          task_digest: task.task_digest,
          execution_operation_id: executionOperationId(inv, requestId, task.task_id),
          requested_lease_ms: lease,
          executor_id: optId(inv, 'executor-id') ?? null,
        };
        const a = await session.call('claim', body);
        const att = a.attempt as Record<string, JsonValue>;
        if (att.task_id !== task.task_id || att.task_digest !== task.task_digest) throw malformed('answer is about another task');
        if ((att.lease_ms as number) > lease) throw malformed('the issued lease is longer than requested');
        return { data: a };
      }
      case 'heartbeat':
      case 'cancel':
      case 'reconcile': {
        const att = await attemptBinding(session, inv);
        const executor = att.executor as Record<string, JsonValue> | null;
        const body: Record<string, JsonValue> = {
          operation: op,
          request_id: newRequestId(ctx, inv),
          task_id: att.task_id!,
          task_digest: att.task_digest!,
          attempt_id: att.attempt_id!,
          attempt_digest: att.attempt_digest!,
          execution_operation_id: att.execution_operation_id!,
          executor_id: executor ? executor.executor_id! : null,
          fence: intOpt(inv, 'fence') ?? (att.fence as number),
        };
        if (op === 'heartbeat') body.requested_lease_ms = intOpt(inv, 'lease-ms', LEASE_MIN_MS, LEASE_MAX_MS) ?? (att.lease_ms as number);
        else body.reason = optionalStringOpt(inv, 'reason') ?? '';
        return { data: await session.call(op, body) };
      }
      case 'result': {
        let file: Buffer;
        try {
          file = readBoundedInput(stringOpt(inv, 'assertion'), ASSERTION_MAX_BYTES, 'assertion file');
        } catch (e) {
          throw e instanceof AgentscmError && e.code === 'TOO_LARGE' ? assertionTooLarge() : e;
        }
        const raw = parseStrictJson(file, { maxBytes: ASSERTION_MAX_BYTES, what: 'assertion file' });
        if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new AgentscmError('BAD_INPUT', 'INVALID_ASSERTION', 'assertion file is not a JSON object');
        const doc: Record<string, JsonValue> = { ...raw };
        if (optionalStringOpt(inv, 'request-id') !== undefined || doc.request_id === undefined) doc.request_id = newRequestId(ctx, inv);
        let a = validateAssertion(doc.executor_provenance === undefined ? { ...doc, executor_provenance: null } : doc, 'assertion file');
        if (boolOpt(inv, 'sign')) {
          const key = loadKey(stringOpt(inv, 'key-dir'));
          const keyId = verificationKeyId(key.publicKey);
          // The attempt's executor binding comes from the Hub (side-effect free read); the key must be
          // that binding's key, and the registration must be current in the local authority.
          const env = await session.call('recovery', { operation: 'recovery', subject: null, task_id: a.task_id, attempt_id: a.attempt_id, request_id: null });
          const bound = (env.attempt as Record<string, JsonValue> | null)?.executor as Record<string, JsonValue> | null | undefined;
          if (!bound) throw new AgentscmError('CONFLICT', 'NO_EXECUTOR_BINDING', 'the attempt was claimed without --executor-id: it binds no executor');
          if (bound.verification_key_id !== keyId) throw new AgentscmError('CONFLICT', 'KEY_NOT_BOUND', 'the signing key is not the key of the attempt\'s executor');
          const auth = Authority.open(stringOpt(inv, 'data-dir'), { readonly: true });
          let e;
          try {
            const reg = auth.getEnrollment(String(bound.registration_id));
            e = reg && auth.currentRegistration(reg.repository, reg.profile, reg.step_id, reg.executor_id);
          } finally {
            auth.close();
          }
          if (!e || e.registration_id !== bound.registration_id) throw new AgentscmError('CONFLICT', 'ENROLLMENT_NOT_CURRENT', 'the executor\'s enrollment is revoked or no longer current');
          a = {
            ...a,
            trust_class: 'registered_executor_observation',
            executor: { registration_id: e.registration_id, executor_id: e.executor_id, registration_epoch: BigInt(e.registration_epoch), verification_key_id: e.verification_key_id },
            executor_provenance: null,
          };
          const digest = observationDigest(a);
          a = { ...a, executor_provenance: { observation_digest: digest, signature: toHex(sign(Buffer.from(digest, 'hex'), key.secretKey)) } };
        } else if (inv.opts['key-dir'] !== undefined) throw usageError('--key-dir needs --sign');
        // The bound the Hub applies (413 assertion_too_large), checked here on the same bytes first.
        if (assertionWireBytes(a).length > ASSERTION_MAX_BYTES) throw assertionTooLarge();
        const answer = await session.call('result', { operation: 'result', assertion: assertionToJson(a) });
        const att = answer.attempt as Record<string, JsonValue>;
        if (att.attempt_id !== a.attempt_id || att.task_id !== a.task_id) throw malformed('answer is about another attempt');
        return { data: answer };
      }
      case 'recovery': {
        // A Change names the subject of a task the Hub has not retained: read locally, else derived by the Hub.
        let subject: Record<string, JsonValue> = { subject: null };
        if (inv.args.length > 0) {
          subject = hasDataDir(inv) ? { subject: subjectToJson(localSubject(inv, repositoryOpt(inv), idOpt(inv, 'profile')).subject) } : { change_id: idArg(inv, 0, 'CHANGE') };
        }
        const taskId = idOpt(inv, 'task-id');
        const env = await session.call('recovery', {
          operation: 'recovery',
          ...subject,
          task_id: taskId,
          attempt_id: optId(inv, 'attempt-id') ?? null,
          request_id: optId(inv, 'request-id') ?? null,
        });
        if (env.task_id !== taskId) throw malformed('answer is about another task');
        return { data: env };
      }
    }
  } finally {
    session.close();
  }
}
