// Wire shapes of the collector route (seed 000, "Operator-enrolled collector transfer"): the collector
// profile file, the transfer header and ExecutionRecord as the Hub decodes them, and the requests and
// answers of collector_claim, collector_descriptor, collector_finalize and the upload route.

import { z } from 'zod';
import { Hex64, Id } from './common.js';
import { AttemptWire, LEASE_MAX_MS, LEASE_MIN_MS } from './mutations.js';
import { SubjectSchema } from './ops.js';
import { IMAGE_ID_RE_SOURCE } from '../collector/limits.js';
import { REVIEW_MAX_CALL_INPUT_BYTES, REVIEW_MAX_CALLS, REVIEW_MAX_INPUT_BYTES, REVIEW_MAX_OUTPUT_BYTES, REVIEW_MAX_WALL_MS } from '../collector/review.js';

export const COLLECTOR_OPERATIONS = ['collector_claim', 'collector_descriptor', 'collector_finalize', 'reconcile_collector_finalization'] as const;

const Repository = z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}\/[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/);
const Epoch = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const Fence = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const ContainerPath = z
  .string()
  .max(1024)
  .regex(/^\/[\x21-\x7e]*$/, 'must be an absolute container path of printable ASCII')
  .refine((p) => !p.split('/').some((c) => c === '..' || c === '.'), 'must not contain . or .. components');

export const Recipe = z.strictObject({
  image_id: z.string().regex(new RegExp(IMAGE_ID_RE_SOURCE), 'must be a full image ID, sha256:<64 hex>'),
  argv: z
    .array(z.string().min(1).max(4096).refine((a) => !a.includes('\0'), 'must not contain NUL'))
    .min(1)
    .max(256),
  working_dir: ContainerPath,
  timeout_ms: z.number().int().min(1_000).max(6 * 3_600_000),
  // Two streams at this bound still fit the 16 MiB envelope once base64-encoded.
  max_output_bytes: z.number().int().min(0).max(6_000_000),
  network: z.literal('none'),
});

/** The command collector profile file an operator installs (docs/COLLECTOR.md). */
export const CommandProfileFile = z.strictObject({
  version: z.literal(1),
  kind: z.literal('command'),
  repository: Repository,
  profile: Id,
  step_id: Id,
  registration_id: Id,
  registration_epoch: Epoch,
  recipe: Recipe,
  runtime_identity_digest: Hex64,
});

/** What a finite-review profile pins of the reviewer (the basis itself is checked by reviewBasisProblem). */
export const ReviewerPins = z.strictObject({
  transport_basis: z.string().min(1).max(64),
  executable_sha256: Hex64,
  model: z.string().min(1).max(128).regex(/^[A-Za-z0-9._:@-]+$/, 'must be a model name of letters, digits and ._:@-'),
  provider_scope: z.strictObject({ provider: z.literal('anthropic'), base_url: z.string().min(1).max(512) }),
});

export const ReviewBudgetsSchema = z.strictObject({
  max_calls: z.number().int().min(1).max(REVIEW_MAX_CALLS),
  max_call_input_bytes: z.number().int().min(4096).max(REVIEW_MAX_CALL_INPUT_BYTES),
  max_input_bytes: z.number().int().min(4096).max(REVIEW_MAX_INPUT_BYTES),
  max_output_bytes: z.number().int().min(1024).max(REVIEW_MAX_OUTPUT_BYTES),
  wall_time_ms: z.number().int().min(1_000).max(REVIEW_MAX_WALL_MS),
});

/** The finite-review collector profile file (docs/COLLECTOR.md). */
export const ReviewProfileFile = z.strictObject({
  version: z.literal(1),
  kind: z.literal('review'),
  repository: Repository,
  profile: Id,
  step_id: Id,
  registration_id: Id,
  registration_epoch: Epoch,
  reviewer: ReviewerPins,
  policy_digest: Hex64,
  path_coverage: z.enum(['all', 'changed']),
  budgets: ReviewBudgetsSchema,
});

/** What `agent-task runtime-probe --json` prints: the input of `authority collector-profile template`. */
const ProbeText = z.string().max(256);
export const RuntimeProbeOutput = z.strictObject({
  docker_host: z.string().max(4096).optional(),
  runtime_identity: z.strictObject({
    version: z.number().int().min(1).max(1_000),
    engine: z.strictObject({ name: ProbeText, version: ProbeText, api_version: ProbeText, platform: z.string().max(256) }),
    os: ProbeText,
    arch: ProbeText,
    oci_runtime: z.strictObject({ name: ProbeText, version: z.string().max(256) }),
    image_id: Recipe.shape.image_id,
  }),
  runtime_identity_digest: Hex64,
});

export type CommandProfileFile = z.output<typeof CommandProfileFile>;

