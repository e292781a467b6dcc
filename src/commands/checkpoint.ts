import { subjectToJson } from '../core/authority/plan.js';
import { checkpoint } from '../core/native/checkpoint.js';
import type { CommandContext, CommandResult, Invocation } from '../cli/types.js';
import { idArg, idOpt, repositoryOpt, stringOpt } from './options.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const r = checkpoint(stringOpt(inv, 'data-dir'), {
    repository: repositoryOpt(inv),
    profile: idOpt(inv, 'profile'),
    change_id: idArg(inv, 0, 'CHANGE'),
    workspace: stringOpt(inv, 'workspace'),
  });
  return {
    data: { subject: subjectToJson(r.subject), file_count: r.file_count, generation: r.generation, git: { ...r.git }, tasks: r.tasks.map((t) => ({ ...t })) },
    text: [
      `change ${r.subject.change_id} version ${r.subject.change_version}`,
      `revision ${r.subject.revision}`,
      `context_digest ${r.subject.context_digest}`,
      `policy_epoch ${r.subject.policy_epoch}`,
      `files ${r.file_count}`,
      `tasks ${r.tasks.length}`,
      ...r.tasks.map((t) => `  ${t.task_id} ${t.step_id}${t.required ? '' : ' (optional)'}`),
      ...(r.git.head ? [`git ${r.git.head} (${r.git.tree_matches ? 'the snapshot equals its tree' : 'the snapshot differs from its tree'})`] : []),
    ].join('\n'),
  };
}
