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
  { path: ['tree-ring'], summary: 'Tree Ring memory: local, ring-structured memory for agents (also the `tree-ring` program)' },
  { path: ['tree-ring', 'policy'], summary: 'coordinated write policy of a Tree Ring store' },
];

// ---- tree-ring ---------------------------------------------------------------------------------------

const TR_ROOT: OptionSpec = { flag: 'root', value: 'DIR', help: 'memory store root', defaultText: '.tree-ring' };
const TR_PROJECT: OptionSpec = { flag: 'project', value: 'NAME', help: 'project the memory belongs to' };
const TR_AGENT: OptionSpec = { flag: 'agent-profile', value: 'ID', help: 'agent profile (default $TREE_RING_AGENT_PROFILE)' };
const TR_WORKFLOW: OptionSpec = { flag: 'workflow-id', value: 'ID', help: 'workflow id (default $TREE_RING_WORKFLOW_ID)' };
const TR_SESSION: OptionSpec = { flag: 'session-id', value: 'ID', help: 'session id (default $TREE_RING_SESSION_ID)' };
const TR_TAG: OptionSpec = { flag: 'tag', value: 'TAG', help: 'a tag (repeatable)', repeatable: true };
const TR_DETAILS: OptionSpec = { flag: 'details', value: 'TEXT', help: 'longer context' };
const TR_IDENTITY: readonly OptionSpec[] = [TR_AGENT, TR_WORKFLOW, TR_SESSION];
const trCommand = (c: Omit<CommandSpec, 'errorPolicy'>): CommandSpec => ({ ...c, errorPolicy: 'tree-ring', options: [TR_ROOT, ...(c.options ?? [])] });