export const CollectorProfileFile = z.discriminatedUnion('kind', [CommandProfileFile, ReviewProfileFile]);
export type CollectorProfileFile = z.output<typeof CollectorProfileFile>;

const RecordEntry = z.strictObject({ type: z.enum(['execution_request', 'execution_record', 'review_request', 'review_record']), length: z.number().int().min(0).max(16 * 1024 * 1024), digest: Hex64 });

const CommandTransferHeader = z.strictObject({
  version: z.literal(1),
  audience: Id,
  repository: Repository,
  profile: Id,
  step_id: Id,
  task_id: Id,
  task_digest: Hex64,
  attempt_id: Id,
  attempt_digest: Hex64,
  execution_operation_id: Id,
  fence: Fence,
  origin: z.strictObject({ owner_id: Id, agent_id: Id, grant_generation: Id }),
  registration: z.strictObject({ registration_id: Id, executor_id: Id, registration_epoch: Epoch, verification_key_id: Hex64 }),
  collector_profile: z.strictObject({ install_id: Id, profile_digest: Hex64 }),
  execution_request_digest: Hex64,
  observed_runtime_identity_digest: Hex64,
  upload_request_id: Id,
  // A command transfer carries exactly the original request and its record, in that order.
  records: z.tuple([
    RecordEntry.extend({ type: z.literal('execution_request') }).strict(),
    RecordEntry.extend({ type: z.literal('execution_record') }).strict(),
  ]),
});

const ReviewTransferHeader = CommandTransferHeader.omit({ execution_request_digest: true, observed_runtime_identity_digest: true, records: true }).extend({
  review_request_digest: Hex64,
  observed_reviewer_identity_digest: Hex64,
  // upload_request_id comes before records in the header; the strict schema checks names, not order.
  records: z.tuple([RecordEntry.extend({ type: z.literal('review_request') }).strict(), RecordEntry.extend({ type: z.literal('review_record') }).strict()]),
}).strict();

export const TransferHeaderSchema = z.union([CommandTransferHeader, ReviewTransferHeader]);

const Captured = z.strictObject({
  sha256: Hex64,
  total_bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  truncated: z.boolean(),
  data_base64: z.string().max(8_000_000).regex(/^[A-Za-z0-9+/]*={0,2}$/),
});

const Timestamp = z.string().max(64).regex(/^\d{4}-\d{2}-\d{2}T[0-9:.]+(Z|[+-]\d{2}:\d{2})$/);

export const ExecutionRecordSchema = z.strictObject({
  version: z.literal(1),
  type: z.literal('execution_record'),
  execution_request_digest: Hex64,
  outcome: z.enum(['passed', 'failed']),
  exit_code: z.number().int().min(-1).max(255),
  timed_out: z.boolean(),
  oom_killed: z.boolean(),
  started_at: Timestamp,
  finished_at: Timestamp,
  stdout: Captured,
  stderr: Captured,
  observed_runtime_identity_digest: Hex64,
  isolation: z.strictObject({
    network: z.literal('none'),
    snapshot_read_only: z.boolean(),
    root_read_only: z.boolean(),
    capabilities_dropped: z.boolean(),
    no_new_privileges: z.boolean(),
  }),
  cleanup: z.strictObject({ container_removed: z.boolean() }),
  recovered: z.boolean(),
});

const Observation = z.strictObject({
  index: z.number().int().min(0).max(REVIEW_MAX_CALLS),
  ticket: Hex64,
  prompt_sha256: Hex64,
  exit_code: z.number().int().min(-1).max(255),
  timed_out: z.boolean(),
  stdout: Captured,
  started_at: Timestamp,
  finished_at: Timestamp,
});

/** The ReviewRecord as decoded on import; the authority then derives it again and compares the bytes. */
export const ReviewRecordSchema = z.strictObject({
  version: z.literal(1),
  type: z.literal('review_record'),
  review_request_digest: Hex64,
  reviewer: z.strictObject({
    transport_basis: z.string().max(64),
    model: z.string().max(128),
    provider_scope: z.strictObject({ provider: z.literal('anthropic'), base_url: z.string().max(512) }),
    executable_sha256_before: Hex64,
    executable_sha256_after: Hex64,
  }),
  observations: z.array(Observation).max(REVIEW_MAX_CALLS),
  coverage: z.unknown(),
  criteria: z.unknown(),
  budget_exhausted: z.boolean(),
  failure: z.string().max(64).nullable(),
  outcome: z.enum(['passed', 'failed']),
});

// ---- requests ---------------------------------------------------------------------------------------

export const CollectorClaimRequest = z.strictObject({
  operation: z.literal('collector_claim'),
  request_id: Id,
  subject: SubjectSchema,
  task_id: Id,
  task_digest: Hex64,
  execution_operation_id: Id,
  requested_lease_ms: z.number().int().min(LEASE_MIN_MS).max(LEASE_MAX_MS),
  executor_id: Id,
});

