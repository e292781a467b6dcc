// The command table: every group and verb of agentscm, as plain data, and the full CLI's entry (main,
// which bin/agentscm.js and bin/tree-ring.js import). A command's module (and its heavy dependencies) is
// imported only when that command runs, so `--version`, `--help` and the hooks stay fast. Help text and
// the man pages are generated from this table (src/cli/help.ts, scripts/gen-man.ts).

import { runProgram, type Program } from '../cli/run.js';
import type { CommandSpec, GroupSpec, OptionSpec } from '../cli/types.js';
import {
  CA_FILE, CALL_EXIT, CHANGE_ARG, DATA_DIR, DOCKER_HOST, ENDPOINT, HUB_CALL, HUB_KEY, KEY_DIR, PROFILE, REMOTE_CALL, REMOTE_CHANGE_ARG, REPOSITORY, TASK_SELECT, TOKEN_FILE,
} from '../cli/shared-options.js';
import { processContext } from '../cli/process-context.js';
import { CHECKPOINT_SPEC_DATA } from './checkpoint-spec.js';
import { AGENT_TASK_GROUP, COLLECT_SPEC_DATA } from './collect-spec.js';
import { redactSecrets } from '../core/treering/sensitivity.js';
import { TREE_RING_VERSION, versionLine } from '../version.js';
import { agentscmProgram } from './one-command.js';

// ---- shared option specs -------------------------------------------------------------------------

const HUB_MUTATION: readonly OptionSpec[] = [
  { flag: 'data-dir', value: 'DIR', help: 'the native data dir (needed for result --sign and recovery CHANGE)' },
  ENDPOINT,
  CA_FILE,
  REPOSITORY,
  PROFILE,
  TOKEN_FILE,
];
const REQUEST_ID: OptionSpec = { flag: 'request-id', value: 'ID', help: 'idempotency key; reuse it to retry the identical request', defaultText: 'generated and printed on stderr' };
const REASON: OptionSpec = { flag: 'reason', value: 'TEXT', help: 'why (recorded with the request)', defaultText: 'empty' };
const ATTEMPT_SELECT: readonly OptionSpec[] = [
  { flag: 'task-id', value: 'ID', help: 'the task', required: true },
  { flag: 'attempt-id', value: 'ID', help: 'the attempt', defaultText: 'the task\'s current attempt' },
  { flag: 'fence', value: 'N', help: 'the fence to present', defaultText: 'the attempt\'s' },
];
const ATTEMPT_NOTE = 'The attempt\'s exact binding (digests, execution identity, executor) is read side-effect free from the Hub first. ';
const MUTATION_NOTE =
  'An identical retry with the same --request-id returns the retained outcome; the same id with other bytes or another kind exits 7. ';
const LIST_REPOSITORY: OptionSpec = { flag: 'repository', value: 'OWNER/NAME', help: 'only this repository', defaultText: 'every repository' };
const TR_HARNESS: OptionSpec = { flag: 'harness', value: 'ID', help: 'codex, claude-code, pi or agent-zero', required: true };
const ASSERTION: OptionSpec = { flag: 'assertion', value: 'FILE', help: 'TaskResultAssertion JSON file ("-" for stdin)', required: true };


const STOP_HOOK_DETAILS =
  'A read-only Stop hook: reads the Stop payload on stdin, asks the Hub for qualification of the Change\'s current subject ' +
  '(30 s limit) and compares the workspace files with its last checkpoint. It lets the session stop (exit 0, empty stdout) only ' +
  'when the subject is qualified and current and the workspace is clean at the qualified revision; otherwise it prints ' +
  '{"decision":"block","reason":…} with the typed failures, a fixed next_action sentence and next. After 8 continuations ' +
  '(counter in $AGENTSCM_STATE_DIR, else $XDG_STATE_HOME/agentscm, else ~/.local/state/agentscm) it lets the session stop. ' +
  'With --hub-key the request carries a fresh nonce and only an answer the pinned key signed for this subject and nonce counts; ' +
  'an unsigned, wrongly signed or replayed answer blocks as "answer not signed by the pinned Hub key". ' +
  'Malformed stdin, a bad argument or a counter error exit 1 (non-blocking). It never claims, collects, uploads, finalizes, ' +
  'reconciles or checkpoints. Install it with `agentscm install-stop`.';
const STOP_HOOK_OPTIONS: readonly OptionSpec[] = [
  DATA_DIR,
  ENDPOINT,
  CA_FILE,
  REPOSITORY,
  PROFILE,
  TOKEN_FILE,
  { flag: 'workspace', value: 'PATH', help: 'the checked-out workspace of the Change', required: true },
  HUB_KEY,
];

// ---- groups --------------------------------------------------------------------------------------

export const GROUPS: readonly GroupSpec[] = [
  AGENT_TASK_GROUP,
  { path: ['agent-task', 'key'], summary: 'the collector host\'s Ed25519 signing key' },
  { path: ['agent-task', 'observation'], summary: 'registered-observation digests and signatures' },
  { path: ['agent-task', 'transfer'], summary: 'the collector\'s retained signed transfers' },
  { path: ['tree-ring'], summary: 'Tree Ring memory: local, ring-structured memory for agents (also the `tree-ring` program)' },
  { path: ['tree-ring', 'policy'], summary: 'coordinated write policy of a Tree Ring store' },
  { path: ['authority'], summary: 'trusted-local administration of the data dir (no HTTP, never generates keys)' },
  { path: ['authority', 'profile'], summary: 'agent-task profiles and their workflow requirements' },
  { path: ['authority', 'token'], summary: 'workspace bearer tokens' },
  { path: ['authority', 'collector-profile'], summary: 'immutable collector profiles for one exact registration epoch' },
  { path: ['authority', 'enrollment'], summary: 'executor enrollments (`authority enroll` adds one, `authority revoke-enrollment` revokes one)' },
  { path: ['authority', 'change'], summary: 'the Changes `checkpoint` recorded' },
  { path: ['hub'], summary: 'the reference Hub' },
  { path: ['receipt'], summary: 'signed receipt bundles: list the retained ones, export from the Hub, verify offline' },
  { path: ['snapshot'], summary: 'immutable snapshots of the data dir' },
  { path: ['config'], summary: 'client configuration (environment and config files)' },
  { path: ['skill-workflow'], summary: 'Stop hooks of agent-owned workflow tasks (run by Claude Code and Codex, not by hand)' },
  { path: ['tree-ring', 'integrations'], summary: 'harness activation: status, activate, preflight, lifecycle hooks, receipts' },
  { path: ['tree-ring', 'dox'], summary: 'summarize DOX-style AGENTS.md guidance into memory' },
  { path: ['tree-ring', 'revolve'], summary: 'import Revolve-style evidence records into memory' },
];

// ---- tree-ring ---------------------------------------------------------------------------------------

