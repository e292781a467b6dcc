// The Stop hook's check of a qualification answer: the wire schema (qualification.ts), then the hook's
// own rules (seed 000, "Stop hook"): task, step and next ids match [A-Za-z0-9._-]{1,128} (no ":"),
// a qualified answer names a current subject and a receipt, an unqualified one no receipt.

import { HOOK_ID_RE } from './paths.js';
import { QualificationAnswer, type Qualification } from './qualification.js';

export type { NextStep, Qualification, TaskStateName } from './qualification.js';

/** Returns the answer typed, or a short reason why it is malformed. */
export function checkQualification(v: unknown): { ok: true; value: Qualification } | { ok: false; reason: string } {
  const bad = (reason: string) => ({ ok: false as const, reason });
  // jitless: zod would otherwise compile a fast path for each object schema with new Function on
  // first use, code that no code cache keeps, in a process (the Stop hook) that checks one answer.
  const r = QualificationAnswer.safeParse(v, { jitless: true });
  if (!r.success) {
    const issue = r.error.issues[0]!;
    return bad(`${issue.path.length ? issue.path.join('.') : '(document)'}: ${issue.message}`);
  }
  const q = r.data;
  for (const t of q.tasks) if (!HOOK_ID_RE.test(t.task_id) || !HOOK_ID_RE.test(t.step_id)) return bad('task id');
  for (const f of q.failures) if (!HOOK_ID_RE.test(f.task_id)) return bad('failure');
  if ('task_id' in q.next && !HOOK_ID_RE.test(q.next.task_id)) return bad('next');
  if (q.qualified && (!q.subject_current || q.receipt_digest === null)) return bad('qualified without a current subject and receipt');
  if (!q.qualified && q.receipt_digest !== null) return bad('receipt_digest without qualification');
  return { ok: true, value: q };
}
