// Wire shapes of the task mutations (seed 000, "Identity and requests", "Recovery"): claim, heartbeat,
// cancel, reconcile, result, and the side-effect-free recovery read. Requests are decoded strictly by
// the Hub; answers strictly by the typed CLI.

import { z } from 'zod';
import { ExecutorBinding, TaskResultAssertion } from './assertion.js';
import { Hex64, Id } from './common.js';
import { SubjectSchema } from './ops.js';

import { LEASE_MAX_MS, LEASE_MIN_MS } from './bounds.js';

export { LEASE_MAX_MS, LEASE_MIN_MS };
/** How many retained task identities the prior-subject scan looks at, at most. */
export const PRIOR_SCAN_LIMIT = 4096;

export const MUTATION_OPERATIONS = ['cancel', 'claim', 'heartbeat', 'reconcile', 'recovery', 'result'] as const;
export type MutationKind = 'claim' | 'heartbeat' | 'cancel' | 'reconcile' | 'result' | 'collector_claim' | 'collector_finalize' | 'reconcile_collector_finalization';

const LeaseMs = z.number().int().min(LEASE_MIN_MS).max(LEASE_MAX_MS);
const Fence = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

/** TaskClaimRequest: a new execution identity and a requested bounded lease. */
export const ClaimRequest = z.strictObject({
  operation: z.literal('claim'),
  request_id: Id,
  subject: SubjectSchema,
  task_id: Id,
  task_digest: Hex64,
  execution_operation_id: Id,
  requested_lease_ms: LeaseMs,
  /** An enrolled executor the attempt binds (its current registration); null for agent-only work. */
  executor_id: Id.nullable(),
});

const MutationBinding = {
  request_id: Id,
  task_id: Id,
  task_digest: Hex64,
  attempt_id: Id,
  attempt_digest: Hex64,
  execution_operation_id: Id,
  executor_id: Id.nullable(),
  fence: Fence,
};

/** TaskMutationRequest: heartbeat, cancellation and authorized reconciliation. */
export const HeartbeatRequest = z.strictObject({ operation: z.literal('heartbeat'), ...MutationBinding, requested_lease_ms: LeaseMs });
export const CancelRequest = z.strictObject({ operation: z.literal('cancel'), ...MutationBinding, reason: z.string().max(1024) });
export const ReconcileRequest = z.strictObject({ operation: z.literal('reconcile'), ...MutationBinding, reason: z.string().max(1024) });
export const ResultRequest = z.strictObject({ operation: z.literal('result'), assertion: TaskResultAssertion });

/** Side-effect free: the recovery envelope of a request id, or the attempt view when request_id is null. */
export const RecoveryRequest = z.strictObject({
  operation: z.literal('recovery'),
  /** Lets the Hub derive a task it has not retained (never claimed); null for retained tasks. */
  subject: SubjectSchema.nullable(),
  task_id: Id,
  attempt_id: Id.nullable(),
  request_id: Id.nullable(),
});

export const MutationRequest = z.discriminatedUnion('operation', [ClaimRequest, HeartbeatRequest, CancelRequest, ReconcileRequest, ResultRequest, RecoveryRequest]);
export type MutationRequest = z.output<typeof MutationRequest>;
export type ClaimRequest = z.output<typeof ClaimRequest>;
export type HeartbeatRequest = z.output<typeof HeartbeatRequest>;
export type CancelRequest = z.output<typeof CancelRequest>;
export type ReconcileRequest = z.output<typeof ReconcileRequest>;
export type RecoveryRequest = z.output<typeof RecoveryRequest>;

// ---- answers ---------------------------------------------------------------------------------------

const Capability = z.literal('agentscm.agent-workflow-tasks/v1');
const Envelope = { capability: Capability, schema_version: z.literal(1) };
export const AttemptState = z.enum(['leased', 'finished', 'cancelled', 'replaced']);