const TR_ROOT: OptionSpec = { flag: 'root', value: 'DIR', help: 'memory store root', defaultText: '.tree-ring' };
const TR_SOURCE_ROOT: OptionSpec = { flag: 'source-root', value: 'DIR', help: 'the project root (its .tree-ring), instead of --root' };
const TR_ACTIVATE_OPTIONS: OptionSpec[] = [
  TR_ROOT,
  TR_SOURCE_ROOT,
  TR_HARNESS,
  { flag: 'dry-run', help: 'show the plan without writing anything' },
  { flag: 'accept-managed-block', help: 'accept Tree Ring\'s block in the project\'s own AGENTS.md (printed to add by hand; never edited)' },
];
const TR_ACTIVATE_DETAILS =
  'Publication is create-only: an existing file is never replaced or edited, so anything that would need it is needs-user-review. ' +
  'A dry run names the plan (next step: "Apply the reviewed bridge plan, ..."); a harness with valid proof reports active with "No action required". ' +
  'Agent Zero reports its passive binding (needs-plugin); its plugin runs status and preflight itself.';
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
    summary: 'create (or migrate) the memory store and activate the project\'s harnesses (create-only)',
    details:
      'Creates DIR/memory.sqlite (SQLite schema version 3) and, create-only, DIR/AGENTS.md, SKILL.md and CLI.md. For the ' +
      'project-local root (.tree-ring) it also publishes, create-only, the activation manifest (store id, project-root ' +
      'fingerprint), the owned bridges of the maintained adapters (.agents/skills/tree-ring-memory/SKILL.md, .codex/hooks.json ' +
      'and the root AGENTS.md block; .claude/skills/tree-ring-memory/SKILL.md and .claude/settings.json; the Pi extension, only ' +
      'where the project has .pi or pi.toml; the passive Agent Zero binding) and the launcher .tree-ring/bin/tree-ring. ' +
      'An existing entry is never replaced or removed: one that would need a change is kept byte-for-byte and its harness ' +
      'is reported needs-user-review. The JSON lists the harnesses under integrations. --dry-run shows the plan and writes nothing.',
    options: [{ flag: 'dry-run', help: 'show the plan without writing anything' }],
    load: () => import('../commands/tree-ring/init.js'),
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
    load: () => import('../commands/tree-ring/remember.js'),
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
    load: () => import('../commands/tree-ring/capture.js'),
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
      { flag: 'operation-id', value: 'ID', help: 'idempotency key of this logical write (a retry returns the first memory)' },
      TR_DETAILS,
      { flag: 'score', value: 'X', help: 'evaluation score in [0,1]' },
      TR_TAG,
    ],
    load: () => import('../commands/tree-ring/evidence.js'),
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
    load: () => import('../commands/tree-ring/recall.js'),
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
    load: () => import('../commands/tree-ring/forget.js'),
  }),
  trCommand({
    path: ['tree-ring', 'export'],
    summary: 'export memories as portable JSONL (header line, then one envelope per memory)',
    options: [
      { flag: 'output', value: 'FILE', help: 'write to FILE (mode 0600) instead of stdout' },
      { flag: 'include-sensitive', help: 'include sensitive memories' },
      { flag: 'include-superseded', help: 'include superseded memories' },
    ],
    jsonHelp: 'with --output, print the summary as one JSON document; without --output the export itself (JSON Lines) is what goes to stdout',
    load: () => import('../commands/tree-ring/export.js'),
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
    load: () => import('../commands/tree-ring/import.js'),
  }),
  trCommand({
    path: ['tree-ring', 'policy', 'enable'],
    summary: 'switch to coordinated mode and print the coordinator capability once',
    options: [{ flag: 'coordinator', value: 'LABEL', help: 'a label for the coordinator' }],
    load: () => import('../commands/tree-ring/policy-enable.js'),
  }),
  trCommand({
    path: ['tree-ring', 'policy', 'status'],
    summary: 'show the write policy (read-only; never creates or migrates the store)',
    load: () => import('../commands/tree-ring/policy-status.js'),
  }),
  trCommand({
    path: ['tree-ring', 'policy', 'rotate'],
    summary: 'replace the coordinator capability (needs TREE_RING_COORDINATOR_TOKEN)',
    options: [{ flag: 'coordinator', value: 'LABEL', help: 'a new label for the coordinator' }],
    load: () => import('../commands/tree-ring/policy-rotate.js'),
  }),
  trCommand({
    path: ['tree-ring', 'policy', 'disable'],
    summary: 'return to open mode (needs TREE_RING_COORDINATOR_TOKEN)',
    load: () => import('../commands/tree-ring/policy-disable.js'),
  }),
  trCommand({
    path: ['tree-ring', 'policy', 'audit'],
    summary: 'list recent authorization decisions (read-only)',
    options: [{ flag: 'limit', value: 'N', help: 'at most N entries', defaultText: '20' }],
    load: () => import('../commands/tree-ring/policy-audit.js'),
  }),
  // ---- tree-ring: store lifecycle (upstream 0.15 audit, maintain, consolidate) -------------------
  trCommand({
    path: ['tree-ring', 'audit'],
    summary: 'audit memory quality, privacy, and integrity (read-only)',
    details:
      'Findings: stale (expires_at past or invalid), sensitive (secret retained, durable or unexpiring sensitive memory), ' +
      'low_confidence (heartwood below 0.75, durable below 0.5), supersession (self, missing or one-sided links) and ' +
      'contradictions ("use X" and "avoid X" under the same project, scope, event type and tag). Superseded memories are ' +
      'included. A missing store is audited as empty and not created. --json prints {generated_at, audit_type, memory_count, ' +
      'finding_count, findings[]}.',
    options: [{ flag: 'audit-type', value: 'TYPE', help: 'all, stale, sensitive, low_confidence, supersession, or contradictions', defaultText: 'all' }],
    load: () => import('../commands/tree-ring/audit.js'),
  }),
  trCommand({
    path: ['tree-ring', 'maintain'],
    summary: 'plan or apply memory maintenance',
    details:
      'Without an apply flag a read-only plan (a missing store is not created): expired ephemeral/forget_after_date memories ' +
      '(delete_expired), expired scar, heartwood, durable or pinned ones (review_expired_protected), invalid expiries ' +
      '(review_invalid_expiry), secret-like content (redact_secret), and the full-text index drift. The apply flags run in one ' +
      'transaction; on a coordinated store they need the coordinator capability. --json prints {id, generated_at, memory_count, ' +
      'planned_action_count, applied_action_count, dry_run, status, actions[], fts}; status is clean, planned or applied.',
    options: [
      { flag: 'project', value: 'NAME', help: 'optional project filter' },
      { flag: 'include-superseded', help: 'include superseded memories in maintenance planning' },
      { flag: 'apply-expired', help: 'delete expired temporary memories' },
      { flag: 'apply-secret-redactions', help: 'redact memories with secret-like content' },
      { flag: 'repair-fts', help: 'rebuild the SQLite FTS index' },
    ],
    load: () => import('../commands/tree-ring/maintain.js'),
  }),
  trCommand({
    path: ['tree-ring', 'consolidate'],
    summary: 'consolidate memories into deterministic ring summaries',
    details:
      'Candidates: live memories of the period (by created_at; manual takes every one) with salience >= 0.45, a heartwood, scar ' +
      'or seed ring, or durable/pinned retention; never secret-like ones or earlier summaries. One summary per project, scope, ' +
      'agent/workflow/session partition, ring, event type and sensitivity bucket (sensitive groups: private, needs review, no ' +
      'payload). Daily/manual summaries go to outer, weekly/monthly/yearly to inner; scar, seed and confident heartwood keep ' +
      'their ring. A repeat of the same sources is unchanged; --force stores a new consolidation and supersedes the period\'s ' +
      'earlier summaries. On a coordinated store writing needs the coordinator capability. --json prints the report with its outputs.',
    options: [
      { flag: 'period-type', value: 'TYPE', help: 'daily, weekly, monthly, yearly, or manual', defaultText: 'daily' },
      { flag: 'period-key', value: 'KEY', help: 'stable period key; derived from current UTC time when omitted' },
      { flag: 'project', value: 'NAME', help: 'optional project filter' },
      ...TR_IDENTITY,
      { flag: 'dry-run', help: 'plan consolidation without writing summaries or records' },
      { flag: 'force', help: 'create a new consolidation and supersede prior summaries' },
    ],
    load: () => import('../commands/tree-ring/consolidate.js'),
  }),
  trCommand({
    path: ['tree-ring', 'welcome'],
    summary: 'show first-run onboarding and next commands',
    details:
      'Without --init nothing is created: it reports whether DIR/memory.sqlite exists and the next useful commands. With --init ' +
      'it initializes like tree-ring init (store, guidance files and, for a project-local .tree-ring, the adapters) and lists the ' +
      'adapters and their states under integrations. --json prints {ok, root, sqlite_path, initialized, init_requested, ' +
      'agent_awareness, [integrations,] next}. The screen is static; colour only on a terminal (not with NO_COLOR or TERM=dumb).',
    options: [
      { flag: 'init', help: 'initialize the configured memory root during onboarding' },
      { flag: 'no-animation', help: 'print a stable onboarding screen without animation (the screen is always static)' },
    ],
    load: () => import('../commands/tree-ring/welcome.js'),
  }),
  trCommand({
    path: ['tree-ring', 'integrations', 'scan'],
    summary: 'scan a project root for known agent-framework markers (read-only)',
    details:
      'Looks for DOX (AGENTS.md), Revolve, Codex, Claude Code, Agent Zero, Goose, OpenCode, Hermes and Pi markers in the project ' +
      'and a few in $HOME, with a next step for each. A marker never activates an adapter (see integrations status). --json ' +
      'prints {ok, report: {root, detected_count, integrations: [{id, name, status, confidence, markers: [{path, origin}], next_step}]}}.',
    options: [{ flag: 'source-root', value: 'DIR', help: 'project root to scan', defaultText: '.' }],
    load: () => import('../commands/tree-ring/integrations-scan.js'),
  }),
  trCommand({
    path: ['tree-ring', 'recall-quality'],
    summary: 'run the recall quality query set and record its figures as evidence',
    details:
      'Seeds a fresh temporary store with the five default-fixture-v1 memories (scar, heartwood, seed, outer and a health-sensitive ' +
      'one), runs its four queries through this build\'s recall (limit 5), and grades each: pass, fail (expected memory missing or a ' +
      'forbidden one returned) or needs_review (ranked too low). Writes EVIDENCE_DIR/recall-quality/default-fixture-v1.json and ' +
      'updates EVIDENCE_DIR/evidence-index.json; the project store is not touched. Exit 0 whatever the status; --json prints the ' +
      'report {schema_version, generated_at, query_set_id, status, source_root, evidence_dir, record_path, summary, queries}.',
    options: [
      { flag: 'source-root', value: 'DIR', help: 'project root the evidence belongs to', defaultText: '.' },
      { flag: 'evidence-dir', value: 'DIR', help: 'where the evidence is written', defaultText: 'SOURCE_ROOT/target/tree-ring-certification' },
    ],
    load: () => import('../commands/tree-ring/recall-quality.js'),
  }),
  trCommand({
    path: ['tree-ring', 'dox', 'sync'],
    summary: 'scan AGENTS.md files and store concise source-linked memories',
    details:
      'One memory per AGENTS.md section (at most 8 per file, 128 files; .git, target, node_modules and .tree-ring skipped; ' +
      'symlinks never followed, a symlinked root refused, files over 256 KiB skipped with a warning, a file with secret-like ' +
      'text skipped whole). Rule-like sections (must, never, required, contract, security, ...) become durable heartwood ' +
      'dox_contract memories, the rest outer dox_guidance. Ids are stable per file and heading, so a re-sync updates in place; ' +
      'each memory records its source root (a dox-root link): a memory of another root is never overwritten, and a legacy one ' +
      'without it only by the source project\'s own .tree-ring store (a symlinked store path does not count). All or nothing. ' +
      '--dry-run opens no store. --json prints {ok, dry_run, report: {root, source_count, memory_count, skipped_secret_count, warnings, events}}.',
    options: [
      { flag: 'source-root', value: 'PATH', help: 'project root or AGENTS.md file to scan', defaultText: '.' },
      { flag: 'project', value: 'NAME', help: 'optional project scope for imported memories' },
      { flag: 'dry-run', help: 'preview generated memories without writing them' },
    ],
    load: () => import('../commands/tree-ring/dox-sync.js'),
  }),
  trCommand({
    path: ['tree-ring', 'revolve', 'sync'],
    summary: 'scan Revolve records and store evidence-linked memories',
    details:
      'Each .md, .txt, .json or .jsonl record (at most 256; symlinks never followed, a symlinked root refused, files over 256 KiB ' +
      'counted as skipped_large, secret-like ones as skipped_secret) whose path or text names an outcome becomes one memory: ' +
      'rejected/rollback/regression: scar; promoted/accepted: heartwood; deferred/hypothesis: seed; evaluation/result/run: outer. ' +
      'Ids are stable per record and outcome. All or nothing; --dry-run opens no store. --json prints {ok, dry_run, report: ' +
      '{root, source_count, memory_count, skipped_large_count, skipped_secret_count, warnings, events}}.',
    options: [
      { flag: 'source-root', value: 'PATH', help: 'Revolve root or evidence file to scan', defaultText: 'revolve' },
      { flag: 'project', value: 'NAME', help: 'optional project scope for imported memories' },
      { flag: 'dry-run', help: 'preview generated memories without writing them' },
    ],
    load: () => import('../commands/tree-ring/revolve-sync.js'),
  }),
  trCommand({
    path: ['tree-ring', 'tui'],
    summary: 'open the Tree Ring Memory terminal console',
    details:
      'An interactive console on the store (read-only): ring counts, the newest live normal-sensitivity memories, a detail pane ' +
      'and recall search (/), refreshed every --tick-ms. Keys: up/down or j/k, / search, c clear search, 1-6 one ring, 0 all rings, ' +
      'r refresh, q or Esc quit. Needs a terminal on stdin and stdout: otherwise, and with --json, one error line and exit 2. A ' +
      'missing store is shown as such and not created.',
    options: [{ flag: 'tick-ms', value: 'N', help: 'refresh cadence in milliseconds (50 to 5000)', defaultText: '250' }],
    load: () => import('../commands/tree-ring/tui.js'),
  }),
];

