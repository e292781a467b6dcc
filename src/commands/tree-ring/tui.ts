// tree-ring tui [--tick-ms N]: the interactive terminal console. It needs a terminal on stdin and
// stdout (otherwise one error line, exit 2) and loads ink only after that check.

import { localState, usageError } from '../../core/errors.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { rootOf, uint } from './common.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  if (inv.json) throw usageError('--json is not supported with the interactive TUI');
  const tickMs = Math.min(5000, Math.max(50, uint(inv, 'tick-ms', 250, 3_600_000)));
  const stdinTTY = (ctx.stdin as NodeJS.ReadStream).isTTY === true;
  if (!stdinTTY || ctx.stdout.isTTY !== true) throw localState('tree-ring tui needs an interactive terminal (stdin and stdout must be a TTY)', 'NOT_A_TTY');
  const root = rootOf(ctx, inv);
  const { loadSnapshot, searchStore } = await import('../../core/treering/tui-data.js');
  const { runTui } = await import('./tui-view.js');
  await runTui({ root: root.display, load: () => loadSnapshot(root.abs), search: (q) => searchStore(root.abs, q), tickMs });
  return { raw: '' };
}
