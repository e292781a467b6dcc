// tree-ring export [--output FILE]: portable JSONL (header line, then one envelope per memory).

import * as path from 'node:path';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { replaceDurably } from '../../core/fs/safe.js';
import { exportStore } from '../../core/treering/service.js';
import { flag, rootOf, str } from './common.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const root = rootOf(ctx, inv);
  const { jsonl, report } = exportStore(root.abs, flag(inv, 'include-sensitive'), flag(inv, 'include-superseded'));
  const output = str(inv, 'output');
  if (output === undefined) return { raw: jsonl };
  replaceDurably(path.resolve(ctx.cwd, output), jsonl, 0o600);
  const data = { ok: true, path: output, ...report };
  return { data, text: `Tree Ring Memory export complete: memories=${report.memory_count} path=${output}` };
}
