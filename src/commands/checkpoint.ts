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
    data: { subject: subjectToJson(r.subject), file_count: r.file_count, generation: r.generation, tasks: r.tasks.map((t) => ({ ...t })) },
    text:
      `change ${r.subject.change_id} version ${r.subject.change_version}\nrevision ${r.subject.revision}\n` +
      `context_digest ${r.subject.context_digest}\nfiles ${r.file_count}\ntasks ${r.tasks.length}`,
  };
}
