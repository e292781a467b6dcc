// `agentscm init-repo`: write the managed "Workflow tasks" block into the agents' instruction files.

import * as path from 'node:path';
import type { CommandContext, CommandResult, Invocation } from '../cli/types.js';
import { initRepo } from '../core/repo/instructions.js';
import { optionalStringOpt } from './options.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const root = path.resolve(ctx.cwd, optionalStringOpt(inv, 'dir') ?? '.');
  const r = initRepo(root);
  return {
    data: { dir: root, files: r.files },
    text: r.files.map((f) => `${f.changed ? 'wrote' : 'unchanged'}: ${f.path}`).join('\n'),
  };
}
