// agentscm authority collector-profile install --data-dir D --file F: installs an immutable collector
// profile for one exact registration epoch (docs/COLLECTOR.md). Separate from enrollment.

import { Authority } from '../../core/authority/store.js';
import { collectorProfileBytes, collectorProfileDigest, type CollectorProfile } from '../../core/collector/transfer.js';
import { reviewBasisProblem, reviewProfileJson, type ReviewCollectorProfile } from '../../core/collector/review.js';
import { canonicalJsonBytes } from '../../core/canonical/json.js';
import { DOMAINS, domainDigest } from '../../core/crypto/digest.js';
import { badInput } from '../../core/errors.js';
import { decodeContract } from '../../core/contract/common.js';
import { CollectorProfileFile } from '../../core/contract/collector.js';
import { readBoundedInput } from '../../core/fs/safe.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { stringOpt } from '../options.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const raw = readBoundedInput(stringOpt(inv, 'file'), 64 * 1024, 'collector profile file');
  const doc = decodeContract(raw, CollectorProfileFile, { maxBytes: 64 * 1024, what: 'collector profile file', code: 'INVALID_COLLECTOR_PROFILE' });
  let canonical: Buffer;
  if (doc.kind === 'review') {
    const problem = reviewBasisProblem(doc.reviewer);
    if (problem) throw badInput(problem, 'REVIEW_BASIS_REFUSED');
    canonical = canonicalJsonBytes(reviewProfileJson(doc as ReviewCollectorProfile));
  } else {
    canonical = collectorProfileBytes(doc as CollectorProfile);
  }
  const a = Authority.open(stringOpt(inv, 'data-dir'));
  try {
    const row = a.installCollectorProfile({
      registration_id: doc.registration_id,
      registration_epoch: doc.registration_epoch,
      repository: doc.repository,
      profile: doc.profile,
      step_id: doc.step_id,
      canonical,
      profile_digest: doc.kind === 'review' ? domainDigest(DOMAINS.collectorProfile, canonical) : collectorProfileDigest(doc as CollectorProfile),
      kind: doc.kind,
      ...(doc.kind === 'review' ? { policy_digest: doc.policy_digest } : {}),
    });
    return {
      data: { install_id: row.install_id, profile_digest: row.profile_digest, registration_id: row.registration_id, seq: row.seq, changed: row.changed },
      text: `${row.changed ? 'installed' : 'already current'}: collector profile ${row.install_id} (${row.profile_digest}) for registration ${row.registration_id}`,
    };
  } finally {
    a.close();
  }
}
