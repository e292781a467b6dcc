// Dispatch of the mutation operations (claim, heartbeat, cancel, reconcile, result) and the recovery
// read to the claim core. The actor always comes from the bearer token, never from the body.

import type { AuthorityStore } from '../core/storage/stores.js';
import type { TokenActor } from '../core/authority/types.js';
import type { JsonValue } from '../core/canonical/json.js';
import type { MutationRequest } from '../core/contract/mutations.js';
import { ASSERTION_MAX_BYTES } from '../core/contract/bounds.js';
import { HubError } from './errors.js';
import { assertionBody, claimAttempt, mutateAttempt, predecodeRetainedTask, recoveryEnvelope, requestDigest, requestedClaim, submitResult } from './claims.js';
import { resolve, resolveTask, type MutationContext, type Scope } from './subjects.js';

type BatchedMutation = Exclude<MutationRequest, { operation: 'recovery' }>;

/**
 * Prepares a mutation for its group-commit batch (batch.ts) and returns what runs in it. What depends on
 * the request alone is computed here, before the batch, while the Hub waits for the previous batch's
 * WAL sync: the request digest, a result's retained bytes, and for a claim the named subject's tasks
 * (derived and memoized by the authority) and the decoded form of the task row the claim writes. The
 * batch still resolves everything it decides on against its own snapshot, so this changes no answer:
 * a claim whose task cannot be found here is left for the batch to find or refuse. (The digest and the
 * retained bytes of a request that passed validation cannot fail; if they did, the request would be
 * answered with that error at once, as it would have been from the batch.)
 */
export function prepareMutation(ctx: MutationContext, scope: Scope, req: BatchedMutation, raw: JsonValue): () => JsonValue {
  const actor: TokenActor = scope.actor;
  const authority: AuthorityStore = ctx.authority;
  switch (req.operation) {
    case 'claim': {
      const digest = requestDigest('claim', actor, raw);
      try {
        predecodeRetainedTask(ctx.writable(), resolveTask(ctx, scope, req));
      } catch {
        // The batch finds the task again and answers whatever it meets.
      }
      return () => {
        const j = ctx.writable();
        // The task is derived from the named subject; an identical retry after the subject went stale
        // still returns its retained outcome (claimAttempt checks the request id before currency), so a
        // subject that no longer resolves only fails when the id is unused.
        const task = resolveTask(ctx, scope, req);
        return claimAttempt(j, authority, actor, task, { kind: 'agent', ...requestedClaim(req, digest) });
      };
    }
    case 'heartbeat':
    case 'cancel':
    case 'reconcile': {
      const digest = requestDigest(req.operation, actor, raw);
      return () =>
        mutateAttempt(ctx.writable(), authority, actor, scope, {
          kind: req.operation,
          request_id: req.request_id,
          request_digest: digest,
          task_id: req.task_id,
          task_digest: req.task_digest,
          attempt_id: req.attempt_id,
          attempt_digest: req.attempt_digest,
          execution_operation_id: req.execution_operation_id,
          executor_id: req.executor_id,
          fence: req.fence,
          ...(req.operation === 'heartbeat' ? { requested_lease_ms: req.requested_lease_ms } : {}),
          now: Date.now(),
        });
    }
    case 'result': {
      const digest = requestDigest('result', actor, raw);
      const body = assertionBody(req.assertion);
      // The one assertion bound (the CLI checks the same length before sending).
      if (body.length > ASSERTION_MAX_BYTES) throw new HubError(413, 'assertion_too_large', `an assertion is at most ${ASSERTION_MAX_BYTES} bytes`);
      return () => submitResult(ctx.writable(), authority, actor, scope, req.assertion, digest, body, Date.now());
    }
  }
}

/** Runs a mutation at once (inside a batch's transaction, or in its own), or answers recovery. */
export function handleMutation(ctx: MutationContext, scope: Scope, req: MutationRequest, raw: JsonValue): JsonValue {
  if (req.operation !== 'recovery') return prepareMutation(ctx, scope, req, raw)();
  let derived;
  if (req.subject !== null) {
    const { tasks } = resolve(ctx, scope, req.subject);
    derived = tasks.find((t) => t.task_id === req.task_id);
  }
  return recoveryEnvelope(ctx.journal(), ctx.authority, scope.actor, scope, {
    task_id: req.task_id,
    attempt_id: req.attempt_id,
    request_id: req.request_id,
    ...(derived ? { derived } : {}),
    now: Date.now(),
  });
}
