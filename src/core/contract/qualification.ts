// The qualification answer's wire shape, and the pieces other answers share with it (TaskState, Next),
// in zod/mini: the Stop hook validates this answer on every agent stop, and zod/mini's tree-shakable
// functions leave the hook bundle only what these schemas use. ops.ts uses the same schemas.

import * as z from 'zod/mini';
import { HEX128, HEX64 } from '../crypto/digest.js';
import { ID_RE } from './paths.js';

export const MAX_TASKS = 64;
export const MAX_FAILURES = 32;

/** The contract's Id and Hex64 (common.ts) as zod/mini schemas: the same RegExps and messages. */
export const ID_MESSAGE = 'must match [A-Za-z0-9._:-]{1,128}';
export const HEX64_MESSAGE = 'must be 64 lowercase hex characters';
const Id = z.string().check(z.regex(ID_RE, ID_MESSAGE));
const Hex64 = z.string().check(z.regex(HEX64, HEX64_MESSAGE));

export const TaskState = z.enum(['pending', 'claimed', 'succeeded', 'failed', 'uncertain', 'blocked']);

export const Next = z.union([
  z.strictObject({ operation: z.enum(['collector_claim', 'reconcile']), task_id: Id }),
  z.strictObject({ operation: z.enum(['collector_finalize', 'checkpoint', 'none']) }),
]);

export const QualificationAnswer = z.strictObject({
  capability: z.literal('agentscm.agent-workflow-tasks/v1'),
  schema_version: z.literal(1),
  qualified: z.boolean(),
  subject_current: z.boolean(),
  receipt_digest: z.nullable(Hex64),
  revision: Hex64,
  tasks: z.array(z.strictObject({ task_id: Id, task_digest: Hex64, step_id: Id, required: z.boolean(), state: TaskState })).check(z.maxLength(MAX_TASKS)),
  failures: z.array(z.strictObject({ task_id: Id, code: z.string().check(z.regex(/^[A-Za-z0-9._-]{1,128}$/)) })).check(z.maxLength(MAX_FAILURES)),
  next: Next,
  /** Present when the Hub has a receipt key (answer-signature.ts). */
  hub_signature: z.optional(z.strictObject({ key_id: Hex64, sig: z.string().check(z.regex(HEX128, 'must be 128 lowercase hex characters')) })),
});

export type Qualification = z.output<typeof QualificationAnswer>;
export type TaskStateName = z.output<typeof TaskState>;
export type NextStep = z.output<typeof Next>;
