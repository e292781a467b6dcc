// TaskResultAssertion (seed 000, "Trust and criterion results" and "Observation signing bytes").

import { z } from 'zod';
import { canonicalJsonBytes, type JsonValue } from '../canonical/json.js';
import { DOMAINS, domainDigest } from '../crypto/digest.js';
import { decodeContract, Hex128, Hex64, Id, U64, validateContract } from './common.js';

import { ASSERTION_MAX_BYTES } from './bounds.js';

/** The assertion format's size bound (the collector transfer is a separate 16 MiB format). */
export { ASSERTION_MAX_BYTES };
export const MAX_CRITERIA = 64;
export const MAX_FINDINGS = 32;
export const MAX_FINDING_CHARS = 4096;
export const MAX_EVIDENCE_DIGESTS = 32;

export const CriterionOutcome = z.enum(['passed', 'failed', 'uncertain', 'not_claimed']);
export const AssertionOutcome = z.enum(['passed', 'failed', 'uncertain']);
export const TrustClass = z.enum(['agent_assertion', 'registered_executor_observation']);

const Finding = z
  .string()
  .max(MAX_FINDING_CHARS, `must be at most ${MAX_FINDING_CHARS} characters`)
  .refine((s) => !s.includes('\u0000'), 'must not contain NUL');

export const CriterionResult = z.strictObject({
  criterion: Id,
  outcome: CriterionOutcome,
  findings: z.array(Finding).max(MAX_FINDINGS),
  evidence_digests: z.array(Hex64).max(MAX_EVIDENCE_DIGESTS),
});

export const AgentIdentity = z.strictObject({ owner_id: Id, agent_id: Id });

export const ExecutorBinding = z.strictObject({
  registration_id: Id,
  executor_id: Id,
  registration_epoch: U64,
  verification_key_id: Id,
});

export const ExecutorProvenance = z.strictObject({ observation_digest: Hex64, signature: Hex128 });

export const TaskResultAssertion = z
  .strictObject({
    version: z.literal(1, 'unsupported version (expected 1)'),
    task_id: Id,
    task_digest: Hex64,
    attempt_id: Id,
    attempt_digest: Hex64,
    request_id: Id,
    execution_operation_id: Id,
    agent: AgentIdentity,
    executor: ExecutorBinding.nullable(),
    fence: U64,
    trust_class: TrustClass,
    outcome: AssertionOutcome,
    criteria: z.array(CriterionResult).min(1).max(MAX_CRITERIA),
    executor_provenance: ExecutorProvenance.nullable(),
  })
  .superRefine((a, ctx) => {
    const seen = new Set<string>();
    a.criteria.forEach((c, i) => {
      if (seen.has(c.criterion)) ctx.addIssue({ code: 'custom', path: ['criteria', i, 'criterion'], message: `duplicate criterion ${c.criterion}` });
      seen.add(c.criterion);
    });
    if (a.trust_class === 'registered_executor_observation' && a.executor === null) {
      ctx.addIssue({ code: 'custom', path: ['executor'], message: 'a registered executor observation names its executor' });
    }
    if (a.trust_class === 'agent_assertion' && (a.executor !== null || a.executor_provenance !== null)) {
      ctx.addIssue({ code: 'custom', path: ['executor'], message: 'an agent assertion has no executor or executor_provenance' });
    }
  });

export type TaskResultAssertion = z.output<typeof TaskResultAssertion>;

/** Strictly decodes and validates assertion bytes (size bound checked before parsing). */
export function decodeAssertion(bytes: Uint8Array | string, what = 'assertion'): TaskResultAssertion {
  return decodeContract(bytes, TaskResultAssertion, { maxBytes: ASSERTION_MAX_BYTES, what, code: 'INVALID_ASSERTION' });
}

export function validateAssertion(value: unknown, what = 'assertion'): TaskResultAssertion {
  return validateContract(value, TaskResultAssertion, what, 'INVALID_ASSERTION');
}

/** The assertion as a JSON value in declared struct-field order (wire form). */
export function assertionToJson(a: TaskResultAssertion): JsonValue {
  return {
    version: a.version,
    task_id: a.task_id,
    task_digest: a.task_digest,
    attempt_id: a.attempt_id,
    attempt_digest: a.attempt_digest,
    request_id: a.request_id,
    execution_operation_id: a.execution_operation_id,
    agent: { owner_id: a.agent.owner_id, agent_id: a.agent.agent_id },
    executor:
      a.executor === null
        ? null
        : {
            registration_id: a.executor.registration_id,
            executor_id: a.executor.executor_id,
            registration_epoch: a.executor.registration_epoch,
            verification_key_id: a.executor.verification_key_id,
          },
    fence: a.fence,
    trust_class: a.trust_class,
    outcome: a.outcome,
    criteria: a.criteria.map((c) => ({ criterion: c.criterion, outcome: c.outcome, findings: [...c.findings], evidence_digests: [...c.evidence_digests] })),
    executor_provenance: a.executor_provenance === null ? null : { observation_digest: a.executor_provenance.observation_digest, signature: a.executor_provenance.signature },
  };
}

/** The bytes the assertion bound applies to: the compact encoding the CLI sends (the Hub retains the same length, keys sorted). */
export function assertionWireBytes(a: TaskResultAssertion): Buffer {
  return canonicalJsonBytes(assertionToJson(a));
}

/** Seed 000: clone, set executor_provenance to null, serialize compactly in declared field order. */
export function observationSigningBytes(a: TaskResultAssertion): Buffer {
  return canonicalJsonBytes(assertionToJson({ ...a, executor_provenance: null }));
}

/** SHA-256 over "agentscm.agent-workflow-observation.v1" NUL u64be(len) bytes, as 64 lowercase hex. */
export function observationDigest(a: TaskResultAssertion): string {
  return domainDigest(DOMAINS.observation, observationSigningBytes(a));
}
