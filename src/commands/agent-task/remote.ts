// What a typed call takes from the Hub when there is no local data dir (another machine): the tasks of
// a Change's current subject, from a requirements call in the Change form ({"change_id": ...}), and
// the task a call names among them. The Hub derives the subject from its own authority.

import type { Task } from '../../core/authority/plan.js';
import type { JsonValue } from '../../core/canonical/json.js';
import { formatIssues } from '../../core/contract/common.js';
import { InstructionsAnswer, RequirementsAnswer } from '../../core/contract/ops.js';
import { AgentscmError, usageError } from '../../core/errors.js';
import type { HubClient } from '../../core/hub-client/client.js';
import type { Invocation } from '../../cli/types.js';
import { optId } from './local.js';

/** A task a call names: its identity, and its references' digests (asked for only when needed). */
export interface TaskRef {
  readonly task_id: string;
  readonly task_digest: string;
  references(): Promise<readonly { name: string; sha256: string }[]>;
}

const malformed = (why: string) => new AgentscmError('HUB_MALFORMED', 'HUB_MALFORMED', `the Hub answer failed validation: ${why}`);

export function localTaskRef(t: Task): TaskRef {
  return { task_id: t.task_id, task_digest: t.task_digest, references: async () => t.step.references };
}

interface WireTask {
  task_id: string;
  task_digest: string;
  step_id: string;
}

/** The current subject's tasks of a Change, as the Hub derives them. */
export async function remoteTasks(client: HubClient, changeId: string): Promise<WireTask[]> {
  const a = await client.call({ operation: 'requirements', change_id: changeId });
  const r = RequirementsAnswer.safeParse(a);
  if (!r.success) throw malformed(formatIssues(r.error));
  return r.data.tasks;
}

/** The task of --task-id or --step among the Hub's tasks; its references come from its instructions. */
export function pickWireTask(inv: Invocation, client: HubClient, changeId: string, tasks: readonly WireTask[]): TaskRef {
  const taskId = optId(inv, 'task-id');
  const step = optId(inv, 'step');
  if ((taskId === undefined) === (step === undefined)) throw usageError('name the task with exactly one of --task-id ID or --step STEP');
  const t = taskId !== undefined ? tasks.find((x) => x.task_id === taskId) : tasks.find((x) => x.step_id === step);
  if (!t) throw new AgentscmError('NOT_FOUND', 'TASK_NOT_FOUND', 'no such task for the current subject of this Change');
  return {
    task_id: t.task_id,
    task_digest: t.task_digest,
    references: async () => {
      const body: JsonValue = { operation: 'instructions', change_id: changeId, task_id: t.task_id, task_digest: t.task_digest, supported_schema_versions: [1] };
      const r = InstructionsAnswer.safeParse(await client.call(body));
      if (!r.success) throw malformed(formatIssues(r.error));
      return 'entrypoint' in r.data ? r.data.entrypoint.references : [];
    },
  };
}
