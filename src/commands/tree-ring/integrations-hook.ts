// `tree-ring integrations hook --harness codex|claude-code --input-json-stdin`: the lifecycle hook the
// hosts run. Stdout carries exactly the one JSON answer (or nothing when .tree-ring is absent).

import { usageError } from '../../core/errors.js';
import { runHook } from '../../core/treering/activation/hook.js';
import { readBounded, readFd0Bounded, STDIN_MAX_BYTES } from '../../core/treering/activation/input.js';
import { openPreflightRecall } from '../../core/treering/activation/recall.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { boolOpt } from '../options.js';
import { harnessOpt, rootFrom } from './integrations-common.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const harness = harnessOpt(inv);
  if (harness !== 'codex' && harness !== 'claude-code') throw usageError('integrations hook serves --harness codex or claude-code');
  if (!boolOpt(inv, 'input-json-stdin')) throw usageError('integrations hook reads its event with --input-json-stdin');
  // When stdin is this process's descriptor 0, read it without creating a stream.
  const direct = ctx.stdinFd === 0 ? readFd0Bounded(STDIN_MAX_BYTES) : undefined;
  const stdin = direct ?? (await readBounded(ctx.stdin, STDIN_MAX_BYTES));
  const root = rootFrom(ctx, inv);
  const answer = await runHook(root, harness, stdin, ctx.cwd, ctx.env, () => openPreflightRecall(root.memoryRoot));
  return { raw: answer.kind === 'silent' ? '' : answer.body };
}
