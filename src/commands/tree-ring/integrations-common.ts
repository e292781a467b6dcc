// Shared option handling of the tree-ring integrations commands (kept free of heavy imports: the
// lifecycle hook command uses it).

import { usageError } from '../../core/errors.js';
import { isMaintainedHarness, type MaintainedHarness } from '../../core/treering/activation/constants.js';
import { resolveRoot, type ActivationRoot } from '../../core/treering/activation/root.js';
import type { CommandContext, Invocation } from '../../cli/types.js';
import { optionalStringOpt, stringOpt } from '../options.js';

export function harnessOpt(inv: Invocation): MaintainedHarness {
  const h = stringOpt(inv, 'harness');
  if (!isMaintainedHarness(h)) throw usageError(`--harness must be one of codex, claude-code, pi, agent-zero (got ${JSON.stringify(h)})`);
  return h;
}

export function rootFrom(ctx: CommandContext, inv: Invocation): ActivationRoot {
  return resolveRoot(ctx.cwd, optionalStringOpt(inv, 'root'));
}
