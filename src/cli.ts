// The command table: every group and verb of agentscm, as plain data. A command's module (and its heavy
// dependencies) is imported only when that command runs, so `--version`, `--help` and the hooks stay
// fast. Help text and the man pages are generated from this table (src/cli/help.ts, scripts/gen-man.ts).

import { runProgram, type Program } from './cli/run.js';
import type { CommandContext, CommandSpec, GroupSpec, OptionSpec } from './cli/types.js';
import { AGENTSCM_VERSION, TREE_RING_VERSION, versionLine } from './version.js';

// ---- shared option specs -------------------------------------------------------------------------

const KEY_DIR: OptionSpec = { flag: 'key-dir', value: 'DIR', help: 'owner-private directory holding the Ed25519 signing key', required: true };
const DOCKER_HOST: OptionSpec = {
  flag: 'docker-host',
  value: 'URL',
  help: 'Docker Engine API endpoint, unix:///path or tcp://host:port',
  defaultText: 'DOCKER_HOST, else /var/run/docker.sock, else the podman socket',
};
const ASSERTION: OptionSpec = { flag: 'assertion', value: 'FILE', help: 'TaskResultAssertion JSON file ("-" for stdin)', required: true };

// ---- groups --------------------------------------------------------------------------------------

export const GROUPS: readonly GroupSpec[] = [
  { path: ['agent-task'], summary: 'typed v1 agent-task calls, keys, observations, collection' },
  { path: ['agent-task', 'key'], summary: 'the collector host\'s Ed25519 signing key' },
  { path: ['agent-task', 'observation'], summary: 'registered-observation digests and signatures' },
];

// ---- commands ------------------------------------------------------------------------------------

export const COMMANDS: readonly CommandSpec[] = [
  {
    path: ['agent-task', 'key', 'generate'],
    summary: 'make an Ed25519 signing key in an owner-private directory',
    details:
      'Creates DIR (mode 0700) if absent and publishes the key create-only: an existing key is never overwritten. ' +
      'A symlinked DIR or one accessible by group or others is refused. Prints public_key and verification_key_id.',
    options: [KEY_DIR],
    load: () => import('./commands/agent-task/key-generate.js'),
  },
  {
    path: ['agent-task', 'key', 'show'],
    summary: 'print the public key and verification key id of an existing key',
    options: [KEY_DIR],
    load: () => import('./commands/agent-task/key-show.js'),
  },
  {
    path: ['agent-task', 'observation', 'digest'],
    summary: 'validate a TaskResultAssertion and print its observation digest and signing bytes',
    options: [ASSERTION],
    load: () => import('./commands/agent-task/observation-digest.js'),
  },
  {
    path: ['agent-task', 'observation', 'sign'],
    summary: 'sign the observation digest of a TaskResultAssertion with the key in DIR',
    options: [ASSERTION, KEY_DIR],
    load: () => import('./commands/agent-task/observation-sign.js'),
  },
  {
    path: ['agent-task', 'observation', 'verify'],
    summary: 'verify an Ed25519 signature over an assertion\'s observation digest (strict RFC 8032)',
    details: 'Exits 0 when the signature is valid and 10 (VERIFY_FAILED) when it is not.',
    options: [
      ASSERTION,
      { flag: 'signature', value: 'HEX', help: '128 lowercase hex characters', required: true },
      { flag: 'public-key', value: 'HEX', help: '64 lowercase hex characters', required: true },
    ],
    load: () => import('./commands/agent-task/observation-verify.js'),
  },
  {
    path: ['agent-task', 'runtime-probe'],
    summary: 'observe the OCI backend and a pinned image and print the runtime identity digest',
    details:
      'Asks the Docker Engine API (Docker, or podman\'s `podman system service`) for the engine name and version, API ' +
      'version, OS/architecture and default OCI runtime, and inspects IMAGE_ID, which must be a full sha256:<64 hex> ID ' +
      'of an image already present: tags are refused and nothing is ever pulled. Prints the canonical runtime identity ' +
      'and runtime_identity_digest, the value a collector profile pins. Exits 12 (RUNTIME_UNAVAILABLE) when no engine ' +
      'answers or the image is missing.',
    options: [DOCKER_HOST, { flag: 'image', value: 'IMAGE_ID', help: 'full image ID, sha256:<64 hex>', required: true }],
    load: () => import('./commands/agent-task/runtime-probe.js'),
  },
];

// ---- programs ------------------------------------------------------------------------------------

export const AGENTSCM: Program = {
  name: 'agentscm',
  version: AGENTSCM_VERSION,
  versionLine: versionLine('agentscm'),
  commands: COMMANDS,
  groups: GROUPS,
  defaultErrorPolicy: 'agentscm',
};

/** `tree-ring X` is `agentscm tree-ring X`: the same specs with the group word dropped. */
export const TREE_RING: Program = {
  name: 'tree-ring',
  version: TREE_RING_VERSION,
  versionLine: versionLine('tree-ring'),
  commands: COMMANDS.filter((c) => c.path[0] === 'tree-ring').map((c) => ({ ...c, path: c.path.slice(1) })),
  groups: GROUPS.filter((g) => g.path[0] === 'tree-ring' && g.path.length > 1).map((g) => ({ ...g, path: g.path.slice(1) })),
  defaultErrorPolicy: 'tree-ring',
  exitStatus: [
    [0, 'success'],
    [2, 'any error, following upstream Tree Ring: one line "error: ..." on stderr and nothing on stdout'],
  ],
};

export function processContext(program: 'agentscm' | 'tree-ring'): CommandContext {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd(), program };
}

export async function main(argv: readonly string[], program: 'agentscm' | 'tree-ring'): Promise<number> {
  // A reader that went away (`agentscm … | head`) is not an error worth a stack trace.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  });
  return runProgram(program === 'agentscm' ? AGENTSCM : TREE_RING, argv, processContext(program));
}
