// `tree-ring integrations preflight --harness H`: direct mode (identity from flags, text context) or
// stdin mode (`--input-json-stdin --context-format claude-session-start|pi-before-agent-start|json`)
// as Pi's extension and the Agent Zero plugin call it.

import { randomBytes } from 'node:crypto';
import { badInput, usageError } from '../../core/errors.js';
import { optionalString, readBounded, requiredString, screenInput, STDIN_MAX_BYTES } from '../../core/treering/activation/input.js';
import { runPreflight, type PreflightIdentity } from '../../core/treering/activation/preflight.js';
import { openPreflightRecall } from '../../core/treering/activation/recall.js';
import { receiptSummary } from '../../core/treering/activation/receipts.js';
import { requireManifest } from '../../core/treering/activation/root.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { boolOpt, optionalStringOpt } from '../options.js';
import { harnessOpt, rootFrom } from './integrations-common.js';

const FORMATS = ['claude-session-start', 'pi-before-agent-start', 'json'] as const;

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
  const recall = await openPreflightRecall(root.memoryRoot);
  const r = await runPreflight({ root, manifest, harness, identity, ...(taskHint !== undefined ? { taskHint } : {}), recall, env: ctx.env });
  const response = { context: r.context, state: r.state, receipt: receiptSummary(r.receipt) };
  if (stdinMode) {
    if (format === 'claude-session-start') return { raw: JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: r.context } }) + '\n' };
    return { raw: JSON.stringify(response) + '\n' };
  }
  return { data: response, text: r.context };
}
