// tree-ring welcome [--init] [--no-animation]: first-run onboarding. Without --init it only looks
// (nothing is created); with --init it initializes like `tree-ring init` and lists the project's
// adapters under `integrations`.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { flag, rootOf } from './common.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const { colorEnabled, welcomeDocument, welcomeText } = await import('../../core/treering/welcome.js');
  const root = rootOf(ctx, inv);
  const init = flag(inv, 'init');
  let agentAwareness: { created: string[]; existing: string[] } | null = null;
  let integrations: Array<{ harness_id: string; state: string; next_step: string }> | null = null;
  if (init) {
    const { initStore } = await import('../../core/treering/init.js');
    agentAwareness = initStore(root.abs).agentAwareness;
    // Adapter activation binds only the project's own .tree-ring, as `tree-ring init` does.
    if (path.basename(root.abs) === '.tree-ring') {
      const { initActivation } = await import('../../core/treering/activation/init.js');
      const { resolveRoot } = await import('../../core/treering/activation/root.js');
      const activation = initActivation(resolveRoot(ctx.cwd, root.abs), { dryRun: false });
      integrations = activation.integrations.map((h) => ({ harness_id: h.harness_id, state: h.state, next_step: h.next_step }));
    } else {
      integrations = [];
    }
  }
  const w = {
    root: root.display,
    initialized: init || fs.existsSync(path.join(root.abs, 'memory.sqlite')),
    initRequested: init,
    agentAwareness,
    integrations,
  };
  if (inv.json) return { raw: `${JSON.stringify(welcomeDocument(w))}\n` };
  return { raw: welcomeText(w, colorEnabled(ctx.stdout.isTTY, ctx.env)) };
}
