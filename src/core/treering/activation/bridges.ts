// The owned bridge material each maintained adapter publishes, and the check of installed material
// against a manifest record. All bytes here are deterministic (no absolute paths, no timestamps), so
// a deleted owned file can be re-created identically without touching the manifest.

import { sha256Hex } from '../../crypto/digest.js';
import {
  ADAPTERS,
  AGENTS_BLOCK_BEGIN,
  AGENTS_BLOCK_END,
  AGENTS_BLOCK_ID,
  AGENT_ZERO_COMMAND_ARGUMENTS,
  ACTIVATION_PROTOCOL_VERSION,
  HOOK_TIMEOUT_SECONDS,
  LIFECYCLE_EVENTS,
  LIFECYCLE_MARKER,
  type MaintainedHarness,
} from './constants.js';
import { bridgeFingerprint, type ManagedBlock, type OwnedFile } from './fingerprint.js';
import type { HarnessRecord } from './manifest.js';
import type { ProjectFs } from './projectfs.js';

export const AGENT_ZERO_BINDING = '.tree-ring/activation/agent-zero.json';

/**
 * The hook command both hosts run. It resolves the project root (git toplevel, else the working
 * directory), exits 0 when .tree-ring is genuinely absent (a symlink or file still reaches the CLI,
 * which reports it), and prefers the project-local launcher, which names node by absolute path.
 */
export function hookCommand(harness: 'codex' | 'claude-code'): string {
  const script =
    'r=$(git rev-parse --show-toplevel 2>/dev/null) || r=; [ -n "$r" ] || r=$PWD; cd "$r" || exit 1; ' +
    'if [ ! -e .tree-ring ] && [ ! -L .tree-ring ]; then exit 0; fi; ' +
    't=tree-ring; if [ -x .tree-ring/bin/tree-ring ]; then t=.tree-ring/bin/tree-ring; fi; ' +
    `exec "$t" --root .tree-ring integrations hook --harness ${harness} --input-json-stdin`;
  return `sh -c '${script}'`;
}

function hooksObject(harness: 'codex' | 'claude-code', withHandlerDescription: boolean): Record<string, unknown> {
  const hooks: Record<string, unknown> = {};
  for (const event of LIFECYCLE_EVENTS) {
    const handler: Record<string, unknown> = { type: 'command', command: hookCommand(harness), timeout: HOOK_TIMEOUT_SECONDS };
    if (withHandlerDescription) handler.description = LIFECYCLE_MARKER;
    hooks[event] = [{ hooks: [handler] }];
  }
  return hooks;
}

/**
 * The host hook files Tree Ring shares with other tools (agentscm's Stop gate, the project's own
 * hooks): there Tree Ring owns only its handlers, not the file. A file holding exactly Tree Ring's
 * handlers is checked as upstream checks it (its bytes); one that also holds others' handlers is
 * checked by its Tree Ring view: the file Tree Ring would write, when every lifecycle event has
 * exactly our handler, in a group of its own without a matcher, and no other event has one.
 */
export const SHARED_HOOK_FILES: Readonly<Record<string, 'codex' | 'claude-code'>> = { '.codex/hooks.json': 'codex', '.claude/settings.json': 'claude-code' };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function isTreeRingHandler(h: unknown, harness: 'codex' | 'claude-code'): boolean {
  return isObj(h) && h.command === hookCommand(harness);
}

