// tree-ring import PATH [--dry-run] [--replace-existing]: portable JSONL in. Every line is validated
// before anything is written; --dry-run never opens the store.

import * as path from 'node:path';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { readBoundedInput } from '../../core/fs/safe.js';
import { badInput } from '../../core/errors.js';
import { importJsonl } from '../../core/treering/service.js';
import {flag, identity, rootOf} from './common.js';
import { writer } from './writer.js';

const MAX_IMPORT_BYTES = 512 << 20;

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const root = rootOf(ctx, inv);
  const file = inv.args[0]!;
  const bytes = readBoundedInput(file === '-' ? '-' : path.resolve(ctx.cwd, file), MAX_IMPORT_BYTES, 'import file');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw badInput('import file is not valid UTF-8', 'INVALID_UTF8');
  }
  const dryRun = flag(inv, 'dry-run');
  const report = importJsonl(root.abs, text, dryRun, flag(inv, 'replace-existing'), writer(ctx, identity(ctx, inv).agentProfile, 'cli:import'));
  const data = { ok: true, path: file, ...report };
  return {
    data,
    text: `Tree Ring Memory import complete: valid=${report.valid_count} inserted=${report.inserted_count} replaced=${report.replaced_count} skipped_duplicates=${report.skipped_duplicate_count} dry_run=${report.dry_run}`,
  };
}