const TREE_RING_COMMANDS: readonly CommandSpec[] = [
  trCommand({
    path: ['tree-ring', 'init'],
    summary: 'create (or migrate) the memory store and its guidance files',
    details: 'Creates DIR/memory.sqlite (SQLite schema version 3) and, create-only, DIR/AGENTS.md, SKILL.md and CLI.md.',
    load: () => import('./commands/tree-ring/init.js'),
  }),
  trCommand({
    path: ['tree-ring', 'remember'],
    summary: 'store a memory',
    details:
      'Secret-like text (API keys, tokens, private keys, PASSWORD=... assignments, coordinator capabilities) is refused; health, ' +
      'financial, legal and personal-identifier words mark the memory sensitive (hidden from default recall). With --operation-id a ' +
      'retry of the same write returns the same memory and a different write under the same id is refused. --json prints the event.',
    args: [{ name: 'SUMMARY', help: 'the memory, one concise sentence', required: true }],
    options: [
      { flag: 'event-type', value: 'TYPE', help: 'decision, lesson, warning, preference, seed, ...', required: true },
      { flag: 'ring', value: 'RING', help: 'cambium, outer, inner, heartwood, scar or seed', defaultText: 'cambium' },
      { flag: 'scope', value: 'SCOPE', help: 'global, project, agent, workflow, session, tool, eval, manual, dox or revolve', defaultText: 'global' },
      TR_PROJECT,
      ...TR_IDENTITY,
      { flag: 'operation-id', value: 'ID', help: 'idempotency key of this logical write' },
      { flag: 'source-ref', value: 'REF', help: 'durable reference to where this came from' },
      TR_DETAILS,
      TR_TAG,
      { flag: 'salience', value: 'X', help: 'importance in [0,1]', defaultText: '0.5' },
      { flag: 'confidence', value: 'X', help: 'confidence in [0,1]', defaultText: '0.5' },
    ],
    load: () => import('./commands/tree-ring/remember.js'),
  }),
  trCommand({
    path: ['tree-ring', 'capture'],
    summary: 'strict agent-scoped write of an automatic capture checkpoint',
    details:
      'Scope is always agent; only normal-sensitivity memories; event type and ring must be one of preference/cambium, ' +
      'decision/cambium, lesson/cambium, correction/cambium, warning/scar, seed/seed; --source-ref must be agent-checkpoint:<id>. ' +
      'Every identity and provenance flag is required (no environment fallback). Retry-safe through --operation-id.',
    args: [{ name: 'SUMMARY', help: 'the memory, one concise sentence', required: true }],
    options: [
      { flag: 'event-type', value: 'TYPE', help: 'preference, decision, lesson, correction, warning or seed', required: true },
      { flag: 'ring', value: 'RING', help: 'cambium, scar or seed (must match the event type)', required: true },
      { ...TR_PROJECT, required: true },
      { flag: 'agent-profile', value: 'ID', help: 'agent profile', required: true },
      { flag: 'workflow-id', value: 'ID', help: 'workflow id', required: true },
      { flag: 'session-id', value: 'ID', help: 'session id', required: true },
      { flag: 'operation-id', value: 'ID', help: 'idempotency key, e.g. auto-<checkpoint>-1', required: true },
      { flag: 'source-ref', value: 'REF', help: 'agent-checkpoint:<checkpoint id>', required: true },
      TR_DETAILS,
      TR_TAG,
    ],
    load: () => import('./commands/tree-ring/capture.js'),
  }),
  trCommand({
    path: ['tree-ring', 'evidence'],
    summary: 'record an evidence-backed outcome (promoted: heartwood, rejected: scar, deferred: seed, observed: outer)',
    args: [{ name: 'SUMMARY', help: 'what the evidence showed', required: true }],
    options: [
      { flag: 'outcome', value: 'OUTCOME', help: 'observed, promoted, rejected or deferred', defaultText: 'observed' },
      { flag: 'evidence-ref', value: 'REF', help: 'file path, run id, checkpoint id, PR, issue or eval ref', required: true },
      TR_PROJECT,
      ...TR_IDENTITY,
      TR_DETAILS,
      { flag: 'score', value: 'X', help: 'evaluation score in [0,1]' },
      TR_TAG,
    ],
    load: () => import('./commands/tree-ring/evidence.js'),
  }),
  trCommand({
    path: ['tree-ring', 'recall'],
    summary: 'recall ranked memories (--json: an array of {memory, score, ranking})',
    details:
      'Full-text recall with every filter applied before the candidate limit: AND query first, then variants without one ' +
      'ring-intent word, then an OR fallback. Only normal-sensitivity, live (not superseded, expired or redacted) memories unless asked. ' +
      'Identity filters fall back to the TREE_RING_* environment variables. Never creates or modifies the store.',
    args: [{ name: 'QUERY', help: 'words to look for', required: true }],
    options: [
      TR_PROJECT,
      ...TR_IDENTITY,
      { flag: 'scope', value: 'SCOPE', help: 'only this scope' },
      { flag: 'ring', value: 'RING', help: 'only these rings (repeatable)', repeatable: true },
      { flag: 'event-type', value: 'TYPE', help: 'only these event types (repeatable)', repeatable: true },
      { flag: 'limit', value: 'N', help: 'at most N results (up to 10000)', defaultText: '8' },
      { flag: 'include-sensitive', help: 'also recall sensitive memories' },
      { flag: 'include-superseded', help: 'also recall superseded memories' },
      { flag: 'include-expired', help: 'also recall expired memories' },
    ],
    load: () => import('./commands/tree-ring/recall.js'),
  }),
  trCommand({
    path: ['tree-ring', 'forget'],
    summary: 'delete or redact a memory',
    details: 'delete removes the memory, its index entry and claims; redact keeps a sanitized placeholder whose id cannot be reused until deleted.',
    args: [{ name: 'MEMORY_ID', help: 'the memory id', required: true }],
    options: [
      { flag: 'mode', value: 'MODE', help: 'delete or redact', defaultText: 'delete' },
      { flag: 'reason', value: 'TEXT', help: 'why (required, not stored)', required: true },
      TR_AGENT,
    ],
    load: () => import('./commands/tree-ring/forget.js'),
  }),
  trCommand({
    path: ['tree-ring', 'export'],
    summary: 'export memories as portable JSONL (header line, then one envelope per memory)',
    options: [
      { flag: 'output', value: 'FILE', help: 'write to FILE (mode 0600) instead of stdout' },
      { flag: 'include-sensitive', help: 'include sensitive memories' },
      { flag: 'include-superseded', help: 'include superseded memories' },
    ],
    load: () => import('./commands/tree-ring/export.js'),
  }),
  trCommand({
    path: ['tree-ring', 'import'],
    summary: 'import memories from portable JSONL (also legacy exports)',
    args: [{ name: 'PATH', help: 'JSONL file ("-" for stdin)', required: true }],
    options: [
      { flag: 'dry-run', help: 'validate without writing (the store is not opened)' },
      { flag: 'replace-existing', help: 'replace memories with the same id' },
      TR_AGENT,
    ],
    load: () => import('./commands/tree-ring/import.js'),
  }),
  trCommand({
    path: ['tree-ring', 'policy', 'enable'],
    summary: 'switch to coordinated mode and print the coordinator capability once',
    options: [{ flag: 'coordinator', value: 'LABEL', help: 'a label for the coordinator' }],
    load: () => import('./commands/tree-ring/policy-enable.js'),
  }),
  trCommand({
    path: ['tree-ring', 'policy', 'status'],
    summary: 'show the write policy (read-only; never creates or migrates the store)',
    load: () => import('./commands/tree-ring/policy-status.js'),
  }),
  trCommand({
    path: ['tree-ring', 'policy', 'rotate'],
    summary: 'replace the coordinator capability (needs TREE_RING_COORDINATOR_TOKEN)',
    options: [{ flag: 'coordinator', value: 'LABEL', help: 'a new label for the coordinator' }],
    load: () => import('./commands/tree-ring/policy-rotate.js'),
  }),
  trCommand({
    path: ['tree-ring', 'policy', 'disable'],
    summary: 'return to open mode (needs TREE_RING_COORDINATOR_TOKEN)',
    load: () => import('./commands/tree-ring/policy-disable.js'),
  }),
  trCommand({
    path: ['tree-ring', 'policy', 'audit'],
    summary: 'list recent authorization decisions (read-only)',
    options: [{ flag: 'limit', value: 'N', help: 'at most N entries', defaultText: '20' }],
    load: () => import('./commands/tree-ring/policy-audit.js'),
  }),
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
  ...TREE_RING_COMMANDS,
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