function parseHookDoc(text: string): Obj | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return isObj(v) && (v.hooks === undefined || isObj(v.hooks)) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** How many of our handlers the document holds, and whether they are exactly the desired set. */
function treeRingHandlers(doc: Obj, harness: 'codex' | 'claude-code'): { count: number; exact: boolean } {
  const hooks = isObj(doc.hooks) ? doc.hooks : {};
  const desired = hooksObject(harness, harness === 'claude-code') as Record<string, [{ hooks: [unknown] }]>;
  let count = 0;
  let exact = true;
  for (const [event, groups] of Object.entries(hooks)) {
    const ours = Array.isArray(groups) ? groups.filter((g) => isObj(g) && Array.isArray(g.hooks) && g.hooks.some((h) => isTreeRingHandler(h, harness))) : [];
    const handlers = ours.flatMap((g) => ((g as Obj).hooks as unknown[]).filter((h) => isTreeRingHandler(h, harness)));
    count += handlers.length;
    const want = desired[event]?.[0]?.hooks[0];
    if (want === undefined) {
      if (handlers.length > 0) exact = false;
      continue;
    }
    const g = ours[0] as Obj | undefined;
    if (handlers.length !== 1 || !g || 'matcher' in g || JSON.stringify(handlers[0]) !== JSON.stringify(want)) exact = false;
  }
  for (const event of LIFECYCLE_EVENTS) if (!Array.isArray(hooks[event])) exact = false;
  return { count, exact };
}

/** The bytes Tree Ring checks for a shared hook file: the file's own, or its Tree Ring view (above). */
export function treeRingViewOf(rel: string, bytes: Buffer): Buffer {
  const harness = SHARED_HOOK_FILES[rel];
  if (harness === undefined) return bytes;
  const doc = parseHookDoc(bytes.toString('utf8'));
  if (!doc || !treeRingHandlers(doc, harness).exact) return bytes;
  return Buffer.from(harness === 'codex' ? codexHooksJson() : claudeSettingsJson(), 'utf8');
}

/**
 * Our handlers merged into another tool's hook file that has none of them yet: one group per lifecycle
 * event, appended after what is there; everything else stays as it was. Undefined when the file is not
 * a hook document or already holds some handler of ours (that needs review, not a merge).
 */
export function mergedHookFile(rel: string, text: string): string | undefined {
  const harness = SHARED_HOOK_FILES[rel];
  if (harness === undefined) return undefined;
  const doc = parseHookDoc(text);
  if (!doc || treeRingHandlers(doc, harness).count > 0) return undefined;
  const hooks: Obj = isObj(doc.hooks) ? { ...doc.hooks } : {};
  const ours = hooksObject(harness, harness === 'claude-code');
  for (const event of LIFECYCLE_EVENTS) {
    const existing = hooks[event];
    if (existing !== undefined && !Array.isArray(existing)) return undefined;
    hooks[event] = [...((existing as unknown[] | undefined) ?? []), ...(ours[event] as unknown[])];
  }
  return JSON.stringify({ ...doc, hooks }, null, 2) + '\n';
}

export function codexHooksJson(): string {
  return JSON.stringify({ description: LIFECYCLE_MARKER, hooks: hooksObject('codex', false) }, null, 2) + '\n';
}

export function claudeSettingsJson(): string {
  return JSON.stringify({ hooks: hooksObject('claude-code', true) }, null, 2) + '\n';
}

/** The marked root AGENTS.md block (markers included, no trailing newline). */
export function agentsBlock(): string {
  return [
    AGENTS_BLOCK_BEGIN,
    '## Tree Ring Memory',
    '',
    'Read `.tree-ring/AGENTS.md` before substantive work. The project lifecycle hook recalls scoped project memory at session',
    'start and asks for one capture checkpoint before a session or subagent stops. Do not claim memory is active without a',
    'valid project-local recall receipt (`tree-ring integrations status`). Capture zero to three concise durable candidates;',
    'never store a transcript or invent memory.',
    AGENTS_BLOCK_END,
  ].join('\n');
}

