// Typed agent-task calls over authenticated HTTP: read the current subject from the local authority
// (--data-dir), or, without one, name the Change and let the Hub derive its current subject; send one
// operation, validate the Hub's answer strictly before trusting any of it.

import type { z } from 'zod';
import type { Task } from '../../core/authority/plan.js';
import { subjectToJson } from '../../core/authority/plan.js';
import type { Subject } from '../../core/authority/types.js';
import type { JsonValue } from '../../core/canonical/json.js';
import { formatIssues } from '../../core/contract/common.js';
import { ANSWERS, ANSWER_MAX_BYTES } from '../../core/contract/ops.js';
import { HEX64 } from '../../core/crypto/digest.js';
import { AgentscmError, badInput, EXIT_CODES, usageError } from '../../core/errors.js';
import { HubClient, readTokenFile } from '../../core/hub-client/client.js';
import { renderPlain } from '../../cli/run.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { hasDataDir, localSubject, pickTask } from './local.js';
import { localTaskRef, pickWireTask, remoteTasks, type TaskRef } from './remote.js';
import { caFileOpt, idArg, idOpt, intOpt, optionalStringOpt, repositoryOpt, stringOpt } from '../options.js';

type Operation = keyof typeof ANSWERS;

const malformed = (why: string) => new AgentscmError('HUB_MALFORMED', 'HUB_MALFORMED', `the Hub answer failed validation: ${why}`);

export async function runOperation(op: Operation, _ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const repository = repositoryOpt(inv);
  const profile = idOpt(inv, 'profile');
  const token = readTokenFile(stringOpt(inv, 'token-file'));
  const endpoint = stringOpt(inv, 'endpoint');

  const client = new HubClient({ endpoint, ...caFileOpt(inv), repository, profile, token, maxAnswerBytes: ANSWER_MAX_BYTES });
  let local: { subject: Subject; tasks: Task[] } | undefined;
  let task: TaskRef | undefined;
  let answer: JsonValue;
  try {
    let body: JsonValue;
    if (op === 'capabilities') {
      if (inv.args.length > 0) throw usageError('capabilities takes no CHANGE');
      body = { operation: 'capabilities' };
    } else {
      if (inv.args.length === 0) throw usageError(`${op} needs CHANGE`);
      const change = idArg(inv, 0, 'CHANGE');
      // Without the data dir the Hub derives the Change's current subject from its own authority.
      local = hasDataDir(inv) ? localSubject(inv, repository, profile) : undefined;
      const subject: Record<string, JsonValue> = local ? { subject: subjectToJson(local.subject) } : { change_id: change };
      const pick = async (): Promise<TaskRef> => (local ? localTaskRef(pickTask(inv, local.tasks)) : pickWireTask(inv, client, change, await remoteTasks(client, change)));
      const schemaVersion = () => intOpt(inv, 'schema-version', 1, 65535) ?? 1;
      switch (op) {
        case 'requirements':
        case 'next':
        case 'qualification':
          body = { operation: op, ...subject };
          break;
        case 'instructions':
          task = await pick();
          body = { operation: op, ...subject, task_id: task.task_id, task_digest: task.task_digest, supported_schema_versions: [schemaVersion()] };
          break;
        case 'reference': {
          task = await pick();
          const name = idOpt(inv, 'name');
          const sha = optionalStringOpt(inv, 'sha256') ?? (await task.references()).find((r) => r.name === name)?.sha256;
          if (sha === undefined) throw new AgentscmError('NOT_FOUND', 'REFERENCE_NOT_FOUND', `task has no reference named ${name} (pass --sha256 to ask anyway)`);
          if (!HEX64.test(sha)) throw badInput('--sha256 must be 64 lowercase hex characters', 'BAD_DIGEST');
          body = { operation: op, ...subject, task_id: task.task_id, task_digest: task.task_digest, name, expected_sha256: sha, expected_schema_version: schemaVersion() };
          break;
        }
        case 'status': {
          task = await pick();
          const attempt = optionalStringOpt(inv, 'attempt-id');
          body = { operation: op, ...subject, task_id: task.task_id, task_digest: task.task_digest, attempt_id: attempt === undefined ? null : idOpt(inv, 'attempt-id') };
          break;
        }
      }
    }
    answer = await client.call(body);
  } finally {
    client.close();
  }
  const schema = ANSWERS[op] as z.ZodType;
  const r = schema.safeParse(answer);
  if (!r.success) throw malformed(formatIssues(r.error));
  const a = answer as Record<string, JsonValue>;

  if (a.status === 'schema_mismatch') {
    const versions = a.server_schema_versions === undefined ? 'other schema versions' : `schema versions ${JSON.stringify(a.server_schema_versions)}`;
    throw new AgentscmError('SCHEMA_MISMATCH', 'SCHEMA_MISMATCH', `the Hub supports ${versions}; reinstall a matching agentscm`, {
      answer: a,
    });
  }
  // Cross-checks against the local authority: the Hub must be talking about the same subject.
  if (local) {
    const known = new Map(local.tasks.map((t) => [t.task_id, t.task_digest]));
    const checkTask = (id: JsonValue | undefined, digest: JsonValue | undefined) => {
      if (typeof id === 'string' && digest !== undefined && known.get(id) !== digest) throw malformed('task not derivable from the local authority');
    };
    if (op === 'qualification') {
      if (a.revision !== local.subject.revision) throw malformed('revision differs from the local subject');
      for (const t of a.tasks as Record<string, JsonValue>[]) checkTask(t.task_id, t.task_digest);
      const n = a.next as Record<string, JsonValue>;
      // reconcile may name an older subject's task (prior_subject_unresolved); a claim never does.
      if (typeof n.task_id === 'string' && n.operation !== 'reconcile' && !known.has(n.task_id)) throw malformed('next names an unknown task');
    }
    if (op === 'next' && a.task !== null) {
      const t = a.task as Record<string, JsonValue>;
      checkTask(t.task_id, t.task_digest);
    }
    if (op === 'requirements') for (const t of a.tasks as Record<string, JsonValue>[]) checkTask(t.task_id, t.task_digest);
  }
  if (task && (op === 'status' || op === 'instructions')) {
    const got = op === 'status' ? a : (a.entrypoint as Record<string, JsonValue>);
    if (got.task_id !== task.task_id || got.task_digest !== task.task_digest) throw malformed('answer is about another task');
  }

  if (op === 'qualification') {
    const exitCode = a.qualified === true ? EXIT_CODES.OK : EXIT_CODES.NOT_QUALIFIED;
    const failed = (a.failures as Record<string, JsonValue>[]).some((f) => f.code === 'collector_not_passed');
    // Why a check failed is in its retained record, on the collector host.
    const why = failed ? 'why: the check failed; `agentscm agent-task transfer show --attempt-id ATTEMPT --key-dir DIR` on the collector host prints its exit code and the end of its output\n' : '';
    return { data: a, exitCode, ...(failed ? { text: renderPlain(a) + why } : {}) };
  }
  if (op === 'reference') {
    if (a.status === 'available') return { data: a, text: String(a.content) };
    return { data: a, exitCode: EXIT_CODES.NOT_FOUND };
  }
  return { data: a };
}
