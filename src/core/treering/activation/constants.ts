// Fixed identifiers of the Tree Ring harness activation protocol (version 1). Everything the hosts,
// upstream plugins and receipts compare byte-for-byte lives here, so that one edit changes them all.

export const ACTIVATION_PROTOCOL_VERSION = 1;
export const ACTIVATION_SCHEMA_VERSION = 1;
export const RECEIPT_SCHEMA_VERSION = 1;

/** The whole preflight context (header, entries, footer) fits in this many UTF-8 bytes. */
export const CONTEXT_MAX_BYTES = 6000;
/** Receipt retention: at most this many per harness/worker, none older than the window. */
export const RECEIPTS_PER_WORKER = 100;
export const RECEIPT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/** Host hook handlers are synchronous and bounded to this many seconds. */
export const HOOK_TIMEOUT_SECONDS = 10;
/** Bounded candidate set a preflight asks the store for before rendering. */
export const PREFLIGHT_CANDIDATE_LIMIT = 8;

export type ActivationState =
  | 'active'
  | 'configured-awaiting-proof'
  | 'active-isolated'
  | 'needs-trust'
  | 'needs-project-mount'
  | 'needs-plugin'
  | 'needs-user-review'
  | 'unsupported'
  | 'failed';

export const ACTIVATION_STATES: readonly ActivationState[] = [
  'active',
  'configured-awaiting-proof',
  'active-isolated',
  'needs-trust',
  'needs-project-mount',
  'needs-plugin',
  'needs-user-review',
  'unsupported',
  'failed',
];

export type AdapterCapability = 'native-preflight' | 'lifecycle-hooks' | 'guidance-only';
export const ADAPTER_CAPABILITIES: readonly AdapterCapability[] = ['native-preflight', 'lifecycle-hooks', 'guidance-only'];

export type MaintainedHarness = 'codex' | 'claude-code' | 'pi' | 'agent-zero';
export const MAINTAINED_HARNESSES: readonly MaintainedHarness[] = ['codex', 'claude-code', 'pi', 'agent-zero'];
/** Harnesses with guidance but no maintained verified adapter: never active. */
export const UNSUPPORTED_HARNESSES = ['hermes', 'opencode', 'goose'] as const;

export interface AdapterInfo {
  readonly id: MaintainedHarness;
  readonly displayName: string;
  /** Bumped whenever the owned bridge material changes; receipts bind to it. */
  readonly adapterVersion: string;
  readonly capability: AdapterCapability;
}

export const ADAPTERS: Readonly<Record<MaintainedHarness, AdapterInfo>> = {
  codex: { id: 'codex', displayName: 'Codex', adapterVersion: '4', capability: 'lifecycle-hooks' },
  'claude-code': { id: 'claude-code', displayName: 'Claude Code', adapterVersion: '4', capability: 'lifecycle-hooks' },
  pi: { id: 'pi', displayName: 'Pi', adapterVersion: '1', capability: 'native-preflight' },
  'agent-zero': { id: 'agent-zero', displayName: 'Agent Zero', adapterVersion: '1', capability: 'native-preflight' },
};

export const UNSUPPORTED_NAMES: Readonly<Record<(typeof UNSUPPORTED_HARNESSES)[number], string>> = {
  hermes: 'Hermes',
  opencode: 'OpenCode',
  goose: 'Goose',
};

export function isMaintainedHarness(id: string): id is MaintainedHarness {
  return (MAINTAINED_HARNESSES as readonly string[]).includes(id);
}

/**
 * Upstream plugins grep for this exact text followed by a closing JSON quote, and stand down when a
 * project already has managed lifecycle hooks. Keep it the whole description string.
 */
export const LIFECYCLE_MARKER = 'Tree Ring Memory managed lifecycle v4';
export const AGENTS_BLOCK_BEGIN = '<!-- tree-ring:begin codex v1 -->';
export const AGENTS_BLOCK_END = '<!-- tree-ring:end codex -->';
export const AGENTS_BLOCK_ID = 'tree-ring-codex-v1';

export const LIFECYCLE_EVENTS = ['SessionStart', 'SubagentStart', 'Stop', 'SubagentStop'] as const;
export type LifecycleEvent = (typeof LIFECYCLE_EVENTS)[number];

/** Stable query classes a receipt may name; never a raw hint. */
export type QueryClass = 'startup_fallback' | 'scoped_task_recall';
export const QUERY_CLASSES: readonly QueryClass[] = ['startup_fallback', 'scoped_task_recall'];

// ---- Agent Zero -----------------------------------------------------------------------------------

export const AGENT_ZERO_PLUGIN_ID = 'tree_ring_memory';
export const AGENT_ZERO_DESCRIPTOR_ENV = 'TREE_RING_AGENT_ZERO_PLUGIN_MANIFEST';
export const AGENT_ZERO_DESCRIPTOR_FILE = 'activation-capability.json';
export const AGENT_ZERO_DESCRIPTOR_KIND = 'tree-ring-agent-zero-plugin-capability';
export const AGENT_ZERO_DESCRIPTOR_MAX_BYTES = 16 * 1024;

/**
 * Released plugin versions and the Tree Ring series each declares (minimum CLI version and minor
 * series), checked against upstream: 3.1.0 to 3.3.1 against the core's own table
 * (AGENT_ZERO_CAPABILITY_CONTRACTS in crates/tree-ring-memory-cli/src/activation/adapters.rs, 0.15.4);
 * 3.4.0 (min 0.15.5) and 3.4.1 (min 0.15.6) against each release's activation-capability.json in
 * the tree-ring-memory-agent-zero plugin; 3.4.2 (min 0.15.12) against the core's
 * tests/agent_zero_342_acceptance.rs, the newest contract. A descriptor qualifies only when it names one of these rows exactly and this CLI's version
 * lies in that series at or above the minimum, so an old plugin release cannot pair with a newer core.
 */
export const AGENT_ZERO_COMPATIBILITY: readonly { plugin: string; min: string; minor: string }[] = [
  { plugin: '3.1.0', min: '0.14.0', minor: '0.14' },
  { plugin: '3.2.0', min: '0.15.3', minor: '0.15' },
  { plugin: '3.3.0', min: '0.15.3', minor: '0.15' },
  { plugin: '3.3.1', min: '0.15.3', minor: '0.15' },
  { plugin: '3.4.0', min: '0.15.5', minor: '0.15' },
  { plugin: '3.4.1', min: '0.15.6', minor: '0.15' },
  { plugin: '3.4.2', min: '0.15.12', minor: '0.15' },
];

/** The exact command the passive binding names; the plugin runs it with JSON stdin and stdout. */
export const AGENT_ZERO_COMMAND_ARGUMENTS = [
  '--root',
  '.tree-ring',
  'integrations',
  'preflight',
  '--harness',
  'agent-zero',
  '--input-json-stdin',
  '--context-format',
  'json',
] as const;
