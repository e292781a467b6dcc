// Shared option handling of the tree-ring commands: the store root and identity flags with their
// environment fallbacks. Kept free of the write path's modules: `recall` imports it.

import * as path from 'node:path';
import { usageError } from '../../core/errors.js';
import type { CommandContext, Invocation } from '../../cli/types.js';

export const DEFAULT_ROOT = '.tree-ring';

export interface Root {
  /** As the user gave it (printed back, like upstream). */
  display: string;
  /** Resolved against the working directory. */
  abs: string;
}

export function rootOf(ctx: CommandContext, inv: Invocation): Root {
  const v = inv.opts.root;
  const display = typeof v === 'string' && v !== '' ? v : DEFAULT_ROOT;
  return { display, abs: path.resolve(ctx.cwd, display) };
}

export function str(inv: Invocation, flag: string): string | undefined {
  const v = inv.opts[flag];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw usageError(`--${flag} needs a value`);
  return v;
}

export function list(inv: Invocation, flag: string): string[] | undefined {
  const v = inv.opts[flag];
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v : [String(v)];
}

export function flag(inv: Invocation, name: string): boolean {
  return inv.opts[name] === true;
}

export function float(inv: Invocation, flagName: string): number | undefined {
  const v = str(inv, flagName);
  if (v === undefined) return undefined;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v.trim())) throw usageError(`--${flagName} must be a number`);
  return Number(v);
}

export function uint(inv: Invocation, flagName: string, dflt: number, max: number): number {
  const v = str(inv, flagName);
  if (v === undefined) return dflt;
  if (!/^[0-9]+$/.test(v)) throw usageError(`--${flagName} must be a whole number`);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n > max) throw usageError(`--${flagName} must be at most ${max}`);
  return n;
}

export function env(ctx: CommandContext, name: string): string | undefined {
  const v = ctx.env[name];
  return v === undefined || v === '' ? undefined : v;
}

export interface IdentityFlags {
  agentProfile: string | undefined;
  workflowId: string | undefined;
  sessionId: string | undefined;
}

/** --agent-profile/--workflow-id/--session-id, else TREE_RING_AGENT_PROFILE/_WORKFLOW_ID/_SESSION_ID. */
export function identity(ctx: CommandContext, inv: Invocation): IdentityFlags {
  return {
    agentProfile: str(inv, 'agent-profile') ?? env(ctx, 'TREE_RING_AGENT_PROFILE'),
    workflowId: str(inv, 'workflow-id') ?? env(ctx, 'TREE_RING_WORKFLOW_ID'),
    sessionId: str(inv, 'session-id') ?? env(ctx, 'TREE_RING_SESSION_ID'),
  };
}
