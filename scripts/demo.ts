// `npm run demo`: runs the main job as far as it exists, through the real CLI, and says what it did.
// Today: make a collector signing key, compute the observation digest of examples/assertion.json, sign
// it, verify the signature, and show that a changed assertion no longer verifies.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin', 'agentscm.js');
/** Relative to ROOT, where the commands run. */
const EXAMPLE = 'examples/assertion.json';

function say(text: string): void {
  process.stdout.write(`\n# ${text}\n`);
}

/** Runs `agentscm args`, echoes the command line and its output, and checks the exit code. */
function agentscm(args: string[], expectExit = 0, show: (stdout: string) => string = (o) => o): string {
  const shown = args.map((a) => (/^[0-9a-f]{64,}$/.test(a) ? `${a.slice(0, 12)}…` : a)).join(' ');
  process.stdout.write(`$ agentscm ${shown}\n`);
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', cwd: ROOT });
  process.stdout.write(show(r.stdout));
  if (r.stderr) process.stdout.write(r.stderr);
  if (r.status !== expectExit) throw new Error(`expected exit ${expectExit}, got ${r.status}`);
  process.stdout.write(`(exit ${r.status})\n`);
  return r.stdout;
}

const work = mkdtempSync(path.join(os.tmpdir(), 'agentscm-demo-'));
try {
  const keyDir = path.join(work, 'collector-key');
  say('1. Make the collector host\'s Ed25519 signing key in an owner-private directory (0700, key file 0600).');
  const key = JSON.parse(agentscm(['agent-task', 'key', 'generate', '--key-dir', keyDir, '--json'])) as { public_key: string };
  say('   A second generate never overwrites it (exit 9, LOCAL_STATE).');
  agentscm(['agent-task', 'key', 'generate', '--key-dir', keyDir], 9);

  say('2. Validate a TaskResultAssertion and compute its observation digest (seed 000 signing bytes).');
  agentscm(['agent-task', 'observation', 'digest', '--assertion', EXAMPLE, '--json'], 0, (stdout) => {
    const dg = JSON.parse(stdout) as { digest: string; signing_bytes_hex: string };
    const bytes = Buffer.from(dg.signing_bytes_hex, 'hex');
    return `digest: ${dg.digest}\nsigning_bytes_hex, decoded here as UTF-8 (${bytes.length} bytes):\n${bytes.toString('utf8')}\n`;
  });

  say('3. Sign the 32 raw digest bytes with the collector key.');
  const signed = JSON.parse(agentscm(['agent-task', 'observation', 'sign', '--assertion', EXAMPLE, '--key-dir', keyDir, '--json'])) as { signature: string };

  say('4. Anyone holding the public key verifies it (strict RFC 8032).');
  agentscm(['agent-task', 'observation', 'verify', '--assertion', EXAMPLE, '--signature', signed.signature, '--public-key', key.public_key]);

  say('5. Change one fact (the outcome) and the same signature no longer verifies (exit 10, VERIFY_FAILED).');
  const changed = path.join(work, 'changed-assertion.json');
  writeFileSync(changed, readFileSync(EXAMPLE, 'utf8').replace('"outcome": "passed",\n  "criteria"', '"outcome": "failed",\n  "criteria"'));
  agentscm(['agent-task', 'observation', 'verify', '--assertion', changed, '--signature', signed.signature, '--public-key', key.public_key], 10);

  say('Done: key made, observation digested, signed and verified; a tampered assertion was refused.');
} finally {
  rmSync(work, { recursive: true, force: true });
}