export function piExtension(): string {
  return `// Tree Ring Memory: project-local preflight before each Pi agent start (adapter version ${ADAPTERS.pi.adapterVersion}).
// Sends only Pi's local session identity on stdin; never the prompt.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

function preflight(cwd: string, input: string): Promise<{ context: string }> {
  const local = join(cwd, ".tree-ring", "bin", "tree-ring");
  const command = existsSync(local) ? local : "tree-ring";
  const args = ["--root", ".tree-ring", "integrations", "preflight", "--harness", "pi", "--input-json-stdin", "--context-format", "pi-before-agent-start"];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
    child.on("error", reject);
    child.on("close", (code: number | null) => {
      if (code !== 0) return reject(new Error(err.trim() || "Tree Ring preflight failed"));
      try {
        const r = JSON.parse(out) as { context?: unknown };
        if (typeof r.context !== "string") throw new Error("missing context");
        resolve({ context: r.context });
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
    child.stdin.end(input);
  });
}

export default function treeRingMemory(pi: any) {
  pi.on("before_agent_start", async (_event: unknown, ctx: any) => {
    const session = String(ctx.sessionManager.getSessionId?.() ?? "pi-ephemeral").replace(/[^A-Za-z0-9._:@-]/g, "-").slice(0, 128);
    const input = JSON.stringify({ agent_profile: "pi", workflow_id: session, session_id: session });
    const response = await preflight(ctx.cwd, input);
    return { message: { customType: "tree-ring-preflight", content: response.context, display: false } };
  });
}
`;
}

/** Where upstream's skill bridges live: Codex and Pi share the first, Claude Code has its own. */
export const AGENTS_SKILL_PATH = '.agents/skills/tree-ring-memory/SKILL.md';
export const CLAUDE_SKILL_PATH = '.claude/skills/tree-ring-memory/SKILL.md';

/**
 * The skill bridge upstream publishes for Codex, Claude Code and Pi, byte for byte (SKILL_BRIDGE in
 * crates/tree-ring-memory-cli/src/activation/bridge.rs, 0.15.x): it points the harness at the
 * project-local guidance and its preflight, and claims nothing about activation.
 */
export function skillBridge(): string {
  return [
    '---',
    'name: tree-ring-memory',
    'description: Use the canonical project-local Tree Ring Memory guidance and preflight contract.',
    '---',
    '',
    '# Tree Ring Memory',
    '',
    'Read `.tree-ring/SKILL.md`, `.tree-ring/AGENTS.md`, and `.tree-ring/CLI.md` from this project. Before substantive work, use the project-local Tree Ring preflight interface for this harness. Treat configured guidance as non-active until a receipt-producing preflight succeeds.',
    '',
  ].join('\n');
}

export interface AgentZeroBinding {
  readonly store_id: string;
  readonly project_root_fingerprint: string;
}

export function agentZeroBindingJson(b: AgentZeroBinding): string {
  return (
    JSON.stringify(
      {
        schema_version: 1,
        protocol_version: ACTIVATION_PROTOCOL_VERSION,
        harness_id: 'agent-zero',
        store_id: b.store_id,
        project_root_fingerprint: b.project_root_fingerprint,
        memory_root: '.tree-ring',
        command_protocol: { command: 'tree-ring', arguments: [...AGENT_ZERO_COMMAND_ARGUMENTS], stdin: 'json', stdout: 'json' },
      },
      null,
      2,
    ) + '\n'
  );
}

export interface DesiredFile {
  readonly path: string;
  readonly bytes: string;
  readonly mode: number;
}

export interface DesiredBridge {
  readonly harness: MaintainedHarness;
  readonly bridgePath: string;
  readonly files: readonly DesiredFile[];
  /** Managed blocks inside files the project may own (root AGENTS.md). */
  readonly blocks: readonly { path: string; block_id: string; text: string }[];
}

