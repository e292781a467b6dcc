// The Codex and Claude Code lifecycle hook: SessionStart/SubagentStart run a receipt-backed preflight
// and answer with hookSpecificOutput.additionalContext; the first Stop/SubagentStop answers with the
// capture checkpoint block; a continuation (stop_hook_active) answers {}. This is the hot path: it
// imports nothing heavy (no ink, react, dockerode, execa or zod).

import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { badInput, localState } from '../../errors.js';
import { sha256Hex } from '../../crypto/digest.js';
import { LIFECYCLE_EVENTS, type LifecycleEvent } from './constants.js';
import { optionalString, requiredString, screenInput } from './input.js';
import { runPreflight, safeIdentifier, secretShaped, type PreflightIdentity } from './preflight.js';
import type { PreflightRecall } from './recall.js';
import { projectAlias } from './alias.js';
import { requireManifest, rootKind, type ActivationRoot } from './root.js';

export type HookHarness = 'codex' | 'claude-code';

export interface HookEvent {
  readonly event: LifecycleEvent;
  readonly identity: PreflightIdentity;
  readonly worker: boolean;
  readonly stopHookActive: boolean;
}

/** Validates the whitelisted fields; `cwd` must resolve inside the project. */
export function parseHookEvent(bytes: Uint8Array, harness: HookHarness, root: ActivationRoot, processCwd: string): HookEvent {
  const what = 'hook input';
  const o = screenInput(bytes, what);
  const name = requiredString(o, 'hook_event_name', what, 64);
  if (!(LIFECYCLE_EVENTS as readonly string[]).includes(name)) throw badInput(`unsupported hook event ${JSON.stringify(name.slice(0, 40))}`, 'UNSUPPORTED_EVENT');
  const event = name as LifecycleEvent;
  const sessionRaw = requiredString(o, 'session_id', what, 1024);
  const cwdRaw = requiredString(o, 'cwd', what, 4096);
  let realCwd: string;
  try {
    realCwd = fs.realpathSync.native(path.resolve(processCwd, cwdRaw));
  } catch {
    throw badInput('hook input cwd does not exist', 'CWD_OUTSIDE_PROJECT');
  }
  if (realCwd !== root.realProjectRoot && !realCwd.startsWith(root.realProjectRoot + path.sep)) throw badInput('hook input cwd is outside the activated project', 'CWD_OUTSIDE_PROJECT');
  const agentId = optionalString(o, 'agent_id', what, 1024);
  const agentType = optionalString(o, 'agent_type', what, 1024);
  const subagentEvent = event === 'SubagentStart' || event === 'SubagentStop';
  if (subagentEvent && (!agentId || !agentType)) throw badInput(`${event} needs agent_id and agent_type`, 'BAD_INPUT');
  const sah = o.stop_hook_active;
  if (event === 'Stop' || event === 'SubagentStop') {
    // Both hosts always send it on these events (seed 003: they require it); without it a
    // continuation could not be told from a first stop.
    if (typeof sah !== 'boolean') throw badInput(`${event} needs stop_hook_active (a boolean)`, 'BAD_INPUT');
  } else if (sah !== undefined && sah !== null && typeof sah !== 'boolean') throw badInput('stop_hook_active must be a boolean', 'BAD_INPUT');
  const session = safeIdentifier(sessionRaw, 's');
  const worker = subagentEvent || (agentId !== undefined && agentType !== undefined);
  let profile: string = harness;
  if (worker && agentId && agentType) {
    // A distinct, private profile per worker: its type for readability, its id for uniqueness.
    // A type shaped like a secret is not kept, not even in part.
    const type = (secretShaped(agentType) ? '' : agentType.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 32)) || 'worker';
    profile = `${harness}-${type}-${sha256Hex(agentId).slice(0, 12)}`;
  }
  return { event, identity: { agent_profile: profile, workflow_id: session, session_id: session }, worker, stopHookActive: sah === true };
}

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Double-quoted as upstream writes its identity values; a value a shell would expand is single-quoted. */
function dq(s: string): string {
  for (const c of s) if (c === '"' || c === '$' || c === '`' || c === '\\' || c === '!') return shQuote(s);
  return `"${s}"`;
}

