// tree-ring recall-quality: runs the recall quality query set over a fixture store and records the
// figures as certification evidence (src/core/treering/recall-quality.ts).

import * as path from 'node:path';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { recallQualityText, runRecallQuality } from '../../core/treering/recall-quality.js';
import { str } from './common.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const sourceRoot = str(inv, 'source-root') ?? '.';
  const evidenceDir = str(inv, 'evidence-dir') ?? path.join(sourceRoot, 'target', 'tree-ring-certification');
  const report = runRecallQuality(sourceRoot, evidenceDir, ctx.cwd);
  // Like upstream, the outcome is the report's status (pass, fail, needs_review), not the exit code.
  return { raw: inv.json ? `${JSON.stringify(report)}\n` : recallQualityText(report) };
}