// ---- commands ------------------------------------------------------------------------------------

export const COMMANDS: readonly CommandSpec[] = [
  {
    path: ['agent-task', 'key', 'generate'],
    summary: 'make an Ed25519 signing key in an owner-private directory',
    details:
      'Creates DIR (mode 0700) if absent and publishes the key create-only: an existing key is never overwritten. ' +
      'A symlinked DIR or one accessible by group or others is refused. Prints public_key and verification_key_id. ' +
      'The same kind of key serves as the Hub\'s receipt key (hub serve --receipt-key-dir).',
    options: [KEY_DIR],
    load: () => import('../commands/agent-task/key-generate.js'),
  },
  {
    path: ['agent-task', 'key', 'show'],
    summary: 'print the public key and verification key id of an existing key',
    options: [KEY_DIR],
    load: () => import('../commands/agent-task/key-show.js'),
  },
  {
    path: ['agent-task', 'observation', 'digest'],
    summary: 'validate a TaskResultAssertion and print its observation digest and signing bytes',
    options: [ASSERTION],
    load: () => import('../commands/agent-task/observation-digest.js'),
  },
  {
    path: ['agent-task', 'observation', 'sign'],
    summary: 'sign the observation digest of a TaskResultAssertion with the key in DIR',
    options: [ASSERTION, KEY_DIR],
    load: () => import('../commands/agent-task/observation-sign.js'),
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
    load: () => import('../commands/agent-task/observation-verify.js'),
  },
  {
    path: ['agent-task', 'runtime-probe'],
    summary: 'observe the OCI backend and a pinned image and print the runtime identity digest',
    details:
      'Asks the Docker Engine API (Docker, or podman\'s `podman system service`) for the engine name and version, API ' +
      'version, platform, OS/architecture and default OCI runtime with its version (podman: its libpod info; Docker: ' +
      '/version and /info), and inspects IMAGE_ID, which must be a full sha256:<64 hex> ID ' +
      'of an image already present: tags are refused and nothing is ever pulled. Prints the canonical runtime identity ' +
      'and runtime_identity_digest, the value a collector profile pins. Exits 12 (RUNTIME_UNAVAILABLE) when no engine ' +
      'answers or the image is missing.',
    options: [DOCKER_HOST, { flag: 'image', value: 'IMAGE_ID', help: 'full image ID, sha256:<64 hex>', required: true }],
    load: () => import('../commands/agent-task/runtime-probe.js'),
  },
  {
    path: ['agent-task', 'test-image'],
    summary: 'build (or reuse) the local busybox test image the demo uses and print its pinned image ID',
    details:
      'Imports the host\'s static busybox (/bin/busybox or /usr/bin/busybox; Debian: apt-get install busybox-static) as a ' +
      'root file system with sh and the common applets, through the engine\'s import call (never pulled), tagged ' +
      'localhost/agentscm-test-busybox:1; an image already under that tag is reused. Prints the full sha256:<64 hex> ID alone ' +
      '(IMG=$(agentscm agent-task test-image)), the value runtime-probe --image and a collector profile\'s recipe take; ' +
      '--json adds the reference and the engine endpoint. Exits 12 (RUNTIME_UNAVAILABLE) when no engine answers or there is no busybox.',
    options: [DOCKER_HOST],
    load: () => import('../commands/agent-task/test-image.js'),
  },
  // ---- tree-ring: harness activation -------------------------------------------------------------
  {
    path: ['tree-ring', 'integrations', 'status'],
    summary: 'show each harness\'s activation state and next step (never creates .tree-ring)',
    details: 'States: active, configured-awaiting-proof, active-isolated, needs-trust, needs-project-mount, needs-plugin, needs-user-review, unsupported, failed. The JSON lists them under integrations. In a project that was never initialised every maintained harness is failed (run tree-ring init); a project root this process cannot reach is needs-project-mount. --verbose adds last_recall_result_count and last_recall_query_class from the newest valid receipt.',
    options: [
      TR_ROOT,
      { flag: 'source-root', value: 'DIR', help: 'the project root to inspect (its .tree-ring), instead of --root' },
      { flag: 'verbose', help: 'add the newest valid receipt\'s recall result count and query class' },
    ],
    errorPolicy: 'tree-ring',
    load: () => import('../commands/tree-ring/integrations-status.js'),
  },
  {
    path: ['tree-ring', 'integrations', 'activate'],
    summary: 're-publish a harness\'s missing owned bridge material (create-only) and report proof',
    details: TR_ACTIVATE_DETAILS,
    options: TR_ACTIVATE_OPTIONS,
    errorPolicy: 'tree-ring',
    load: () => import('../commands/tree-ring/integrations-activate.js'),
  },
  {
    path: ['tree-ring', 'integrations', 'link'],
    summary: 'advanced alias of integrations activate for controlled bridge work',
    details: TR_ACTIVATE_DETAILS,
    options: TR_ACTIVATE_OPTIONS,
    errorPolicy: 'tree-ring',
    load: () => import('../commands/tree-ring/integrations-activate.js'),
  },
  {
    path: ['tree-ring', 'integrations', 'deactivate'],
    summary: 'list the reconciliation steps to deactivate a harness (changes nothing: create-only writer)',
    options: [TR_ROOT, TR_SOURCE_ROOT, TR_HARNESS],
    errorPolicy: 'tree-ring',
    load: () => import('../commands/tree-ring/integrations-deactivate.js'),
  },
  {
    path: ['tree-ring', 'integrations', 'certify'],
    summary: 'record the verified activation status as JSON and Markdown evidence',
    options: [TR_ROOT],
    errorPolicy: 'tree-ring',
    load: () => import('../commands/tree-ring/integrations-certify.js'),
  },
  {
    path: ['tree-ring', 'integrations', 'preflight'],
    summary: 'scoped recall for a new session: safe context within 6,000 bytes and a redacted receipt',
    details:
      'Direct mode takes the identity from flags and prints the context. With --input-json-stdin it reads {agent_profile, workflow_id, ' +
      'session_id[, task_hint]} and prints one JSON answer in --context-format (json and pi-before-agent-start: {context, state, receipt}; ' +
      'claude-session-start: a SessionStart hook object). Agent Zero is accepted only with its plugin descriptor in TREE_RING_AGENT_ZERO_PLUGIN_MANIFEST.',
    options: [
      TR_ROOT,
      TR_HARNESS,
      { flag: 'input-json-stdin', help: 'read the request as JSON on stdin' },
      { flag: 'context-format', value: 'FORMAT', help: 'claude-session-start, pi-before-agent-start or json (stdin mode)' },
      { flag: 'agent-profile', value: 'ID', help: 'direct mode: agent profile (default: the harness id)' },
      { flag: 'workflow-id', value: 'ID', help: 'direct mode: workflow id' },
      { flag: 'session-id', value: 'ID', help: 'direct mode: session id' },
      { flag: 'task-hint', value: 'TEXT', help: 'direct mode: a safe task hint (never persisted)' },
      {
        flag: 'canonical-project-root',
        value: 'DIR',
        help: 'the project whose store is the canonical one; a store that is not it gets an active-isolated receipt, an unreachable DIR is needs-project-mount',
      },
    ],
    errorPolicy: 'tree-ring',
    load: () => import('../commands/tree-ring/integrations-preflight.js'),
  },
  {
    path: ['tree-ring', 'integrations', 'hook'],
    summary: 'the Codex / Claude Code lifecycle hook (SessionStart, SubagentStart, Stop, SubagentStop)',
    details:
      'Reads the host event on stdin. Start events run a receipt-backed preflight and answer with hookSpecificOutput.additionalContext; ' +
      'the first Stop answers with the capture checkpoint block, a continuation with {}. When .tree-ring is absent it still validates the event ' +
      '(refusing {}, a root- or capability-bearing field and a cwd outside the project), then exits 0 silently. ' +
      'Its errors exit 1, not 2: the hosts read exit 2 from a hook as "block", and a memory hook never blocks its host.',
    options: [
      TR_ROOT,
      { flag: 'harness', value: 'ID', help: 'codex or claude-code', required: true },
      { flag: 'input-json-stdin', help: 'read the host event as JSON on stdin (required)' },
    ],
    json: false,
    errorPolicy: 'hook',
    load: () => import('../commands/tree-ring/integrations-hook.js'),
  },
  ...TREE_RING_COMMANDS,
  {
    path: ['agent-task', 'capabilities'],
    summary: 'ask the Hub for its capability, schema versions and operations (task-independent)',
    details: CALL_EXIT,
    options: [{ ...DATA_DIR, required: false, help: 'accepted like the other calls; capabilities reads no local state' }, ENDPOINT, CA_FILE, REPOSITORY, PROFILE, TOKEN_FILE],
    load: () => import('../commands/agent-task/capabilities.js'),
  },
  {
    path: ['agent-task', 'requirements'],
    summary: 'list the tasks of the Change\'s current subject with their states',
    details: CALL_EXIT,
    args: [REMOTE_CHANGE_ARG],
    options: REMOTE_CALL,
    load: () => import('../commands/agent-task/requirements.js'),
  },
  {
    path: ['agent-task', 'next'],
    summary: 'the next task to work on and the typed next step (the same as qualification\'s)',
    details: 'A superseded subject answers subject_current false, no task and next {"operation":"checkpoint"}. ' + CALL_EXIT,
    args: [REMOTE_CHANGE_ARG],
    options: REMOTE_CALL,
    load: () => import('../commands/agent-task/next.js'),
  },
  {
    path: ['agent-task', 'instructions'],
    summary: 'the instruction entrypoint of a task: every criterion inline, named references, permitted progression',
    details: 'When the Hub does not support the offered schema version, prints nothing on stdout (the schema_mismatch document is the JSON error detail) and exits 11. ' + CALL_EXIT,
    args: [REMOTE_CHANGE_ARG],
    options: [...REMOTE_CALL, ...TASK_SELECT, { flag: 'schema-version', value: 'N', help: 'schema version to offer', defaultText: '1' }],
    load: () => import('../commands/agent-task/instructions.js'),
  },
  {
    path: ['agent-task', 'reference'],
    summary: 'fetch one named reference of a task from the subject\'s immutable snapshot',
    details:
      'Outcomes are available (exit 0; without --json the content is printed as is), missing, denied, uncertain and limit ' +
      '(over 128 KiB, refused before reading); every outcome but available exits 13 with the outcome document. ' + CALL_EXIT,
    args: [REMOTE_CHANGE_ARG],
    options: [
      ...REMOTE_CALL,
      ...TASK_SELECT,
      { flag: 'name', value: 'NAME', help: 'the reference name', required: true },
      { flag: 'sha256', value: 'HEX', help: 'expected content digest', defaultText: 'the digest the task names' },
      { flag: 'schema-version', value: 'N', help: 'expected schema version', defaultText: '1' },
    ],
    load: () => import('../commands/agent-task/reference.js'),
  },
  {
    path: ['agent-task', 'status'],
    summary: 'side-effect-free status of a task and its current (or named) attempt',
    details: CALL_EXIT,
    args: [REMOTE_CHANGE_ARG],
    options: [...REMOTE_CALL, ...TASK_SELECT, { flag: 'attempt-id', value: 'ID', help: 'an exact attempt instead of the current one' }],
    load: () => import('../commands/agent-task/status.js'),
  },
  {
    path: ['agent-task', 'qualification'],
    summary: 'is the Change\'s current subject qualified? (read-only, advisory; landing rechecks)',
    details: 'Prints qualified, subject_current, receipt_digest, revision, per-task states, typed failures and next. Exits 0 when qualified, 8 when not. ' + CALL_EXIT,
    args: [REMOTE_CHANGE_ARG],
    options: REMOTE_CALL,
    load: () => import('../commands/agent-task/qualification.js'),
  },
  {
    path: ['agent-task', 'claim'],
    summary: 'claim a task: a fresh attempt with a fenced lease no longer than --lease-ms',
    details:
      'Refused (exit 7) while another attempt is live or unresolved, before dependencies succeeded, for controller-only and collector ' +
      'steps, and while an older subject of the same Change and step is unresolved (reconcile it first). ' + MUTATION_NOTE + CALL_EXIT,
    args: [REMOTE_CHANGE_ARG],
    options: [
      ...REMOTE_CALL,
      ...TASK_SELECT,
      { flag: 'lease-ms', value: 'N', help: 'requested lease, 1000..3600000 ms; the Hub never issues more', required: true },
      { flag: 'executor-id', value: 'ID', help: 'bind the executor\'s current enrollment (for registered observations)' },
      { flag: 'execution-operation-id', value: 'ID', help: 'the new execution identity', defaultText: 'derived from the request id and the task, so an identical retry is the identical request' },
      REQUEST_ID,
    ],
    load: () => import('../commands/agent-task/claim.js'),
  },
  {
    path: ['agent-task', 'heartbeat'],
    summary: 'extend the live lease of an attempt (never past its issued length)',
    details: 'An expired lease cannot be extended: expiry is not termination, reconcile instead. ' + ATTEMPT_NOTE + MUTATION_NOTE + CALL_EXIT,
    options: [...HUB_MUTATION, ...ATTEMPT_SELECT, { flag: 'lease-ms', value: 'N', help: 'requested extension', defaultText: 'the issued lease' }, REQUEST_ID],
    load: () => import('../commands/agent-task/heartbeat.js'),
  },
  {
    path: ['agent-task', 'cancel'],
    summary: 'cancel a leased attempt (it stays uncertain until reconciled)',
    details: ATTEMPT_NOTE + MUTATION_NOTE + CALL_EXIT,
    options: [...HUB_MUTATION, ...ATTEMPT_SELECT, REASON, REQUEST_ID],
    load: () => import('../commands/agent-task/cancel.js'),
  },
  {
    path: ['agent-task', 'reconcile'],
    summary: 'supersede an unfinished attempt: records the old and the next fence; the task can be claimed afresh',
    details:
      'Any agent of the attempt\'s owner may reconcile, also after the subject went stale or the executor was revoked. ' +
      'The old fence can then no longer heartbeat, cancel or finish anything. ' + ATTEMPT_NOTE + MUTATION_NOTE + CALL_EXIT,
    options: [...HUB_MUTATION, ...ATTEMPT_SELECT, REASON, REQUEST_ID],
    load: () => import('../commands/agent-task/reconcile.js'),
  },
  {
    path: ['agent-task', 'result'],
    summary: 'submit a TaskResultAssertion for a leased attempt (retained as nonpassing material)',
    details:
      'The assertion carries one row per task criterion and the exact task/attempt/fence binding. With --sign, the executor binding ' +
      'comes from the key\'s current enrollment in --data-dir and the observation digest is signed (a registered observation). ' +
      'A request_id missing from the file is generated. ' + MUTATION_NOTE + CALL_EXIT,
    options: [
      ...HUB_MUTATION,
      ASSERTION,
      { flag: 'sign', help: 'sign as a registered executor observation' },
      { flag: 'key-dir', value: 'DIR', help: 'the signing key directory (with --sign)' },
      REQUEST_ID,
    ],
    load: () => import('../commands/agent-task/result.js'),
  },
  {
    path: ['agent-task', 'recovery'],
    summary: 'the recovery envelope of a request or attempt: confirmed, conclusive_rejection or uncertain_effect (side-effect free)',
    details:
      'Reports confirmed and unresolved effects, the observed attempt state, currently_applicable and the permitted actions ' +
      '(retry_identical only for a rejection while the task is pending; prepare_fresh_attempt only after confirmed supersession ' +
      'with execution_may_still_run the only unresolved effect; result_acceptance_unknown and resource_custody_unknown block it; ' +
      'reconcile_collector_finalization when a passing transfer has no receipt). The observed state may be unknown. ' +
      'CHANGE (with --data-dir) names a task that was never claimed. ' + CALL_EXIT,
    args: [{ name: 'CHANGE', help: 'the Change, for a task the Hub has not retained' }],
    options: [
      ...HUB_MUTATION,
      { flag: 'task-id', value: 'ID', help: 'the task', required: true },
      { flag: 'attempt-id', value: 'ID', help: 'an exact attempt', defaultText: 'the request\'s, else the current one' },
      { flag: 'request-id', value: 'ID', help: 'the mutation request to recover' },
    ],
    load: () => import('../commands/agent-task/recovery.js'),
  },
  {
    path: ['authority', 'init'],
    summary: 'create the data dir (0700) and its authority database',
    details: 'Idempotent: an initialized data dir is reported with created false.',
    options: [DATA_DIR],
    load: () => import('../commands/authority/init.js'),
  },
  {
    path: ['authority', 'profile', 'add'],
    summary: 'install an agent-task profile and its workflow requirement; prints the requirement_digest',
    details:
      'FILE is a workflow requirement (format in docs/HUB.md). Re-adding the same target and requirement changes nothing; ' +
      'anything else starts a new policy epoch, which supersedes every subject of the old one.',
    options: [
      DATA_DIR,
      REPOSITORY,
      { flag: 'profile', value: 'ID', help: 'the profile id', required: true },
      { flag: 'target', value: 'NAME', help: 'the protected target (e.g. main)', required: true },
      { flag: 'requirement', value: 'FILE', help: 'the workflow requirement JSON file', required: true },
      { flag: 'publish-forge-status', help: 'have a Hub run with --forge publish commit statuses for this profile (keeps the policy epoch)' },
    ],
    load: () => import('../commands/authority/profile-add.js'),
  },
  {
    path: ['authority', 'token', 'issue'],
    summary: 'issue a workspace bearer token into a new owner-private file; prints its token_id',
    details: 'The file is created 0600 and never overwritten; the authority keeps only a hash of the token.',
    options: [
      DATA_DIR,
      { flag: 'owner', value: 'ID', help: 'the owner the token acts for', required: true },
      { flag: 'agent', value: 'ID', help: 'the agent the token acts as', required: true },
      { flag: 'repository', value: 'OWNER/NAME', help: 'limit the token to this repository (HTTP 403 elsewhere)', defaultText: 'every repository of the data dir' },
      { flag: 'out', value: 'ABS_PATH', help: 'absolute path of the token file to create', required: true },
      { flag: 'may-integrate', help: 'the token may also approve and land through the Hub (operations approve, land)' },
      { flag: 'scope', value: 'full|read', help: 'read: only the read-only operations and MCP tools (mutations 403)', defaultText: 'full' },
    ],
    load: () => import('../commands/authority/token-issue.js'),
  },
  {
    path: ['authority', 'token', 'revoke'],
    summary: 'revoke a workspace token; the Hub refuses it on its next request',
    options: [DATA_DIR, { flag: 'token-id', value: 'ID', help: 'the token_id printed by token issue', required: true }],
    load: () => import('../commands/authority/token-revoke.js'),
  },
  {
    path: ['authority', 'enroll'],
    summary: 'enroll an operator-supplied Ed25519 public key for one repository, profile and step (a new epoch)',
    details:
      'The key (64 lowercase hex, a canonical point of large order) is checked before anything is written. At a terminal, ' +
      'shows the key id and exact scope and asks for confirmation; --yes skips the question, and without a terminal --yes is required. ' +
      'Prints registration_id, registration_epoch and verification_key_id. Generates no keys.',
    options: [
      DATA_DIR,
      REPOSITORY,
      PROFILE,
      { flag: 'step', value: 'STEP', help: 'the requirement step the executor may observe', required: true },
      { flag: 'executor-id', value: 'ID', help: 'the executor', required: true },
      { flag: 'public-key', value: 'HEX', help: '64 lowercase hex characters (from agent-task key show)', required: true },
      { flag: 'yes', help: 'do not ask for confirmation' },
    ],
    load: () => import('../commands/authority/enroll.js'),
  },
  {
    path: ['authority', 'revoke-enrollment'],
    summary: 'revoke an enrollment; evidence from it stops counting, and re-enrolling makes a new epoch',
    details: 'Asks to confirm at a terminal, as enroll does; --yes skips the question (without a terminal it is required).',
    options: [
      DATA_DIR,
      { flag: 'registration-id', value: 'ID', help: 'the registration_id printed by enroll', required: true },
      { flag: 'yes', help: 'revoke without asking' },
    ],
    load: () => import('../commands/authority/revoke-enrollment.js'),
  },
  {
    path: ['authority', 'profile', 'list'],
    summary: 'list the installed agent-task profiles: target, policy epoch, requirement digest',
    details: 'Reads the data dir only. A readable table, or with --json {"profiles":[…]}.',
    options: [DATA_DIR, LIST_REPOSITORY],
    load: () => import('../commands/list/profiles.js'),
  },
  {
    path: ['authority', 'token', 'list'],
    summary: 'list workspace tokens: id, owner, agent, repository, scope, revoked, created (never the secret or its hash)',
    details:
      'Reads the data dir only. With --repository: the tokens limited to it and the unlimited ones. A readable table, or with ' +
      '--json {"tokens":[…]} (token_id, owner_id, agent_id, repository (null: every repository), scope, may_integrate, revoked, ' +
      'created_at, revoked_at; times in milliseconds since the epoch).',
    options: [DATA_DIR, LIST_REPOSITORY],
    load: () => import('../commands/list/tokens.js'),
  },
  {
    path: ['authority', 'enrollment', 'list'],
    summary: 'list executor enrollments: scope, epoch, key id, current, revoked',
    details:
      'Reads the data dir only. current: the executor\'s highest epoch for its scope and not revoked (the one evidence may rest on). ' +
      'A readable table, or with --json {"enrollments":[…]}.',
    options: [DATA_DIR, LIST_REPOSITORY],
    load: () => import('../commands/list/enrollments.js'),
  },
  {
    path: ['authority', 'collector-profile', 'list'],
    summary: 'list collector profile installations: registration, step, kind, digest, current',
    details: 'Reads the data dir only. current: the registration\'s newest installation. A readable table, or with --json {"collector_profiles":[…]}.',
    options: [DATA_DIR, LIST_REPOSITORY],
    load: () => import('../commands/list/collector-profiles.js'),
  },
  {
    path: ['authority', 'change', 'list'],
    summary: 'list the Changes: id, current version and revision',
    details: 'Reads the data dir only. A readable table, or with --json {"changes":[…]}.',
    options: [DATA_DIR, LIST_REPOSITORY],
    load: () => import('../commands/list/changes.js'),
  },
  {
    path: ['authority', 'collector-profile', 'install'],
    summary: 'install an immutable collector profile (a command recipe, or a finite review) for one registration epoch',
    details:
      'The file (docs/COLLECTOR.md) names one exact current registration (id and epoch), its repository, profile and step. ' +
      'Kind command (a command_collector step): the complete command recipe (image ID, argv, working directory, timeout, output ' +
      'bound, network none) and the runtime identity digest printed by `agent-task runtime-probe`. Kind review (a ' +
      'review_collector step): the Claude Code executable\'s SHA-256, the provider scope, the transport basis claude-code ' +
      '(fixture and plain-HTTP bases are refused), the model, the installed requirement digest, the path coverage and finite ' +
      'budgets (calls, input and output bytes, wall time). Installing is separate from ' +
      'enrollment; installing other bytes later replaces the current installation and evidence bound to the old one stops ' +
      'counting. Re-enrollment makes a new epoch that needs its own profile.',
    options: [DATA_DIR, { flag: 'file', value: 'FILE', help: 'the collector profile JSON file ("-" for stdin)', required: true }],
    load: () => import('../commands/authority/collector-profile-install.js'),
  },
  {
    path: ['authority', 'collector-profile', 'template'],
    summary: 'write a command collector profile file from an enrollment, a runtime probe and a recipe (create-only)',
    details:
      'Takes the repository, profile, step and epoch from the enrollment REG of the data dir (which must be current, for a ' +
      'command_collector step), the image ID and runtime_identity_digest from FILE (the output of `agent-task runtime-probe --json`, ' +
      'its digest rechecked), and COMMAND (after --) as the exact argv; network none. Writes the profile file to --out, never over an ' +
      'existing file (exit 9), ready for `authority collector-profile install --file`; installs nothing. The format: ' +
      'docs/COLLECTOR.md (shipped in the package).',
    args: [{ name: 'COMMAND', help: 'the check\'s argv, after -- (argv[0] is the entrypoint; no shell is added)', required: true, variadic: true }],
    options: [
      DATA_DIR,
      { flag: 'registration-id', value: 'REG', help: 'the registration_id printed by enroll', required: true },
      { flag: 'probe', value: 'FILE', help: 'the output of agent-task runtime-probe --json ("-" for stdin)', required: true },
      { flag: 'image', value: 'IMAGE_ID', help: 'refuse unless the probe observed this image', defaultText: 'the probe\'s image' },
      { flag: 'working-dir', value: 'PATH', help: 'absolute container path (the snapshot is mounted at /snapshot)', defaultText: '/snapshot' },
      { flag: 'timeout-ms', value: 'N', help: '1000 .. 21600000', defaultText: '60000' },
      { flag: 'max-output-bytes', value: 'N', help: 'bound on captured bytes per stream, 0 .. 6000000', defaultText: '65536' },
      { flag: 'out', value: 'FILE', help: 'the profile file to create', required: true },
    ],
    load: () => import('../commands/authority/collector-profile-template.js'),
  },
  { ...CHECKPOINT_SPEC_DATA, load: () => import('../commands/checkpoint.js') },
  {
    path: ['approve'],
    summary: 'approve the Change\'s current subject after rechecking admission (trusted-local, on the data dir)',
    details:
      'Under the authority\'s write lock: the Change\'s current subject, its installed requirement, its exact receipt and the ' +
      'retained signed transfers it names, the current executor registrations, collector profile installations and ' +
      'originating grants. Every required collector step needs the exact successful imported command of its task. ' +
      'Refusals: not_qualified (8), subject_superseded (14, --revision is not the current one), executor_revoked (16), ' +
      'origin_revoked (17), profile_changed (18). Records the approval (subject, receipt digest, actor, time).',
    args: [{ name: 'CHANGE', help: 'the Change id', required: true }],
    options: [DATA_DIR, REPOSITORY, PROFILE, { flag: 'revision', value: 'R', help: 'refuse unless this is the current subject\'s revision', defaultText: 'any' }],
    load: () => import('../commands/approve.js'),
  },
  {
    path: ['land'],
    summary: 'land the approved current subject: move the profile\'s target to its revision (compare-and-swap)',
    details:
      'Under the authority\'s write lock: the newest approval must name the current subject (else subject_superseded, 14) ' +
      'at the current policy epoch (else policy_changed, 15); admission is rechecked as by approve (8, 16, 17, 18); the ' +
      'target must still be at the revision it was at when this Change version was checkpointed (else target_moved, 19: ' +
      'export the target, redo the change on it, checkpoint, qualify and approve again). No approval: not_approved (20). ' +
      'Then the target moves and the integration (subject, receipt digest, actor, time) is recorded in the same ' +
      'transaction. A refusal changes nothing.',
    args: [{ name: 'CHANGE', help: 'the Change id', required: true }],
    options: [DATA_DIR, REPOSITORY, PROFILE],
    load: () => import('../commands/land.js'),
  },
  {
    path: ['snapshot', 'export'],
    summary: 'write an immutable revision (e.g. a landed target) out as an ordinary directory tree',
    details: 'Each file is checked against its SHA-256 and written create-only; --out must be missing or empty.',
    options: [DATA_DIR, { flag: 'revision', value: 'R', help: 'the revision (64 hex)', required: true }, { flag: 'out', value: 'DIR', help: 'the directory to create', required: true }],
    load: () => import('../commands/snapshot-export.js'),
  },
  {
    path: ['snapshot', 'repack'],
    summary: 'rewrite the snapshot packs as one pack (each checkpoint adds one; readers load every pack\'s index)',
    details:
      'Every blob of every pack is checked against its SHA-256 and written once into a new pack, which is made durable ' +
      'before the packs it replaces are removed; checkpoints and readers may run meanwhile. A damaged pack (a record that ' +
      'is not readable or not its digest, or a record or its index cut short) is kept as it is and named; its whole ' +
      'records are copied. Nothing to do with one pack or none. Also removes the temporary packs a checkpoint or repack ' +
      'killed before publishing left (removed_temporary: a writer that is not running and an hour untouched).',
    options: [DATA_DIR],
    load: () => import('../commands/snapshot-repack.js'),
  },
  {
    path: ['config', 'show'],
    summary: 'print the client settings a Hub call would use here and where each comes from',
    details:
      'An option a command line leaves out is taken from the environment (AGENTSCM_ENDPOINT, AGENTSCM_REPOSITORY, ' +
      'AGENTSCM_PROFILE, AGENTSCM_TOKEN_FILE, AGENTSCM_DATA_DIR, AGENTSCM_CA_FILE), else from .agentscm.json at the root of ' +
      'the Git repository around the working directory (endpoint, repository, profile and ca_file only; no secret, no local ' +
      'path), else from the user file ($AGENTSCM_CONFIG, else $XDG_CONFIG_HOME/agentscm/config.json, else ' +
      '~/.config/agentscm/config.json). Both files are strict JSON {"version": 1, ...} with those snake_case keys. `hub serve` ' +
      'and the Stop hooks never read them, and the authority commands take only the data dir from them. A malformed file exits 3.',
    options: [DATA_DIR, ENDPOINT, CA_FILE, REPOSITORY, PROFILE, TOKEN_FILE].map((o) => ({ ...o, required: false })),
    load: () => import('../commands/config/show.js'),
  },
  {
    path: ['hub', 'serve'],
    summary: 'run the reference Hub over a data dir or a config file; prints the bound URL as the first stdout line',
    details:
      'Serves POST /v1/hub/workspace/repositories/{repository}/profiles/{profile}/agent-tasks, its sixteen agent-task ' +
      'operations also as MCP tools at POST /v1/hub/workspace/mcp?repository=..&profile=.. (see install-mcp; approval, ' +
      'landing and receipt bundles stay on HTTP and the CLI), GET /v1/hub/health (a storage ' +
      'ping) and GET /v1/hub/ready (503 with typed reasons) (docs/HUB.md) over HTTP/1.1, or over https when --tls-cert and ' +
      '--tls-key are given (both or neither; an unreadable or mismatched pair exits 3). Clients then use an https:// endpoint, ' +
      'with --ca-file when the certificate is not from a CA the system trusts. --data-dir serves every profile of one data ' +
      'dir; --config FILE (strict JSON {"version": 1, "agent_task_profiles": [...]}, docs/DEPLOYING.md) serves exactly its ' +
      'entries from any number of data dirs, and an unknown field or a pin that differs from the installed profile exits 3 ' +
      'naming the entry. Writes one JSON access-log line per request on stderr (no token, no body). On SIGTERM or SIGINT it ' +
      'stops accepting, answers the requests it has (mutations once committed), then exits 0. With --forge, publishes a ' +
      'commit status (context agentscm/<profile>) for the git commit of each followed Change\'s current subject whose ' +
      'snapshot equals that commit\'s tree: pending, success (with the receipt digest) or failure, through a durable ' +
      'outbox in the journal (docs/HUB.md "Forge commit statuses").',
    json: false,
    options: [
      { ...DATA_DIR, required: false, help: 'serve every profile of this data dir (or give --config)' },
      { flag: 'config', value: 'FILE', help: 'the operator configuration: the profiles to serve and their data dirs' },
      { flag: 'listen', value: 'HOST:PORT', help: 'address to bind (port 0 picks a free one)', defaultText: '127.0.0.1:8421' },
      { flag: 'tls-cert', value: 'FILE', help: 'PEM certificate chain to serve https with (with --tls-key)', defaultText: 'plain http' },
      { flag: 'tls-key', value: 'FILE', help: 'PEM private key of --tls-cert' },
      { flag: 'receipt-key-dir', value: 'DIR', help: 'the Hub\'s receipt key (from agent-task key generate): signs qualification answers and receipt bundles; its public key is recorded in DATA_DIR/hub-receipt-key.json', defaultText: 'unsigned answers, no bundles' },
      { flag: 'forge', value: 'KIND', help: 'publish commit statuses for profiles with publish_forge_status: github or gitlab', defaultText: 'none' },
      { flag: 'forge-api', value: 'URL', help: 'the forge\'s API base URL', defaultText: 'https://api.github.com or https://gitlab.com/api/v4' },
      { flag: 'forge-token-file', value: 'ABS_PATH', help: 'owner-private file holding the forge token (with --forge)' },
      { flag: 'forge-poll-ms', value: 'MS', help: 'how often followed Changes are compared with their last queued status', defaultText: '1000' },
      { flag: 'forge-retry-ms', value: 'MS', help: 'first retry delay after a 5xx or no answer (doubles, at most 60 s)', defaultText: '1000' },
      { flag: 'forge-max-attempts', value: 'N', help: 'deliveries of one status before it is abandoned', defaultText: '8' },
    ],
    load: () => import('../commands/hub/serve.js'),
  },
  {
    path: ['receipt', 'list'],
    summary: 'list the receipts the data dir\'s journal retains: digest, subject, time',
    details: 'Reads the data dir only (never the Hub, never the receipt body); no journal yet is an empty list. A readable table, or with --json {"receipts":[…]}.',
    options: [DATA_DIR, LIST_REPOSITORY],
    load: () => import('../commands/list/receipts.js'),
  },
  {
    path: ['receipt', 'export'],
    summary: 'write the Hub-signed receipt bundle of the Change\'s current subject (offline-verifiable)',
    details:
      'One file (created, never overwritten): the v2 receipt\'s bytes, the original signed collector transfers, the enrolled ' +
      'public keys and epochs, and an in-toto Statement (subject: the revision; predicate https://in-toto.io/attestation/test-result/v0.1 ' +
      'with the criteria outcomes) in a DSSE envelope signed by the Hub\'s receipt key, also as a Sigstore bundle v0.3 (public-key ' +
      'hint, no transparency log). The bundle is checked against the key it names before it is written. The Hub needs ' +
      '--receipt-key-dir (else exit 7). ' + CALL_EXIT,
    args: [CHANGE_ARG],
    options: [
      ...HUB_CALL,
      { flag: 'out', value: 'FILE', help: 'the bundle file to create', required: true },
      { flag: 'sigstore-out', value: 'FILE', help: 'also create this file holding the Sigstore bundle alone' },
    ],
    load: () => import('../commands/receipt/export.js'),
  },
  {
    path: ['receipt', 'verify'],
    summary: 'check a receipt bundle offline against the Hub\'s public key; exit 0, or 10 when anything fails',
    details:
      'Checks the DSSE signature under --trusted-key and that the Sigstore bundle carries the same envelope, the Statement and ' +
      'its revision (--revision), the receipt bytes and digest, and for every transfer its bytes, header digest, collector signature ' +
      'under the enrolled key and epoch, records, passing execution record and bindings to the receipt, and that no registration was ' +
      'revoked before the receipt was finalized. Needs no Hub and no data dir.',
    args: [{ name: 'BUNDLE', help: 'the bundle file (from receipt export)', required: true }],
    options: [
      { flag: 'trusted-key', value: 'HEX', help: 'the Hub\'s receipt public key (64 hex, from agent-task key show)', required: true },
      { flag: 'revision', value: 'R', help: 'require the bundle to be about this revision' },
    ],
    load: () => import('../commands/receipt/verify.js'),
  },
  {
    path: ['agent-task', 'collector-claim'],
    summary: 'claim a collector task for an enrolled executor; prints the server-derived descriptor',
    details:
      'The executor\'s current registration must have an installed collector profile for the task\'s step; the descriptor ' +
      '(image, argv, working directory, bounds, runtime identity, execution request digest) comes from that profile, never ' +
      'from the caller. ' + MUTATION_NOTE + CALL_EXIT,
    args: [CHANGE_ARG],
    options: [
      ...HUB_CALL,
      ...TASK_SELECT,
      { flag: 'lease-ms', value: 'N', help: 'requested lease, 1000..3600000 ms; the Hub never issues more', required: true },
      { flag: 'executor-id', value: 'ID', help: 'the enrolled executor that will collect', required: true },
      { flag: 'execution-operation-id', value: 'ID', help: 'the new execution identity', defaultText: 'derived from the request id and the task, so an identical retry is the identical request' },
      REQUEST_ID,
    ],
    load: () => import('../commands/agent-task/collector-claim.js'),
  },
  {
    path: ['agent-task', 'collector-descriptor'],
    summary: 'read the server-derived descriptor of a claimed collector attempt (side-effect free)',
    details: CALL_EXIT,
    args: [{ name: 'CHANGE', help: 'the Change id (unused; accepted for symmetry)' }],
    options: [...HUB_MUTATION, { flag: 'task-id', value: 'ID', help: 'the task', required: true }, { flag: 'attempt-id', value: 'ID', help: 'the attempt', required: true }],
    load: () => import('../commands/agent-task/collector-descriptor.js'),
  },
  {
    path: ['agent-task', 'collector-finalize'],
    summary: 'create the v2 receipt of the current subject from retained, validated transfers',
    details:
      'Refused (exit 7) unless every required task succeeded with live evidence (current registration, profile installation ' +
      'and originating grant). Calling it again with a new --request-id reconciles a finalization that did not complete; it ' +
      'never runs a collector. ' + MUTATION_NOTE + CALL_EXIT,
    args: [CHANGE_ARG],
    options: [...HUB_CALL, REQUEST_ID],
    load: () => import('../commands/agent-task/collector-finalize.js'),
  },
  {
    path: ['agent-task', 'reconcile-finalization'],
    summary: 'retry receipt creation from retained, validated transfers (reconcile_collector_finalization)',
    details:
      'Answers the current subject\'s live receipt when one exists ("finalization": "existing"), else creates it from the ' +
      'retained transfers under current authorization ("created"), streaming them one at a time. Never runs a collector; ' +
      'refused (exit 7) like collector-finalize when the evidence is not ready or authorization changed. ' + MUTATION_NOTE + CALL_EXIT,
    args: [CHANGE_ARG],
    options: [...HUB_CALL, REQUEST_ID],
    load: () => import('../commands/agent-task/reconcile-finalization.js'),
  },
  { ...COLLECT_SPEC_DATA, load: () => import('../commands/agent-task/collect.js') },
  {
    path: ['agent-task', 'retry-upload'],
    summary: 'upload the identical retained signed transfer of an attempt again',
    details:
      'Never runs or re-signs anything. The Hub answers an exact committed retry with its historical retained view; changed ' +
      'bytes under the same upload request id exit 7. ' + CALL_EXIT,
    options: [
      ENDPOINT,
      CA_FILE,
      REPOSITORY,
      PROFILE,
      TOKEN_FILE,
      { flag: 'attempt-id', value: 'ID', help: 'the attempt whose transfer is retained', required: true },
      { flag: 'key-dir', value: 'DIR', help: 'the collector key dir (state in KEY_DIR/state)' },
      { flag: 'state-dir', value: 'DIR', help: 'the collector state dir', defaultText: 'KEY_DIR/state' },
    ],
    load: () => import('../commands/agent-task/retry-upload.js'),
  },
  {
    path: ['agent-task', 'transfer', 'show'],
    summary: 'show an attempt\'s retained transfer readably: outcome, exit, the end of its stdout and stderr',
    details:
      'Reads the retained signed transfer of the attempt from the collector state dir (local, read-only; no Hub call): the ' +
      'task and step, outcome, exit code, times, output sizes and the last lines (at most 2 KiB) of stdout and stderr, with ' +
      'control characters escaped as \\xHH. This is where a check that failed (collector_not_passed) says why.',
    options: [
      { flag: 'attempt-id', value: 'ID', help: 'the attempt whose transfer is retained', required: true },
      { flag: 'key-dir', value: 'DIR', help: 'the collector key dir (state in KEY_DIR/state)' },
      { flag: 'state-dir', value: 'DIR', help: 'the collector state dir', defaultText: 'KEY_DIR/state' },
    ],
    load: () => import('../commands/agent-task/transfer-show.js'),
  },
  {
    path: ['skill-workflow', 'task-stop'],
    summary: 'Claude Code Stop hook: block the stop until the Change\'s current subject is qualified and the workspace is clean',
    details: STOP_HOOK_DETAILS,
    json: false,
    errorPolicy: 'hook',
    args: [CHANGE_ARG],
    options: STOP_HOOK_OPTIONS,
    load: () => import('../commands/skill-workflow/task-stop.js'),
  },
  {
    path: ['skill-workflow', 'task-codex-stop'],
    summary: 'Codex Stop hook: the same check as task-stop, answering only decision and reason',
    details: STOP_HOOK_DETAILS,
    json: false,
    errorPolicy: 'hook',
    args: [CHANGE_ARG],
    options: STOP_HOOK_OPTIONS,
    load: () => import('../commands/skill-workflow/task-codex-stop.js'),
  },
  {
    path: ['doctor'],
    summary: 'check this machine and project: Node, container engine, data dir, Hub and token, installed Stop hooks, Codex trust',
    details:
      'Each check prints ok, warn or fail. node: at least 20.19, a warning once its release line is past its end of life (Node 20 since 2026-04-30). engine: the endpoint --docker-host, DOCKER_HOST or a well-known ' +
      'socket names answers GET /_ping within 3 s (a named endpoint that does not answer fails; none found warns: only collecting ' +
      'needs one). data-dir (with --data-dir): exists, is this user\'s and owner-private (no group or other bits), and holds an ' +
      'authority; packs: the snapshot packs it holds, a warning past 256 (agentscm snapshot repack). hub (with --endpoint, ' +
      '--token-file, --repository and --profile, or their configured values): one capabilities call; a rejected token or an unreachable Hub fails. hooks: the agentscm Stop handlers in PROJECT/.claude/settings.json and ' +
      'PROJECT/.codex/hooks.json, failing when the node or program a handler starts (or its workspace) no longer exists. ' +
      'codex-trust (when a Codex handler is installed): whether $CODEX_HOME/config.toml (default ~/.codex) marks the project ' +
      'trust_level = "trusted"; whether the hook itself is trusted in /hooks is reported as unknown. Exits 0 when no check fails ' +
      '(warnings included) and 21 (CHECK_FAILED) otherwise; --json prints {"ok","checks":[{"name","status","message","detail"}],"not_checked"}.',
    options: [
      { ...DATA_DIR, required: false, help: 'the data dir to check', defaultText: 'not checked' },
      { ...ENDPOINT, required: false, defaultText: 'not checked' },
      CA_FILE,
      { ...REPOSITORY, required: false },
      { ...PROFILE, required: false },
      { ...TOKEN_FILE, required: false },
      DOCKER_HOST,
      { flag: 'project', value: 'DIR', help: 'the project whose hook files are checked', defaultText: 'the current directory' },
    ],
    load: () => import('../commands/doctor.js'),
  },
  {
    path: ['install-stop'],
    summary: 'register the task-stop Stop hook in a project\'s Claude Code or Codex hook config',
    details:
      'Merges one Stop handler into PROJECT/.claude/settings.json (claude-code) or PROJECT/.codex/hooks.json (codex), keeping ' +
      'everything else (Tree Ring\'s lifecycle hooks too), and reads the file back to check it; running it again with the same arguments changes nothing, and other arguments (another Change too) replace the handler of ' +
      'the same workspace in place, whichever entry path it names (so one an earlier release wrote too); --uninstall removes it. The command is a POSIX sh guard, then `exec` with absolute paths of node and of the bundled hook entry dist/bundles/agentscm-stop-hook.cjs (bin/agentscm.js when the bundle was not built; both take the same arguments), then `skill-workflow task-stop CHANGE` (task-codex-stop for Codex) with the options given here (Codex runs it as `$SHELL -lc`). ' +
      'When node or the entry is gone, or the working directory was removed, the guard blocks the stop (exit 2, a fixed sentence naming install-stop) instead of letting the agent stop unchecked. ' +
      'The data dir, project and workspace must exist; the data dir must hold an authority with an agent-task profile for REPOSITORY and PROFILE (else nothing is written: exit 9 or 13), ' +
      'and a Change without a checkpoint yet is installed with a note (the hook asks the agent to checkpoint until it has one). ' +
      'The token file must be an absolute path to a readable workspace token. Prints where the agent\'s instructions are; for ' +
      'Codex, the hook must also be trusted in /hooks before it runs.',
    args: [{ ...CHANGE_ARG, required: false, help: `${CHANGE_ARG.help} (required unless --uninstall)` }],
    options: [
      { flag: 'host', value: 'claude-code|codex', help: 'which host to configure', required: true },
      // Required unless --uninstall (checked by the command).
      ...STOP_HOOK_OPTIONS.filter((o) => o.flag !== 'workspace' && o.flag !== 'hub-key').map(({ required: _r, ...o }) => o),
      { flag: 'workspace', value: 'PATH', help: 'the workspace the hook checks', defaultText: 'the project directory' },
      { ...HUB_KEY, defaultText: 'the key `hub serve --receipt-key-dir` recorded in the data dir, else none' },
      { flag: 'project', value: 'DIR', help: 'the project whose hook config is written', defaultText: 'the current directory' },
      { flag: 'uninstall', help: 'remove the workspace\'s Stop handler instead (needs only --host, --project, --workspace)' },
    ],
    load: () => import('../commands/install-stop.js'),
  },
  {
    path: ['install-mcp'],
    summary: 'register the Hub\'s workspace MCP endpoint in a project\'s Claude Code (.mcp.json) or Codex (.codex/config.toml) config',
    details:
      'Merges one server entry (default name agentscm) for ENDPOINT/v1/hub/workspace/mcp?repository=..&profile=.., keeping everything else; ' +
      'the same arguments again change nothing. A Codex config.toml is edited line by line (every other line keeps its bytes and line ending) ' +
      'and the result checked with a TOML parser before it is written: a config that is not TOML, or that defines that server other than ' +
      'as its own [mcp_servers.NAME] table (an inline table or dotted keys, bare, quoted or literal), is refused unchanged (exit 3). ' +
      'The token is never written: Claude Code gets the header ' +
      '`Authorization: Bearer ${VAR}` (expanded from its environment), Codex gets `bearer_token_env_var = "VAR"`; start the host with VAR ' +
      'set to the workspace token. Tools: capabilities, requirements, next, instructions, reference, status, recovery, qualification, ' +
      'collector_descriptor, and (not for a read-scope token) claim, heartbeat, result, cancel, reconcile, collector_claim, collector_finalize. ' +
      '--uninstall removes the server of that name, and nothing else.',
    options: [
      { flag: 'host', value: 'claude-code|codex', help: 'which host to configure', required: true },
      // Required unless --uninstall (checked by the command).
      ...[ENDPOINT, REPOSITORY, PROFILE].map(({ required: _r, ...o }) => o),
      { flag: 'token-env', value: 'VAR', help: 'the environment variable the host reads the token from', defaultText: 'AGENTSCM_MCP_TOKEN' },
      { flag: 'name', value: 'NAME', help: 'the server name in the host config', defaultText: 'agentscm' },
      { flag: 'project', value: 'DIR', help: 'the project whose config is written (an existing directory)', defaultText: 'the current directory' },
      { flag: 'uninstall', help: 'remove the server instead (needs only --host, --project and --name when not the default)' },
    ],
    load: () => import('../commands/install-mcp.js'),
  },
  {
    path: ['init-repo'],
    summary: 'write the managed "Workflow tasks" block into AGENTS.md, Cursor rules and .github/copilot-instructions.md',
    details:
      'The block (between agentscm marker lines) tells an agent to discover, then fetch: capabilities, next, instructions, and ' +
      'reference only when needed. Re-running replaces the block in place and leaves every other byte of the files as it was; ' +
      'the Cursor rule is .cursor/rules/agentscm-workflow-tasks.mdc.',
    options: [{ flag: 'dir', value: 'DIR', help: 'the repository root', defaultText: 'the current directory' }],
    load: () => import('../commands/init-repo.js'),
  },
];