/**
 * The Stop checkpoint's reason, in upstream's layout (render_capture_checkpoint and PROJECT_RUNTIME in
 * crates/tree-ring-memory-cli/src/activation/lifecycle.rs, 0.15.x): the request on the first line,
 * the capture command on the second with its placeholders, the rules after. The command prefers the
 * project-local launcher and falls back to `tree-ring` on PATH. Where upstream derives the project
 * root from git (or the working directory) when the agent runs it, this one names it absolutely, so
 * that an agent whose shell is in a subdirectory of a project without git reaches the same store.
 */
export function checkpointReason(project: string, id: PreflightIdentity, checkpointId: string, projectRoot: string): string {
  const runtime = `project_root=${shQuote(projectRoot)}; tree_ring="$project_root/.tree-ring/bin/tree-ring"; if [ ! -x "$tree_ring" ]; then tree_ring=tree-ring; fi`;
  const cmd =
    `${runtime}; "$tree_ring" --root "$project_root/.tree-ring" capture "<concise summary>" --event-type <preference|decision|lesson|warning|correction|seed> ` +
    `--ring <cambium|scar|seed> --project ${dq(project)} --agent-profile ${dq(id.agent_profile)} --workflow-id ${dq(id.workflow_id)} ` +
    `--session-id ${dq(id.session_id)} --operation-id auto-${checkpointId}-<1|2|3> --source-ref agent-checkpoint:${checkpointId}`;
  return [
    `Tree Ring automatic capture checkpoint ${checkpointId}. Before stopping, review only the durable outcomes already available in your working context. ` +
      'For zero to three genuinely reusable normal-sensitivity preferences, decisions, validated lessons, warnings, corrections, or future seeds, run one strict capture command per candidate:',
    cmd,
    'Use the same indexed operation ID only when retrying that same candidate. Use only `tree-ring capture` for this automatic checkpoint; `remember` and `evidence` remain separate manual surfaces. ' +
      'If nothing durable occurred, write nothing and finish; never invent memory. Never store raw prompts, transcripts, tool logs, secrets, or sensitive data, and do not start a background recorder. ' +
      'After this checkpoint, finish the response.',
  ].join('\n');
}

export type HookAnswer = { kind: 'silent' } | { kind: 'json'; body: string };

export async function runHook(root: ActivationRoot, harness: HookHarness, stdin: Uint8Array, processCwd: string, env: NodeJS.ProcessEnv, recall: () => Promise<PreflightRecall>): Promise<HookAnswer> {
  // The input is validated first, as upstream does: `{}`, a root- or capability-bearing field and a
  // cwd outside the project are refused even where the project never opted in.
  const ev = parseHookEvent(stdin, harness, root, processCwd);
  // A genuinely absent root means the project never opted in: succeed silently, create nothing.
  if (rootKind(root) === 'absent') return { kind: 'silent' };
  const manifest = requireManifest(root);
  if (!manifest.harnesses[harness]) throw localState(`${harness} has no managed activation record`, 'NOT_ACTIVATED');
  if (ev.event === 'Stop' || ev.event === 'SubagentStop') {
    if (ev.stopHookActive) return { kind: 'json', body: '{}\n' };
    // One checkpoint id per stop attempt: retries of the same candidate reuse its operation id.
    const checkpointId = randomUUID();
    const reason = checkpointReason(projectAlias(path.basename(root.realProjectRoot)), ev.identity, checkpointId, root.realProjectRoot);
    return { kind: 'json', body: JSON.stringify({ decision: 'block', reason }) + '\n' };
  }
  const r = await runPreflight({ root, manifest, harness, identity: ev.identity, recall: await recall(), env });
  return { kind: 'json', body: JSON.stringify({ hookSpecificOutput: { hookEventName: ev.event, additionalContext: r.context } }) + '\n' };
}
