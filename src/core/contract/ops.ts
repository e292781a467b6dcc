// Wire shapes of the workspace HTTP operations (POST .../agent-tasks, body {"operation": ..., ...}).
// Requests are decoded strictly by the Hub; every answer is decoded strictly by the typed CLI.

import { z } from 'zod';
import { ACTION_CLASSES } from '../authority/types.js';
import { Hex64, Id } from './common.js';
import { isRepository } from './paths.js';
import { MAX_TASKS, Next, QualificationAnswer, TaskState } from './qualification.js';

export { MAX_FAILURES, MAX_TASKS, Next, QualificationAnswer, TaskState } from './qualification.js';

export const OPERATION_MAX_BYTES = 64 * 1024;
export { ANSWER_MAX_BYTES, RESULT_REQUEST_MAX_BYTES } from './bounds.js';
export const REFERENCE_MAX_BYTES = 128 * 1024;
export const SCHEMA_MISMATCH_ACTION = 'reinstall_agentscm_matching_hub';

/** Operations this Hub answers; `capabilities` lists them sorted. Later parts add the mutations. */
export const READ_OPERATIONS = ['capabilities', 'instructions', 'next', 'qualification', 'reference', 'requirements', 'status'] as const;

const Count = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const Repository = z.string().max(165).refine(isRepository, 'must be OWNER/NAME');
const SchemaVersion = z.number().int().min(1).max(65535);

export const SubjectSchema = z.strictObject({
  repository: Repository,
  profile: Id,
  target: Id,
  change_id: Id,
  change_version: Count,
  revision: Hex64,
  context_digest: Hex64,
  policy_epoch: Count,
  requirement_digest: Hex64,
  plan_digest: Hex64,
});

// ---- requests --------------------------------------------------------------------------------------

export const CapabilitiesRequest = z.strictObject({ operation: z.literal('capabilities') });
export const RequirementsRequest = z.strictObject({ operation: z.literal('requirements'), subject: SubjectSchema });
export const NextRequest = z.strictObject({ operation: z.literal('next'), subject: SubjectSchema });
/** nonce: a fresh 64-hex value the caller sends so that a signed answer is bound to this request. */
export const QualificationRequest = z.strictObject({ operation: z.literal('qualification'), subject: SubjectSchema, nonce: Hex64.optional() });
export const InstructionsRequest = z.strictObject({
  operation: z.literal('instructions'),
  subject: SubjectSchema,
  task_id: Id,
  task_digest: Hex64,
  supported_schema_versions: z.array(SchemaVersion).min(1).max(16),
});
export const ReferenceRequest = z.strictObject({
  operation: z.literal('reference'),
  subject: SubjectSchema,
  task_id: Id,
  task_digest: Hex64,
  name: Id,
  expected_sha256: Hex64,
  expected_schema_version: SchemaVersion,
});
export const StatusRequest = z.strictObject({
  operation: z.literal('status'),
  subject: SubjectSchema,
  task_id: Id,
  task_digest: Hex64,
  attempt_id: Id.nullable(),
});

export const ReadRequest = z.discriminatedUnion('operation', [
  CapabilitiesRequest,
  RequirementsRequest,
  NextRequest,
  QualificationRequest,
  InstructionsRequest,
  ReferenceRequest,
  StatusRequest,
]);
export type ReadRequest = z.output<typeof ReadRequest>;

// ---- answers ---------------------------------------------------------------------------------------

const Capability = z.literal('agentscm.agent-workflow-tasks/v1');
const Envelope = { capability: Capability, schema_version: z.literal(1) };

export const CriterionWire = z.strictObject({ id: Id, text: z.string().max(4096), required: z.boolean(), controller_only: z.boolean() });
export const WireTask = z.strictObject({
  task_id: Id,
  task_digest: Hex64,
  step_id: Id,
  skill: Id,
  action_class: z.enum(ACTION_CLASSES as [string, ...string[]]),
  required: z.boolean(),
  depends_on: z.array(Id).max(MAX_TASKS),
  criteria: z.array(CriterionWire).min(1).max(64),
  entrypoint: z.strictObject({ capability: Capability, schema_version: z.literal(1), summary: z.string().max(4096), reference_names: z.array(Id).max(32) }),
  state: TaskState,
});

