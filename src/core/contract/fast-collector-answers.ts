// Hand-written acceptance of the Hub answers `agent-task collect` checks on its way to the container
// (collector_descriptor, status) and after it (the upload answer), so that a collection that goes as
// it should never loads zod: building the schemas and their first parse cost collect about 40 ms of
// CPU while the engine answers /version on the same cores. The rule is fast-mutations.ts's: this only
// ever *accepts*, and only documents the zod schemas (collector.ts, ops.ts) accept too; the answers are
// used as the Hub sent them, so no output value is involved. Anything it is not sure of goes to the
// schemas, which decide and word the error. test/unit/fast-collector-answers.test.ts checks the
// agreement over thousands of variations.
//
// No zod here, and nothing that builds zod schemas when it loads.

import { LEASE_MAX_MS } from './bounds.js';
import { hasExactly, isCount, isHex64, isId, isIntIn, isObj, type Obj } from './fast-checks.js';

const CAPABILITY = 'agentscm.agent-workflow-tasks/v1';
/** The collector contract's Repository (collector.ts), not the reference paths' stricter rule. */
const REPOSITORY = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}\/[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/;
const IMAGE_ID = /^sha256:[0-9a-f]{64}$/;
const CONTAINER_PATH = /^\/[\x21-\x7e]*$/;

const isOneOf = (v: unknown, options: readonly string[]): boolean => typeof v === 'string' && options.includes(v);

function envelope(o: Obj): boolean {
  return o.capability === CAPABILITY && o.schema_version === 1;
}

const RECIPE_KEYS = ['image_id', 'argv', 'working_dir', 'timeout_ms', 'max_output_bytes', 'network'];

function recipe(v: unknown): boolean {
  if (!isObj(v) || !hasExactly(v, RECIPE_KEYS)) return false;
  const { image_id, argv, working_dir } = v;
  if (typeof image_id !== 'string' || !IMAGE_ID.test(image_id)) return false;
  if (!Array.isArray(argv) || argv.length < 1 || argv.length > 256) return false;
  for (const a of argv) if (typeof a !== 'string' || a.length < 1 || a.length > 4096 || a.includes('\0')) return false;
  if (typeof working_dir !== 'string' || working_dir.length > 1024 || !CONTAINER_PATH.test(working_dir)) return false;
  if (working_dir.split('/').some((c) => c === '..' || c === '.')) return false;
  return isIntIn(v.timeout_ms, 1_000, 6 * 3_600_000) && isIntIn(v.max_output_bytes, 0, 6_000_000) && v.network === 'none';
}

const DESCRIPTOR_KEYS = [
  'version', 'audience', 'repository', 'profile', 'step_id', 'revision', 'task_id', 'task_digest', 'attempt_id', 'attempt_digest', 'execution_operation_id',
  'fence', 'origin', 'registration', 'collector_profile', 'recipe', 'runtime_identity_digest', 'execution_request_digest',
];

/** The Descriptor schema (collector.ts). */
export function fastDescriptor(v: unknown): boolean {
  if (!isObj(v) || !hasExactly(v, DESCRIPTOR_KEYS) || v.version !== 1) return false;
  if (typeof v.repository !== 'string' || !REPOSITORY.test(v.repository)) return false;
  for (const k of ['audience', 'profile', 'step_id', 'task_id', 'attempt_id', 'execution_operation_id']) if (!isId(v[k])) return false;
  for (const k of ['revision', 'task_digest', 'attempt_digest', 'runtime_identity_digest', 'execution_request_digest']) if (!isHex64(v[k])) return false;
  if (!isCount(v.fence)) return false;
  const { origin, registration, collector_profile } = v;
  if (!isObj(origin) || !hasExactly(origin, ['owner_id', 'agent_id', 'grant_generation']) || !isId(origin.owner_id) || !isId(origin.agent_id) || !isId(origin.grant_generation)) return false;
  if (!isObj(registration) || !hasExactly(registration, ['registration_id', 'executor_id', 'registration_epoch', 'verification_key_id'])) return false;
  if (!isId(registration.registration_id) || !isId(registration.executor_id) || !isCount(registration.registration_epoch) || !isHex64(registration.verification_key_id)) return false;
  if (!isObj(collector_profile) || !hasExactly(collector_profile, ['install_id', 'profile_digest']) || !isId(collector_profile.install_id) || !isHex64(collector_profile.profile_digest)) return false;
  return recipe(v.recipe);
}

const ATTEMPT_KEYS = [
  'task_id', 'task_digest', 'attempt_id', 'attempt_digest', 'claim_request_id', 'execution_operation_id', 'kind', 'agent', 'executor', 'fence', 'lease_ms',
  'lease_expires_at', 'state', 'outcome', 'superseded_by_fence',
];
const ATTEMPT_STATES = ['leased', 'finished', 'cancelled', 'replaced'];
const OUTCOMES = ['passed', 'failed', 'uncertain'];

/** AttemptWire (mutations.ts); a u64 registration epoch only as a safe integer (a bigint goes to zod). */
function attemptWire(v: unknown): boolean {
  if (!isObj(v) || !hasExactly(v, ATTEMPT_KEYS)) return false;
  for (const k of ['task_id', 'attempt_id', 'claim_request_id', 'execution_operation_id']) if (!isId(v[k])) return false;
  if (!isHex64(v.task_digest) || !isHex64(v.attempt_digest) || !isOneOf(v.kind, ['agent', 'collector'])) return false;
  const { agent, executor } = v;
  if (!isObj(agent) || !hasExactly(agent, ['owner_id', 'agent_id']) || !isId(agent.owner_id) || !isId(agent.agent_id)) return false;
  if (executor !== null) {
    if (!isObj(executor) || !hasExactly(executor, ['registration_id', 'executor_id', 'registration_epoch', 'verification_key_id'])) return false;
    if (!isId(executor.registration_id) || !isId(executor.executor_id) || !isIntIn(executor.registration_epoch, 0, Number.MAX_SAFE_INTEGER) || !isId(executor.verification_key_id)) return false;
  }
  if (!isCount(v.fence) || !isIntIn(v.lease_ms, 1, LEASE_MAX_MS) || !isIntIn(v.lease_expires_at, 0, Number.MAX_SAFE_INTEGER)) return false;
  if (!isOneOf(v.state, ATTEMPT_STATES) || (v.outcome !== null && !isOneOf(v.outcome, OUTCOMES))) return false;
  return v.superseded_by_fence === null || isCount(v.superseded_by_fence);
}

/** DescriptorAnswer (collector.ts). */
export function fastDescriptorAnswer(v: unknown): boolean {
  return isObj(v) && hasExactly(v, ['capability', 'schema_version', 'operation', 'descriptor', 'attempt']) && envelope(v) && v.operation === 'collector_descriptor' && fastDescriptor(v.descriptor) && attemptWire(v.attempt);
}

const STATUS_KEYS = ['capability', 'schema_version', 'subject_current', 'task_id', 'task_digest', 'step_id', 'state', 'attempt'];
const TASK_STATES = ['pending', 'claimed', 'succeeded', 'failed', 'uncertain', 'blocked'];

/** The status answer (ops.ts StatusAnswer). */
export function fastStatusAnswer(v: unknown): boolean {
  if (!isObj(v) || !hasExactly(v, STATUS_KEYS) || !envelope(v) || typeof v.subject_current !== 'boolean') return false;
  if (!isId(v.task_id) || !isHex64(v.task_digest) || !isId(v.step_id) || !isOneOf(v.state, TASK_STATES)) return false;
  const a = v.attempt;
  if (a === null) return true;
  if (!isObj(a) || !hasExactly(a, ['attempt_id', 'attempt_digest', 'fence', 'state', 'outcome', 'currently_applicable'])) return false;
  if (!isId(a.attempt_id) || !isHex64(a.attempt_digest) || !isIntIn(a.fence, 0, Number.MAX_SAFE_INTEGER) || !isOneOf(a.state, ATTEMPT_STATES)) return false;
  return (a.outcome === null || isOneOf(a.outcome, OUTCOMES)) && typeof a.currently_applicable === 'boolean';
}

const UPLOAD_KEYS = [
  'capability', 'schema_version', 'operation', 'upload_request_id', 'transfer_digest', 'bytes_sha256', 'length', 'task_id', 'attempt_id', 'fence', 'outcome', 'replayed',
  'currently_applicable',
];

/** The upload answer, the retained view of an imported transfer (collector.ts UploadAnswer). */
export function fastUploadAnswer(v: unknown): boolean {
  if (!isObj(v) || !hasExactly(v, UPLOAD_KEYS) || !envelope(v) || v.operation !== 'collector_upload') return false;
  if (!isId(v.upload_request_id) || !isHex64(v.transfer_digest) || !isHex64(v.bytes_sha256) || !isIntIn(v.length, 0, Number.MAX_SAFE_INTEGER)) return false;
  if (!isId(v.task_id) || !isId(v.attempt_id) || !isCount(v.fence) || !isOneOf(v.outcome, ['passed', 'failed'])) return false;
  return typeof v.replayed === 'boolean' && typeof v.currently_applicable === 'boolean';
}
