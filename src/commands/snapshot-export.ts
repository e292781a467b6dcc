// `snapshot export --revision R --out DIR`: materialize an immutable revision as a working tree.

import { exportSnapshot } from '../core/native/export.js';
import type { CommandContext, CommandResult, Invocation } from '../cli/types.js';
import { stringOpt } from './options.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const r = exportSnapshot(stringOpt(inv, 'data-dir'), stringOpt(inv, 'revision'), stringOpt(inv, 'out'));
  return { data: { ...r }, text: `exported ${r.revision} to ${r.out} (${r.file_count} files, ${r.bytes} bytes)` };
}