export const CapabilitiesAnswer = z.strictObject({
  capability: Capability,
  supported_schema_versions: z.array(SchemaVersion).min(1).max(16),
  operations: z.array(z.string().regex(/^[a-z_]{1,64}$/)).min(1).max(64),
});

export const RequirementsAnswer = z.strictObject({
  ...Envelope,
  subject_current: z.boolean(),
  workflow: Id,
  requirement_digest: Hex64,
  plan_digest: Hex64,
  tasks: z.array(WireTask).max(MAX_TASKS),
});

export const NextAnswer = z.strictObject({ ...Envelope, subject_current: z.boolean(), task: WireTask.nullable(), next: Next });

export const SchemaMismatchAnswer = z.strictObject({
  status: z.literal('schema_mismatch'),
  capability: Capability,
  required_schema_version: SchemaVersion,
  supported_schema_versions: z.array(SchemaVersion).max(16),
  // Both bounded; an older Hub's answer may omit them and is still a schema mismatch (seed 000).
  server_schema_versions: z.array(SchemaVersion).min(1).max(16).optional(),
  action: z.literal(SCHEMA_MISMATCH_ACTION).optional(),
});

export const ReferenceWire = z.strictObject({ name: Id, path: z.string().max(1024), sha256: Hex64 });

export const InstructionsAnswer = z.union([
  z.strictObject({
    ...Envelope,
    status: z.literal('entrypoint'),
    entrypoint: z.strictObject({
      capability: Capability,
      schema_version: z.literal(1),
      task_id: Id,
      task_digest: Hex64,
      step_id: Id,
      workflow: Id,
      workflow_digest: Hex64,
      policy_digest: Hex64,
      policy_epoch: Count,
      summary: z.string().max(4096),
      criteria: z.array(CriterionWire).min(1).max(64),
      references: z.array(ReferenceWire).max(32),
      progression: z.strictObject({ operation: z.enum(['claim', 'collector_claim', 'none']) }),
    }),
  }),
  SchemaMismatchAnswer,
]);

export const ReferenceAnswer = z.union([
  z.strictObject({ ...Envelope, status: z.literal('available'), name: Id, sha256: Hex64, size: z.number().int().min(0).max(REFERENCE_MAX_BYTES), content: z.string() }),
  z.strictObject({ ...Envelope, status: z.literal('limit'), name: Id, size: z.number().int().min(0), max_bytes: z.literal(REFERENCE_MAX_BYTES) }),
  z.strictObject({ ...Envelope, status: z.enum(['missing', 'denied', 'uncertain']), name: Id, reason: z.string().regex(/^[a-z_]{1,64}$/) }),
  SchemaMismatchAnswer,
]);

export const StatusAnswer = z.strictObject({
  ...Envelope,
  subject_current: z.boolean(),
  task_id: Id,
  task_digest: Hex64,
  step_id: Id,
  state: TaskState,
  attempt: z
    .strictObject({
      attempt_id: Id,
      attempt_digest: Hex64,
      fence: z.number().int().min(0),
      state: z.enum(['leased', 'finished', 'cancelled', 'replaced']),
      outcome: z.enum(['passed', 'failed', 'uncertain']).nullable(),
      currently_applicable: z.boolean(),
    })
    .nullable(),
});

/** The fixed error document of every non-2xx answer. */
export const ErrorAnswer = z.strictObject({ error: z.strictObject({ code: z.string().regex(/^[a-z_]{1,64}$/), message: z.string().max(512) }) });

export const ANSWERS = {
  capabilities: CapabilitiesAnswer,
  requirements: RequirementsAnswer,
  next: NextAnswer,
  qualification: QualificationAnswer,
  instructions: InstructionsAnswer,
  reference: ReferenceAnswer,
  status: StatusAnswer,
} as const;
