// `approve CHANGE`: trusted-local approval of the Change's current subject after admission's recheck.

import { Authority } from '../core/authority/store.js';
import { HEX64 } from '../core/crypto/digest.js';
import { badInput } from '../core/errors.js';
import { approvalJson, approve } from '../core/integration/admission.js';
import { JournalReader } from '../core/integration/journal-read.js';
import type { CommandContext, CommandResult, Invocation } from '../cli/types.js';
import { idArg, idOpt, optionalStringOpt, repositoryOpt, stringOpt } from './options.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const dataDir = stringOpt(inv, 'data-dir');
  const revision = optionalStringOpt(inv, 'revision');
  if (revision !== undefined && !HEX64.test(revision)) throw badInput('--revision must be 64 lowercase hex characters', 'BAD_REVISION');
  const input = { repository: repositoryOpt(inv), profile: idOpt(inv, 'profile'), change_id: idArg(inv, 0, 'CHANGE'), actor: 'operator', ...(revision !== undefined ? { revision } : {}) };
  const authority = Authority.open(dataDir);
  let journal: JournalReader | undefined;
  try {
    const r = approve(authority, () => (journal = JournalReader.open(dataDir)), input);
    return {
      data: approvalJson(r),
      text: [`approved change ${r.change_id} version ${r.change_version}`, `revision ${r.revision}`, `receipt ${r.receipt_digest}`, `approval ${r.approval_id}`].join('\n'),
    };
  } finally {
    journal?.close();
    authority.close();
  }
}
