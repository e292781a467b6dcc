// `land CHANGE`: trusted-local landing of the Change's approved current subject on its profile's target.

import { Authority } from '../core/authority/store.js';
import { land, landingJson } from '../core/integration/admission.js';
import { JournalReader } from '../core/integration/journal-read.js';
import type { CommandContext, CommandResult, Invocation } from '../cli/types.js';
import { idArg, idOpt, repositoryOpt, stringOpt } from './options.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const dataDir = stringOpt(inv, 'data-dir');
  const input = { repository: repositoryOpt(inv), profile: idOpt(inv, 'profile'), change_id: idArg(inv, 0, 'CHANGE'), actor: 'operator' };
  const authority = Authority.open(dataDir);
  let journal: JournalReader | undefined;
  try {
    const r = land(authority, () => (journal = JournalReader.open(dataDir)), input);
    return {
      data: landingJson(r),
      text: [`landed change ${r.change_id} version ${r.change_version} on ${r.target}`, `${r.base_revision ?? '(empty)'} -> ${r.revision}`, `receipt ${r.receipt_digest}`, `integration ${r.integration_id}`].join('\n'),
    };
  } finally {
    journal?.close();
    authority.close();
  }
}
