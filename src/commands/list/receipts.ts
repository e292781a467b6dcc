// `agentscm receipt list`: the receipts the data dir's journal retains (digest, subject and time; never
// the body). A data dir whose Hub has made no journal yet has none.

import { assertPrivateDir } from '../../core/fs/safe.js';
import { JournalReader } from '../../core/integration/journal-read.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';
import { listResult, repositoryFilter, when } from './table.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const dataDir = stringOpt(inv, 'data-dir');
  const repository = repositoryFilter(inv);
  assertPrivateDir(dataDir, 'data dir');
  const j = JournalReader.open(dataDir);
  try {
    const rows = j === undefined ? [] : j.receipts(repository);
    return listResult('receipts', 'receipts', rows, ['RECEIPT_DIGEST', 'REPOSITORY', 'PROFILE', 'CHANGE_ID', 'VERSION', 'EPOCH', 'REVISION', 'CREATED'], (r) => [
      r.receipt_digest, r.repository, r.profile, r.change_id, r.change_version, r.policy_epoch, r.revision, when(r.created_at),
    ]);
  } finally {
    j?.close();
  }
}
