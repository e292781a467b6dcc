// `tree-ring integrations preflight --harness H`: direct mode (identity from flags, text context) or
// stdin mode (`--input-json-stdin --context-format claude-session-start|pi-before-agent-start|json`)
// as Pi's extension and the Agent Zero plugin call it.

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { badInput, localState, usageError } from '../../core/errors.js';
import { optionalString, readBounded, requiredString, screenInput, STDIN_MAX_BYTES } from '../../core/treering/activation/input.js';
import { runPreflight, type PreflightIdentity } from '../../core/treering/activation/preflight.js';
import { openPreflightRecall } from '../../core/treering/activation/recall.js';
import { receiptSummary } from '../../core/treering/activation/receipts.js';
import { loadManifest, requireManifest, resolveRoot } from '../../core/treering/activation/root.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { boolOpt, optionalStringOpt } from '../options.js';
import { harnessOpt, rootFrom } from './integrations-common.js';

const FORMATS = ['claude-session-start', 'pi-before-agent-start', 'json'] as const;

/**
 * Whether the store being preflighted is the canonical one of the project at `canonicalRoot`: the same
 * project root, or a project whose own .tree-ring manifest names the same store id. A canonical root
 * this process cannot reach is needs-project-mount (an error: no receipt is written).
 */
function sameStore(canonicalRoot: string, realProjectRoot: string, storeId: string): boolean {
  let real: string;
  try {
    real = fs.realpathSync.native(canonicalRoot);
    if (!fs.statSync(real).isDirectory()) throw new Error('not a directory');
  } catch {
    throw localState('needs-project-mount: the canonical project root is not reachable from this runtime', 'NEEDS_PROJECT_MOUNT');
  }
  if (real === realProjectRoot) return true;
  const other = loadManifest(resolveRoot(real, '.tree-ring'));
  return other.kind === 'ok' && other.manifest.store_id === storeId;
}

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const harness = harnessOpt(inv);
  const stdinMode = boolOpt(inv, 'input-json-stdin');
  const format = optionalStringOpt(inv, 'context-format');
  if (format !== undefined && !(FORMATS as readonly string[]).includes(format)) throw usageError(`--context-format must be one of ${FORMATS.join(', ')}`);
  if (format !== undefined && !stdinMode) throw usageError('--context-format applies to --input-json-stdin');
  let identity: PreflightIdentity;
  let taskHint: string | undefined;
  if (stdinMode) {
    for (const f of ['agent-profile', 'workflow-id', 'session-id', 'task-hint']) if (inv.opts[f] !== undefined) throw usageError(`--${f} cannot be combined with --input-json-stdin`);
    const what = 'preflight request';
    const o = screenInput(await readBounded(ctx.stdin, STDIN_MAX_BYTES), what);
    identity = { agent_profile: requiredString(o, 'agent_profile', what, 128), workflow_id: requiredString(o, 'workflow_id', what, 128), session_id: requiredString(o, 'session_id', what, 128) };
    taskHint = optionalString(o, 'task_hint', what, 4096);
    if (taskHint !== undefined && harness === 'agent-zero') throw badInput('the Agent Zero request carries no task hint', 'BAD_INPUT');
  } else {
    const direct = `direct-${randomBytes(6).toString('hex')}`;
    identity = {
      agent_profile: optionalStringOpt(inv, 'agent-profile') ?? harness,
      workflow_id: optionalStringOpt(inv, 'workflow-id') ?? direct,
      session_id: optionalStringOpt(inv, 'session-id') ?? direct,
    };
    taskHint = optionalStringOpt(inv, 'task-hint');
  }
  const root = rootFrom(ctx, inv);
  const manifest = requireManifest(root);
  const canonical = optionalStringOpt(inv, 'canonical-project-root');
  const isolated = canonical !== undefined && !sameStore(path.resolve(ctx.cwd, canonical), root.realProjectRoot, manifest.store_id);
  const recall = await openPreflightRecall(root.memoryRoot);
  const r = await runPreflight({ root, manifest, harness, identity, ...(taskHint !== undefined ? { taskHint } : {}), recall, env: ctx.env, isolated });
  const response = { context: r.context, state: r.state, receipt: receiptSummary(r.receipt) };
  if (stdinMode) {
    if (format === 'claude-session-start') return { raw: JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: r.context } }) + '\n' };
    return { raw: JSON.stringify(response) + '\n' };
  }
  return { data: response, text: r.context };
}
