// `snapshot repack`: rewrite the data dir's snapshot packs as one (each checkpoint adds a pack).

import type { CommandContext, CommandResult, Invocation } from '../cli/types.js';
import { SnapshotStore } from '../core/native/snapshot.js';
import { stringOpt } from './options.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const r = new SnapshotStore(stringOpt(inv, 'data-dir')).repack();
  const text =
    (r.packs_before <= 1
      ? `nothing to repack (${r.packs_before} pack${r.packs_before === 1 ? '' : 's'})`
      : `repacked ${r.packs_before} packs into ${r.packs_after} (${r.blobs} blobs, ${r.bytes} bytes)` + (r.kept.length > 0 ? `; kept ${r.kept.length} damaged: ${r.kept.join(', ')}` : '')) +
    (r.removed_temporary.length > 0 ? `; removed ${r.removed_temporary.length} temporary pack${r.removed_temporary.length === 1 ? '' : 's'} a killed writer left` : '');
  return { data: { ...r }, text };
}