/** WorkflowTaskAttempt as the Hub issued it, plus its journal state. */
export const AttemptWire = z.strictObject({
  task_id: Id,
  task_digest: Hex64,
  attempt_id: Id,
  attempt_digest: Hex64,
  claim_request_id: Id,
  execution_operation_id: Id,
  kind: z.enum(['agent', 'collector']),
  agent: z.strictObject({ owner_id: Id, agent_id: Id }),
  executor: ExecutorBinding.nullable(),
  fence: Fence,
  lease_ms: z.number().int().min(1).max(LEASE_MAX_MS),
  lease_expires_at: z.number().int().min(0),
  state: AttemptState,
  outcome: z.enum(['passed', 'failed', 'uncertain']).nullable(),
  superseded_by_fence: Fence.nullable(),
});

/** Every committed mutation answers this: the request identity, the retained flag and the attempt. */
export const MutationAnswer = z.strictObject({
  ...Envelope,
  operation: z.enum(['claim', 'heartbeat', 'cancel', 'reconcile', 'result']),
  request_id: Id,
  request_digest: Hex64,
  /** True when this answer is the retained outcome of an earlier identical request. */
  replayed: z.boolean(),
  attempt: AttemptWire,
  /** reconcile: the recorded supersession (old and strictly greater fence). */
  supersession: z.strictObject({ old_fence: Fence, new_fence: Fence }).nullable(),
  /** result: how the assertion was retained (always nonpassing material). */
  retained: z
    .strictObject({ trust_class: z.enum(['agent_assertion', 'registered_executor_observation']), asserted_outcome: z.enum(['passed', 'failed', 'uncertain']), observation_digest: Hex64.nullable(), passing: z.literal(false) })
    .nullable(),
});

export const Effect = z.enum([
  'claim_recorded',
  'lease_extended',
  'attempt_cancelled',
  'attempt_superseded',
  'assertion_retained',
  'transfer_retained',
  'receipt_created',
  // Unresolved effects (seed 000, "Recovery"): the execution may still run; a retained result's
  // acceptance (a receipt) is not known; the executor host may still hold the attempt's container and
  // materialized snapshot (custody of its resources is not confirmed released).
  'execution_may_still_run',
  'result_acceptance_unknown',
  'resource_custody_unknown',
]);
export const RecoveryAction = z.enum(['inspect', 'stop', 'reconcile', 'retry_identical', 'prepare_fresh_attempt', 'reconcile_collector_finalization']);
export const ObservedState = z.enum(['pending', 'leased', 'expired', 'finished', 'replaced', 'cancelled', 'unknown']);

/** TaskRecoveryEnvelope. No command, credential or path field. */
export const RecoveryAnswer = z.strictObject({
  ...Envelope,
  task_id: Id,
  task_digest: Hex64,
  request_id: Id.nullable(),
  request_kind: z.enum(['claim', 'heartbeat', 'cancel', 'reconcile', 'result', 'collector_claim', 'collector_finalize', 'reconcile_collector_finalization']).nullable(),
  attempt_id: Id.nullable(),
  attempt_digest: Hex64.nullable(),
  execution_operation_id: Id.nullable(),
  fence: Fence.nullable(),
  disposition: z.enum(['confirmed', 'conclusive_rejection', 'uncertain_effect']),
  confirmed_effects: z.array(Effect).max(8),
  unresolved_effects: z.array(Effect).max(8),
  supersession: z.strictObject({ old_fence: Fence, new_fence: Fence }).nullable(),
  observed_state: ObservedState,
  currently_applicable: z.boolean(),
  permitted_actions: z.array(RecoveryAction).min(1).max(6),
  attempt: AttemptWire.nullable(),
});

export const MUTATION_ANSWERS = {
  claim: MutationAnswer,
  heartbeat: MutationAnswer,
  cancel: MutationAnswer,
  reconcile: MutationAnswer,
  result: MutationAnswer,
  recovery: RecoveryAnswer,
} as const;
