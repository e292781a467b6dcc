// tree-ring init: creates (or migrates) the store and the project-local guidance files, then, for the
// project-local root (.tree-ring), the harness activation: manifest, owned bridges, the passive Agent
// Zero binding and the launcher, all create-only (src/core/treering/activation/init.ts).

import * as path from 'node:path';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { initActivation, type InitResult as ActivationInit } from '../../core/treering/activation/init.js';
import { resolveRoot } from '../../core/treering/activation/root.js';
import { initStore } from '../../core/treering/init.js';
import { rootOf } from './common.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const root = rootOf(ctx, inv);
  const dryRun = inv.opts['dry-run'] === true;
  // Activation binds harnesses to the project's own .tree-ring; another root is a store only.
  const projectLocal = path.basename(root.abs) === '.tree-ring';
  const lines: string[] = [];
  let data: Record<string, unknown> = { ok: true, root: root.display, dry_run: dryRun };
  if (!dryRun) {
    const store = initStore(root.abs);
    data = {
      ...data,
      sqlite_path: `${root.display.replace(/\/+$/, '')}/memory.sqlite`,
      message: 'Tree Ring Memory initialized',
      agent_awareness: store.agentAwareness,
    };
    lines.push(`Tree Ring Memory initialized at ${root.display}`, 'No cloud sync; secret-like memory is blocked by default.');
    if (store.agentAwareness.created.length) lines.push('Agent awareness files created:', ...store.agentAwareness.created.map((p) => `  ${p}`));
    if (store.agentAwareness.existing.length) lines.push('Agent awareness files already present:', ...store.agentAwareness.existing.map((p) => `  ${p}`));
  }
  let activation: ActivationInit | undefined;
  if (projectLocal) {
    activation = initActivation(resolveRoot(ctx.cwd, root.abs), { dryRun, env: ctx.env });
    data = { ...data, ...activation, root: root.display, activation: activation.manifest };
    lines.push(`Harness activation${dryRun ? ' (dry run)' : ''}: store ${activation.store_id}, manifest ${activation.manifest}`);
    for (const p of activation.created) lines.push(`  created ${p}`);
    for (const p of activation.preserved) lines.push(`  kept ${p}`);
    for (const h of activation.integrations) {
      lines.push(`${h.harness_id}: ${h.state}${h.detail ? ` (${h.detail})` : ''}`);
      lines.push(`  next: ${h.next_step}`);
    }
  } else {
    lines.push('Harness activation skipped: it binds only a project-local .tree-ring root.');
  }
  return { data, text: lines.join('\n') };
}
