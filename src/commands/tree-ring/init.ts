// tree-ring init: creates (or migrates) the store and the project-local guidance files. Kept small so
// that harness activation can extend it with its own step.

import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { initStore } from '../../core/treering/init.js';
import { rootOf } from './common.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const root = rootOf(ctx, inv);
  const store = initStore(root.abs);
  const data = {
    ok: true,
    root: root.display,
    sqlite_path: `${root.display.replace(/\/+$/, '')}/memory.sqlite`,
    message: 'Tree Ring Memory initialized',
    agent_awareness: store.agentAwareness,
  };
  const lines = [`Tree Ring Memory initialized at ${root.display}`, 'No cloud sync; secret-like memory is blocked by default.'];
  if (store.agentAwareness.created.length) lines.push('Agent awareness files created:', ...store.agentAwareness.created.map((p) => `  ${p}`));
  if (store.agentAwareness.existing.length) lines.push('Agent awareness files already present:', ...store.agentAwareness.existing.map((p) => `  ${p}`));
  return { data, text: lines.join('\n') };
}