/** Side-effect free: the server-derived descriptor of an existing collector attempt. */
export const CollectorDescriptorRequest = z.strictObject({
  operation: z.literal('collector_descriptor'),
  task_id: Id,
  attempt_id: Id,
});

/** Creates (or, as reconciliation, re-creates) the v2 receipt of the subject from retained transfers. */
export const CollectorFinalizeRequest = z.strictObject({
  operation: z.literal('collector_finalize'),
  request_id: Id,
  subject: SubjectSchema,
});

/**
 * Retries receipt creation from the retained validated transfers under current authorization and the
 * current subject; never runs a collector. An existing live receipt of the subject is answered as is.
 */
export const ReconcileFinalizationRequest = z.strictObject({
  operation: z.literal('reconcile_collector_finalization'),
  request_id: Id,
  subject: SubjectSchema,
});

export const CollectorRequest = z.discriminatedUnion('operation', [CollectorClaimRequest, CollectorDescriptorRequest, CollectorFinalizeRequest, ReconcileFinalizationRequest]);
export type CollectorRequest = z.output<typeof CollectorRequest>;

// ---- answers ----------------------------------------------------------------------------------------

const Capability = z.literal('agentscm.agent-workflow-tasks/v1');
const Envelope = { capability: Capability, schema_version: z.literal(1) };

/** The claimed descriptor: everything collect needs, derived by the Hub from the installed profile. */
const CommandDescriptor = z.strictObject({
  version: z.literal(1),
  audience: Id,
  repository: Repository,
  profile: Id,
  step_id: Id,
  revision: Hex64,
  task_id: Id,
  task_digest: Hex64,
  attempt_id: Id,
  attempt_digest: Hex64,
  execution_operation_id: Id,
  fence: Fence,
  origin: z.strictObject({ owner_id: Id, agent_id: Id, grant_generation: Id }),
  registration: z.strictObject({ registration_id: Id, executor_id: Id, registration_epoch: Epoch, verification_key_id: Hex64 }),
  collector_profile: z.strictObject({ install_id: Id, profile_digest: Hex64 }),
  recipe: Recipe,
  runtime_identity_digest: Hex64,
  execution_request_digest: Hex64,
});

/** A review attempt's descriptor: the pinned reviewer, policy, coverage and budgets instead of a recipe. */
const ReviewDescriptor = CommandDescriptor.omit({ recipe: true, runtime_identity_digest: true, execution_request_digest: true }).extend({
  review: z.strictObject({ reviewer: ReviewerPins, policy_digest: Hex64, path_coverage: z.enum(['all', 'changed']), budgets: ReviewBudgetsSchema }),
}).strict();

export const Descriptor = z.union([CommandDescriptor, ReviewDescriptor]);
export type Descriptor = z.output<typeof CommandDescriptor>;
export type ReviewDescriptor = z.output<typeof ReviewDescriptor>;

export const CollectorClaimAnswer = z.strictObject({
  ...Envelope,
  operation: z.literal('collector_claim'),
  request_id: Id,
  request_digest: Hex64,
  replayed: z.boolean(),
  attempt: AttemptWire,
  supersession: z.null(),
  retained: z.null(),
  descriptor: Descriptor,
});

export const DescriptorAnswer = z.strictObject({ ...Envelope, operation: z.literal('collector_descriptor'), descriptor: Descriptor, attempt: AttemptWire });

/** The retained view of an imported transfer (also the answer of an exact retry). */
export const UploadAnswer = z.strictObject({
  ...Envelope,
  operation: z.literal('collector_upload'),
  upload_request_id: Id,
  transfer_digest: Hex64,
  bytes_sha256: Hex64,
  length: z.number().int().min(0),
  task_id: Id,
  attempt_id: Id,
  fence: Fence,
  outcome: z.enum(['passed', 'failed']),
  replayed: z.boolean(),
  currently_applicable: z.boolean(),
});

export const FinalizeAnswer = z.strictObject({
  ...Envelope,
  operation: z.literal('collector_finalize'),
  request_id: Id,
  request_digest: Hex64,
  replayed: z.boolean(),
  receipt_digest: Hex64,
  receipt_version: z.literal(2),
  transfers: z.array(Hex64).max(32),
});

export const ReconcileFinalizationAnswer = z.strictObject({
  ...Envelope,
  operation: z.literal('reconcile_collector_finalization'),
  request_id: Id,
  request_digest: Hex64,
  replayed: z.boolean(),
  /** created: no live receipt existed and one was made now; existing: the subject's live receipt. */
  finalization: z.enum(['created', 'existing']),
  receipt_digest: Hex64,
  receipt_version: z.literal(2),
  transfers: z.array(Hex64).max(32),
});