export function desiredBridge(harness: MaintainedHarness, binding: AgentZeroBinding): DesiredBridge {
  switch (harness) {
    case 'codex':
      return {
        harness,
        bridgePath: '.codex/hooks.json',
        files: [
          { path: AGENTS_SKILL_PATH, bytes: skillBridge(), mode: 0o644 },
          { path: '.codex/hooks.json', bytes: codexHooksJson(), mode: 0o644 },
        ],
        blocks: [{ path: 'AGENTS.md', block_id: AGENTS_BLOCK_ID, text: agentsBlock() }],
      };
    case 'claude-code':
      return {
        harness,
        bridgePath: '.claude/settings.json',
        files: [
          { path: CLAUDE_SKILL_PATH, bytes: skillBridge(), mode: 0o644 },
          { path: '.claude/settings.json', bytes: claudeSettingsJson(), mode: 0o644 },
        ],
        blocks: [],
      };
    case 'pi':
      return {
        harness,
        bridgePath: '.pi/extensions/tree-ring-memory.ts',
        files: [
          { path: AGENTS_SKILL_PATH, bytes: skillBridge(), mode: 0o644 },
          { path: '.pi/extensions/tree-ring-memory.ts', bytes: piExtension(), mode: 0o644 },
        ],
        blocks: [],
      };
    case 'agent-zero':
      return { harness, bridgePath: AGENT_ZERO_BINDING, files: [{ path: AGENT_ZERO_BINDING, bytes: agentZeroBindingJson(binding), mode: 0o644 }], blocks: [] };
  }
}

/**
 * Finds our marked block in a file's text: its exact text and how many begin markers there are.
 * Nothing about the text around it (its offset, the whitespace before it) is returned: that text is
 * the project's, and edits to it must not change what we record or verify.
 */
export function findBlock(text: string): { text: string; count: number } | undefined {
  const count = text.split(AGENTS_BLOCK_BEGIN).length - 1;
  const start = text.indexOf(AGENTS_BLOCK_BEGIN);
  if (start === -1) return undefined;
  const endAt = text.indexOf(AGENTS_BLOCK_END, start);
  if (endAt === -1) return undefined;
  return { text: text.slice(start, endAt + AGENTS_BLOCK_END.length), count };
}

export function recordFor(harness: MaintainedHarness, state: HarnessRecord['state'], bridgePath: string, files: readonly OwnedFile[], blocks: readonly ManagedBlock[]): HarnessRecord {
  const a = ADAPTERS[harness];
  return {
    state,
    adapter_version: a.adapterVersion,
    adapter_capability: a.capability,
    bridge_fingerprint: bridgeFingerprint(harness, a.adapterVersion, files, blocks),
    bridge_path: bridgePath,
    owned_files: files,
    managed_blocks: blocks,
  };
}

export type MaterialCheck =
  | { ok: true; fingerprint: string }
  | { ok: false; problem: 'missing' | 'changed' | 'unsafe'; detail: string };

/** Recomputes the bridge fingerprint from installed material and compares it with the record. */
export function checkInstalledMaterial(pfs: ProjectFs, harness: string, rec: HarnessRecord): MaterialCheck {
  try {
    for (const f of rec.owned_files) {
      const bytes = pfs.read(f.path);
      if (bytes === undefined) return { ok: false, problem: 'missing', detail: `owned file ${f.path} is missing` };
      if (sha256Hex(bytes) !== f.sha256 && sha256Hex(treeRingViewOf(f.path, bytes)) !== f.sha256) return { ok: false, problem: 'changed', detail: `owned file ${f.path} has changed` };
    }
    for (const b of rec.managed_blocks) {
      const bytes = pfs.read(b.path);
      if (bytes === undefined) return { ok: false, problem: 'missing', detail: `managed block file ${b.path} is missing` };
      const found = findBlock(bytes.toString('utf8'));
      if (!found) return { ok: false, problem: 'missing', detail: `managed block ${b.block_id} is missing from ${b.path}` };
      if (found.count !== 1 || sha256Hex(found.text) !== b.sha256) return { ok: false, problem: 'changed', detail: `managed block ${b.block_id} in ${b.path} has changed` };
    }
  } catch (e) {
    return { ok: false, problem: 'unsafe', detail: e instanceof Error ? e.message : String(e) };
  }
  const fp = bridgeFingerprint(harness, rec.adapter_version, rec.owned_files, rec.managed_blocks);
  if (fp !== rec.bridge_fingerprint) return { ok: false, problem: 'changed', detail: 'recorded bridge fingerprint does not match the recorded material' };
  return { ok: true, fingerprint: fp };
}