// ---- programs ------------------------------------------------------------------------------------

export const AGENTSCM: Program = {
  ...agentscmProgram(COMMANDS, GROUPS),
  subprograms: [{ group: 'tree-ring', name: 'tree-ring', versionLine: versionLine('tree-ring') }],
};

/** `tree-ring X` is `agentscm tree-ring X`: the same specs with the group word dropped. */
export const TREE_RING: Program = {
  name: 'tree-ring',
  version: TREE_RING_VERSION,
  versionLine: versionLine('tree-ring'),
  commands: COMMANDS.filter((c) => c.path[0] === 'tree-ring').map((c) => ({ ...c, path: c.path.slice(1) })),
  groups: GROUPS.filter((g) => g.path[0] === 'tree-ring' && g.path.length > 1).map((g) => ({ ...g, path: g.path.slice(1) })),
  defaultErrorPolicy: 'tree-ring',
  redact: redactSecrets,
  exitStatus: [
    [0, 'success'],
    [1, 'an error of `integrations hook`: one line "tree-ring: hook error: CATEGORY" on stderr (a host reads exit 2 from a hook as blocking)'],
    [2, 'any other error, following upstream Tree Ring: one line "error: ..." on stderr and nothing on stdout'],
  ],
};

export async function main(argv: readonly string[], program: 'agentscm' | 'tree-ring'): Promise<number> {
  return runProgram(program === 'agentscm' ? AGENTSCM : TREE_RING, argv, processContext(program));
}
