// `tree-ring integrations certify`: records the current verified status as JSON and Markdown evidence
// under .tree-ring/activation/certification/ (create-only). Not needed for initialization.

import { certify } from '../../core/treering/activation/certify.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { rootFrom } from './integrations-common.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const r = certify(rootFrom(ctx, inv), ctx.env, new Date());
  return { data: r, text: `certification evidence:\n  ${r.json_path}\n  ${r.markdown_path}\nactive: ${r.active.join(', ') || 'none'}` };
}
