// tree-ring policy enable|status|rotate|disable|audit. enable and rotate print the new coordinator
// capability once (it is not stored: only its hash is); status and audit open the store read-only and
// never create or migrate it.

import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { AgentscmError } from '../../core/errors.js';
import { disablePolicy, enablePolicy, policyAudit, policyStatus, rotatePolicy, type PolicyGrant, type PolicyStatus } from '../../core/treering/store/policy.js';
import { openReadOnly, openWritable, writeTransaction, type Db } from '../../core/treering/store/schema.js';
import {identity, rootOf, str, uint} from './common.js';
import { writer } from './writer.js';

function withWrite<T>(root: string, fn: (db: Db) => T | AgentscmError): T {
  const db = openWritable(root);
  let out: T | AgentscmError;
  try {
    out = writeTransaction(db, () => fn(db));
  } finally {
    db.close();
  }
  if (out instanceof AgentscmError) throw out;
  return out;
}

function withRead<T>(root: string, fn: (db: Db) => T): T {
  const db = openReadOnly(root);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

function statusText(s: PolicyStatus): string {
  return [`mode: ${s.mode}`, `coordinator_label: ${s.coordinator_label ?? '-'}`, `enabled_at: ${s.enabled_at ?? '-'}`, `updated_at: ${s.updated_at || '-'}`].join('\n');
}

function grantResult(g: PolicyGrant): CommandResult {
  return {
    data: g,
    text: `${statusText(g.status)}\ncapability: ${g.capability}\nThis capability is shown once. Give it only to the coordinator process as TREE_RING_COORDINATOR_TOKEN.`,
  };
}

export async function enable(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const root = rootOf(ctx, inv);
  const w = writer(ctx, identity(ctx, inv).agentProfile, 'cli:policy');
  return grantResult(withWrite(root.abs, (db) => enablePolicy(db, w, str(inv, 'coordinator') ?? null)));
}

export async function rotate(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const root = rootOf(ctx, inv);
  const w = writer(ctx, identity(ctx, inv).agentProfile, 'cli:policy');
  return grantResult(withWrite(root.abs, (db) => rotatePolicy(db, w, str(inv, 'coordinator') ?? null)));
}

export async function disable(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const root = rootOf(ctx, inv);
  const w = writer(ctx, identity(ctx, inv).agentProfile, 'cli:policy');
  const s = withWrite(root.abs, (db) => disablePolicy(db, w));
  return { data: s, text: statusText(s) };
}

export async function status(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const s = withRead(rootOf(ctx, inv).abs, policyStatus);
  return { data: s, text: statusText(s) };
}

export async function audit(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const limit = uint(inv, 'limit', 20, 10_000);
  const events = withRead(rootOf(ctx, inv).abs, (db) => policyAudit(db, limit));
  const text = events.length === 0 ? 'No authorization decisions recorded.' : events.map((e) => `${e.id} ${e.created_at} ${e.action} ${e.decision} ${e.reason} actor=${e.actor_profile ?? '-'} origin=${e.origin} target=${e.target_memory_id ?? '-'}`).join('\n');
  return { data: events, text };
}
