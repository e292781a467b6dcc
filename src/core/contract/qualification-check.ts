// Strict validation of a qualification answer without zod: the Stop hook path must not load it.
// Mirrors QualificationAnswer in ops.ts plus the hook's rules (seed 000, "Stop hook"): ids and codes
// match [A-Za-z0-9._-]{1,128}, at most 32 failures, 64-hex digests, typed next.

import { HEX64_LOWER as HEX64 } from '../ascii-pattern.js';
import { HOOK_ID } from './paths.js';

export type TaskStateName = 'pending' | 'claimed' | 'succeeded' | 'failed' | 'uncertain' | 'blocked';
export type NextStep =
  | { readonly operation: 'collector_claim' | 'reconcile'; readonly task_id: string }
  | { readonly operation: 'collector_finalize' | 'checkpoint' | 'none' };

export interface Qualification {
  readonly capability: 'agentscm.agent-workflow-tasks/v1';
  readonly schema_version: 1;
  readonly qualified: boolean;
  readonly subject_current: boolean;
  readonly receipt_digest: string | null;
  readonly revision: string;
  readonly tasks: readonly { task_id: string; task_digest: string; step_id: string; required: boolean; state: TaskStateName }[];
  readonly failures: readonly { task_id: string; code: string }[];
  readonly next: NextStep;
}

const STATES = new Set(['pending', 'claimed', 'succeeded', 'failed', 'uncertain', 'blocked']);

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function exactKeys(v: Record<string, unknown>, keys: readonly string[]): boolean {
  const k = Object.keys(v);
  return k.length === keys.length && keys.every((x) => Object.hasOwn(v, x));
}

/** Returns the answer typed, or a short reason why it is malformed. */
export function checkQualification(v: unknown): { ok: true; value: Qualification } | { ok: false; reason: string } {
  const bad = (reason: string) => ({ ok: false as const, reason });
  if (!isObj(v)) return bad('not an object');
  if (!exactKeys(v, ['capability', 'schema_version', 'qualified', 'subject_current', 'receipt_digest', 'revision', 'tasks', 'failures', 'next'])) return bad('unexpected fields');
  if (v.capability !== 'agentscm.agent-workflow-tasks/v1' || v.schema_version !== 1) return bad('capability');
  if (typeof v.qualified !== 'boolean' || typeof v.subject_current !== 'boolean') return bad('flags');
  if (!(v.receipt_digest === null || (typeof v.receipt_digest === 'string' && HEX64.test(v.receipt_digest)))) return bad('receipt_digest');
  if (typeof v.revision !== 'string' || !HEX64.test(v.revision)) return bad('revision');
  if (!Array.isArray(v.tasks) || v.tasks.length > 64) return bad('tasks');
  for (const t of v.tasks) {
    if (!isObj(t) || !exactKeys(t, ['task_id', 'task_digest', 'step_id', 'required', 'state'])) return bad('task');
    if (typeof t.task_id !== 'string' || !HOOK_ID.test(t.task_id) || typeof t.step_id !== 'string' || !HOOK_ID.test(t.step_id)) return bad('task id');
    if (typeof t.task_digest !== 'string' || !HEX64.test(t.task_digest) || typeof t.required !== 'boolean' || typeof t.state !== 'string' || !STATES.has(t.state)) return bad('task');
  }
  if (!Array.isArray(v.failures) || v.failures.length > 32) return bad('failures');
  for (const f of v.failures) {
    if (!isObj(f) || !exactKeys(f, ['task_id', 'code']) || typeof f.task_id !== 'string' || !HOOK_ID.test(f.task_id) || typeof f.code !== 'string' || !HOOK_ID.test(f.code)) return bad('failure');
  }
  const n = v.next;
  if (!isObj(n) || typeof n.operation !== 'string') return bad('next');
  if (n.operation === 'collector_claim' || n.operation === 'reconcile') {
    if (!exactKeys(n, ['operation', 'task_id']) || typeof n.task_id !== 'string' || !HOOK_ID.test(n.task_id)) return bad('next');
  } else if (n.operation === 'collector_finalize' || n.operation === 'checkpoint' || n.operation === 'none') {
    if (!exactKeys(n, ['operation'])) return bad('next');
  } else return bad('next');
  if (v.qualified && (!v.subject_current || v.receipt_digest === null)) return bad('qualified without a current subject and receipt');
  if (!v.qualified && v.receipt_digest !== null) return bad('receipt_digest without qualification');
  return { ok: true, value: v as unknown as Qualification };
}
