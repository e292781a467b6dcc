// agentscm authority collector-profile template --data-dir D --registration-id R --probe P --out F -- ARGV...:
// writes a command collector profile file (docs/COLLECTOR.md) from an enrollment of the data dir, the
// output of `agent-task runtime-probe --json` and a recipe, so that it can be installed as written.
// Create-only; installs nothing.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { Authority } from '../../core/authority/store.js';
import { runtimeIdentityDigest } from '../../collectors/runtime-probe.js';
import { decodeContract, validateContract } from '../../core/contract/common.js';
import { CommandProfileFile, RuntimeProbeOutput } from '../../core/contract/collector.js';
import { badInput, localState, notFound, usageError } from '../../core/errors.js';
import { publishCreateOnly, readBoundedInput } from '../../core/fs/safe.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { idOpt, intOpt, optionalStringOpt, stringOpt } from '../options.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const registrationId = idOpt(inv, 'registration-id');
  const out = path.resolve(ctx.cwd, stringOpt(inv, 'out'));
  const argv = [...inv.args];
  if (argv.length === 0) throw usageError('missing argument COMMAND (the check\'s argv, after --)');
  const timeoutMs = intOpt(inv, 'timeout-ms', 1_000, 6 * 3_600_000) ?? 60_000;
  const maxOutput = intOpt(inv, 'max-output-bytes', 0, 6_000_000) ?? 65_536;
  const workingDir = optionalStringOpt(inv, 'working-dir') ?? '/snapshot';

  const probe = decodeContract(readBoundedInput(stringOpt(inv, 'probe'), 64 * 1024, 'runtime probe file'), RuntimeProbeOutput, {
    maxBytes: 64 * 1024,
    what: 'runtime probe file (the output of agent-task runtime-probe --json)',
    code: 'INVALID_RUNTIME_PROBE',
  });
  if (runtimeIdentityDigest(probe.runtime_identity) !== probe.runtime_identity_digest) {
    throw badInput('the runtime probe file\'s runtime_identity_digest is not the digest of its runtime_identity', 'RUNTIME_PROBE_DIGEST_MISMATCH');
  }
  const image = optionalStringOpt(inv, 'image');
  if (image !== undefined && image !== probe.runtime_identity.image_id) {
    throw badInput(`--image ${image} is not the image the probe observed (${probe.runtime_identity.image_id}): probe that image`, 'PROBE_IMAGE_MISMATCH');
  }

  const a = Authority.open(stringOpt(inv, 'data-dir'), { readonly: true });
  let doc: CommandProfileFile;
  try {
    const e = a.getEnrollment(registrationId);
    if (!e) throw notFound(`no enrollment ${registrationId}`, 'ENROLLMENT_NOT_FOUND');
    const current = a.currentRegistration(e.repository, e.profile, e.step_id, e.executor_id);
    if (!current || current.registration_id !== e.registration_id) throw badInput('the registration is revoked or not the executor\'s current epoch', 'ENROLLMENT_NOT_CURRENT');
    const step = a.loadRequirement(a.requireProfile(e.repository, e.profile).requirement_digest).requirement.steps.find((s) => s.id === e.step_id);
    if (!step || step.action_class !== 'command_collector') {
      throw badInput(`step ${e.step_id} is not a command_collector step of the installed requirement`, 'NOT_A_COLLECTOR_STEP');
    }
    doc = validateContract(
      {
        version: 1,
        kind: 'command',
        repository: e.repository,
        profile: e.profile,
        step_id: e.step_id,
        registration_id: e.registration_id,
        registration_epoch: e.registration_epoch,
        recipe: { image_id: probe.runtime_identity.image_id, argv, working_dir: workingDir, timeout_ms: timeoutMs, max_output_bytes: maxOutput, network: 'none' },
        runtime_identity_digest: probe.runtime_identity_digest,
      },
      CommandProfileFile,
      'collector profile',
      'INVALID_COLLECTOR_PROFILE',
    );
  } finally {
    a.close();
  }

  const parent = fs.lstatSync(path.dirname(out), { throwIfNoEntry: false });
  if (!parent || !parent.isDirectory()) throw localState('the directory of --out does not exist', 'MISSING');
  if (!publishCreateOnly(out, `${JSON.stringify(doc, null, 2)}\n`, 0o644)) throw localState(`${out} already exists; refusing to overwrite it`, 'FILE_EXISTS');
  return {
    data: { file: out, profile: doc },
    text: `wrote ${out}: collector profile for registration ${doc.registration_id} (epoch ${doc.registration_epoch}, step ${doc.step_id}), ${JSON.stringify(doc.recipe.argv)} in ${doc.recipe.image_id}; install it with agentscm authority collector-profile install --file`,
  };
}
