// Wire shapes of the collector route (seed 000, "Operator-enrolled collector transfer"): the collector
// profile file, the transfer header and ExecutionRecord as the Hub decodes them, and the requests and
// answers of collector_claim, collector_descriptor, collector_finalize and the upload route.

import { z } from 'zod';
import { Hex64, Id } from './common.js';
import { AttemptWire, LEASE_MAX_MS, LEASE_MIN_MS } from './mutations.js';
import { SubjectSchema } from './ops.js';
import { IMAGE_ID_RE_SOURCE } from '../collector/limits.js';

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

/** The collector profile file an operator installs (docs/COLLECTOR.md). */
export const CollectorProfileFile = z.strictObject({
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
export type CollectorProfileFile = z.output<typeof CollectorProfileFile>;

const RecordEntry = z.strictObject({ type: z.enum(['execution_request', 'execution_record']), length: z.number().int().min(0).max(16 * 1024 * 1024), digest: Hex64 });

export const TransferHeaderSchema = z.strictObject({
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
export const Descriptor = z.strictObject({
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
export type Descriptor = z.output<typeof Descriptor>;

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
