// `agentscm receipt export CHANGE --out FILE`: ask the Hub for the signed receipt bundle of the
// Change's current subject, check it against the key it names before writing it (a broken bundle is
// never written), and write it create-only; --sigstore-out also writes the Sigstore bundle alone.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { subjectToJson } from '../../core/authority/plan.js';
import { canonicalJson, canonicalJsonBytes, type JsonValue } from '../../core/canonical/json.js';
import { verifyBundle } from '../../core/attest/receipt-bundle.js';
import { BUNDLE_MAX_BYTES } from '../../core/contract/export.js';
import { parsePublicKeyHex } from '../../core/crypto/ed25519.js';
import { AgentscmError, badInput, isAgentscmError } from '../../core/errors.js';
import { HubClient, readTokenFile } from '../../core/hub-client/client.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { localSubject } from '../agent-task/local.js';
import { caFileOpt, idOpt, optionalStringOpt, repositoryOpt, stringOpt } from '../options.js';

function writeCreateOnly(file: string, text: string): void {
  try {
    fs.writeFileSync(file, text, { flag: 'wx', mode: 0o644 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw badInput(`${file} exists; refusing to overwrite it`, 'OUT_EXISTS');
    throw e;
  }
}

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const repository = repositoryOpt(inv);
  const profile = idOpt(inv, 'profile');
  const out = path.resolve(ctx.cwd, stringOpt(inv, 'out'));
  const sigOpt = optionalStringOpt(inv, 'sigstore-out');
  const sigOut = sigOpt === undefined ? undefined : path.resolve(ctx.cwd, sigOpt);
  for (const f of [out, sigOut]) if (f !== undefined && fs.existsSync(f)) throw badInput(`${f} exists; refusing to overwrite it`, 'OUT_EXISTS');
  const token = readTokenFile(stringOpt(inv, 'token-file'));
  const { subject } = localSubject(inv, repository, profile);
  const client = new HubClient({ endpoint: stringOpt(inv, 'endpoint'), ...caFileOpt(inv), repository, profile, token, maxAnswerBytes: BUNDLE_MAX_BYTES });
  let answer: JsonValue;
  try {
    answer = await client.call({ operation: 'receipt_bundle', subject: subjectToJson(subject) });
  } finally {
    client.close();
  }
  const bytes = canonicalJsonBytes(answer);
  const malformed = (why: string) => new AgentscmError('HUB_MALFORMED', 'HUB_MALFORMED', `the Hub's bundle failed validation: ${why}`);
  const hubKey = (answer as { hub_key?: { public_key?: unknown } } | null)?.hub_key?.public_key;
  if (typeof hubKey !== 'string') throw malformed('no hub_key');
  let verified;
  try {
    verified = verifyBundle(bytes, parsePublicKeyHex(hubKey), subject.revision);
  } catch (e) {
    throw malformed(isAgentscmError(e) ? e.message : 'unreadable');
  }
  writeCreateOnly(out, canonicalJson(answer) + '\n');
  if (sigOut !== undefined) writeCreateOnly(sigOut, canonicalJson((answer as { sigstore_bundle: JsonValue }).sigstore_bundle) + '\n');
  const data = { out, ...(sigOut !== undefined ? { sigstore_out: sigOut } : {}), hub_public_key: hubKey, ...verified };
  return {
    data,
    text: `wrote ${out}: receipt ${verified.receipt_digest} of revision ${verified.revision}, signed by Hub key ${verified.hub_key_id}` + (sigOut !== undefined ? `\nwrote ${sigOut}: the Sigstore bundle` : ''),
  };
}
