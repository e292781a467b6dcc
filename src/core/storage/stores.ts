// The storage interface of the authority and the journal: every read and write the Hub's handlers and
// the authority's commands make, as typed methods, with no SQL and no driver type in sight. The SQLite
// stores implement it (src/core/authority/store.ts: Authority, src/hub/journal.ts: Journal); another
// backend implements the same two interfaces.
//
// What the interface keeps from SQLite on purpose, because the Hub's guarantees rest on it:
// - Calls are synchronous. A mutation's checks and writes run inside one transaction within one
//   event-loop turn (JournalStore.immediate); in the Hub every mutation of a group-commit batch runs in
//   its own savepoint of the batch's transaction, and no answer leaves before the batch is durable
//   (src/hub/batch.ts, which is the SQLite backend's commit discipline and drives the connection itself).
// - Row shapes are the stored rows: digests are computed over stored canonical bytes, so a backend
//   returns them byte for byte.

import type { Plan, Task } from '../authority/plan.js';
import type { ChangeVersion, Enrollment, Profile, Requirement, Subject, TokenActor, TokenScope } from '../authority/types.js';

// ---- authority -------------------------------------------------------------------------------------

export interface LoadedRequirement {
  readonly requirement: Requirement;
  readonly plan: Plan;
  readonly plan_digest: string;
}

export interface AddProfileInput {
  readonly repository: string;
  readonly profile: string;
  readonly target: string;
  readonly requirement: Requirement;
  readonly canonical: Buffer;
  readonly requirement_digest: string;
  readonly publish_forge_status?: boolean;
}

/** One installation of a collector profile for a registration (canonical bytes as installed). */
export interface CollectorProfileRow {
  readonly install_id: string;
  readonly registration_id: string;
  readonly seq: number;
  readonly profile_digest: string;
  readonly canonical: Buffer;
  readonly created_at: number;
}

/**
 * The authority: profiles and their requirements, bearer tokens, executor enrollments, collector
 * profile installations and Change versions, and the subjects and tasks derived from them.
 */
export interface AuthorityStore {
  close(): void;
  /** Serve unchanged lookups from memory until the store changes (revalidate checks). */
  enableMemo(): void;
  /** Drops what the memo holds if the store changed since it was filled. */
  revalidate(): void;
  /**
   * Changes whenever the memo is dropped; undefined while the memo may not be used (outside the
   * synchronous stretch that revalidated, or without enableMemo).
   */
  memoGeneration(): number | undefined;
  /** Whether the store answers at all (the Hub's health route). */
  ping(): boolean;
  authorityId(): string;

  addProfile(input: AddProfileInput): Profile & { plan_digest: string; changed: boolean };
  getProfile(repository: string, profile: string): Profile | undefined;
  requireProfile(repository: string, profile: string): Profile;
  loadRequirement(digest: string): LoadedRequirement;

  issueToken(ownerId: string, agentId: string, repository?: string | null, scope?: TokenScope): { token_id: string; token: string };
  deleteToken(tokenId: string): void;
  revokeToken(tokenId: string): { token_id: string; revoked: boolean };
  /** The actor a bearer token stands for, or undefined (unknown, revoked). */
  authenticate(token: string): TokenActor | undefined;
  tokenActive(tokenId: string): boolean;

  enroll(input: { repository: string; profile: string; step_id: string; executor_id: string; public_key: string; verification_key_id: string }): Enrollment;
  revokeEnrollment(registrationId: string): { registration_id: string; revoked: boolean };
  getEnrollment(registrationId: string): Enrollment | undefined;
  currentRegistration(repository: string, profile: string, stepId: string, executorId: string): Enrollment | undefined;
  currentRegistrationByKey(repository: string, profile: string, stepId: string, verificationKeyId: string): Enrollment | undefined;

  installCollectorProfile(input: {
    registration_id: string;
    registration_epoch: number;
    repository: string;
    profile: string;
    step_id: string;
    canonical: Buffer;
    profile_digest: string;
  }): CollectorProfileRow & { changed: boolean };
  /** The registration's newest installation. */
  currentCollectorProfile(registrationId: string): CollectorProfileRow | undefined;
  /** One installation of the registration, current or not (what an attempt was claimed under). */
  collectorProfileInstall(installId: string, registrationId: string): CollectorProfileRow | undefined;

  recordChangeVersion(repository: string, changeId: string, revision: string, target?: string, commit?: { head: string | null; tree_matches: boolean }): ChangeVersion;
  currentChangeVersion(repository: string, changeId: string): ChangeVersion | undefined;
  getChangeVersion(repository: string, changeId: string, version: number): ChangeVersion | undefined;
  currentSubject(repository: string, profile: string, changeId: string): Subject;
  /** The stored subject a caller names (all bound digests equal) and whether it is still current. */
  resolveSubject(claimed: Subject): { subject: Subject; current: boolean } | undefined;
  tasksFor(subject: Subject): Task[];
}

// ---- journal ---------------------------------------------------------------------------------------

export interface AttemptRow {
  readonly attempt_id: string;
  readonly task_id: string;
  readonly attempt_digest: string;
  readonly owner_id: string;
  readonly agent_id: string;
  readonly registration_id: string | null;
  readonly registration_epoch: number | null;
  readonly kind: 'agent' | 'collector';
  readonly executor_id: string | null;
  readonly claim_request_id: string;
  readonly execution_operation_id: string;
  readonly fence: number;
  readonly lease_ms: number;
  readonly lease_expires_at: number;
  readonly superseded_by_fence: number | null;
  readonly canonical: Buffer;
  readonly state: 'leased' | 'finished' | 'cancelled' | 'replaced';
  readonly outcome: 'passed' | 'failed' | 'uncertain' | null;
  readonly outcome_code: string | null;
  readonly created_at: number;
  readonly updated_at: number;
}

/** The columns of an attempt a mutation changes after the claim. */
export type AttemptChange = Partial<Pick<AttemptRow, 'lease_expires_at' | 'state' | 'outcome' | 'outcome_code' | 'superseded_by_fence'>> & { readonly updated_at: number };

/** A task as retained at its first claim: the canonical binding bytes its digest is over. */
export interface TaskRow {
  readonly task_id: string;
  readonly task_digest: string;
  readonly canonical: Buffer;
}

/** A committed mutation's request id, bound to its exact bytes, with the answer retained for replay. */
export interface RequestRow {
  readonly kind: string;
  readonly request_digest: string;
  readonly task_id: string;
  readonly attempt_id: string | null;
  readonly response: Buffer;
}

/** A request to retain: the row plus the actor it is scoped to. */
export interface NewRequest extends RequestRow {
  readonly owner_id: string;
  readonly agent_id: string;
  readonly request_id: string;
  readonly created_at: number;
}

/** A retained assertion or registered observation (always nonpassing material). */
export interface AssertionRow {
  readonly request_id: string;
  readonly owner_id: string;
  readonly agent_id: string;
  readonly task_id: string;
  readonly attempt_id: string;
  readonly fence: number;
  readonly registration_id: string | null;
  readonly trust_class: string;
  readonly outcome: string;
  readonly observation_digest: string | null;
  readonly body: Buffer;
  readonly created_at: number;
}

/** What a collector_claim bound besides its attempt: the profile installation and the originating grant. */
export interface CollectorAttemptRow {
  readonly attempt_id: string;
  readonly install_id: string;
  readonly profile_digest: string;
  readonly grant_generation: string;
}

/**
 * An imported collector transfer: the columns stored before its original signed bytes. A column after
 * them (the retained view) could only be read by walking the bytes' overflow pages, so the reads that
 * need digests and bindings (qualification, finalization, recovery) never select it.
 */
export interface TransferRow {
  readonly transfer_digest: string;
  readonly bytes_digest: string;
  readonly upload_request_id: string;
  readonly task_id: string;
  readonly attempt_id: string;
  readonly fence: number;
  readonly registration_id: string;
  readonly collector_profile_install_id: string;
  readonly collector_profile_digest: string;
  readonly grant_generation: string;
  readonly outcome: 'passed' | 'failed';
  readonly length: number;
}

/** A transfer with its retained upload view (the answer of an exact upload retry). */
export interface TransferWithView extends TransferRow {
  readonly view: Buffer;
}

/** A transfer to retain: the row plus its uploader and original bytes. */
export interface NewTransfer extends TransferWithView {
  readonly owner_id: string;
  readonly agent_id: string;
  readonly bytes: Buffer;
  readonly created_at: number;
}

/** What decides whether retained transfer evidence still counts (receipts.ts transferLive). */
export type TransferBinding = Pick<TransferRow, 'registration_id' | 'collector_profile_install_id' | 'grant_generation'>;

/**
 * The journal: retained tasks, attempts, idempotent requests, assertions, collector transfers and
 * receipts. Reads of a journal that does not exist yet are the caller's to avoid (a Hub answers "no
 * journal" without one); every write happens inside `immediate`.
 */
export interface JournalStore {
  /**
   * Runs f in one write transaction (BEGIN IMMEDIATE), or inside the transaction already open (a
   * group-commit batch's savepoint). What f wrote is kept only if f returns.
   */
  immediate<T>(f: () => T): T;
  /** Stored canonical bytes decoded once per handle (a hit needs identical bytes under the same key). */
  decodeOnce<T>(key: string, bytes: Buffer, decode: (bytes: Buffer) => T): T;
  /**
   * A value derived from journal rows, answered from memory while nothing changed the journal since it
   * was computed (another connection's commit or this one's write); never inside an open transaction.
   */
  remembered<V>(key: string, get: () => V): V;
  /**
   * Changes whenever what remembered() answers may have changed (it then forgets everything); undefined
   * inside an open transaction, where nothing is remembered.
   */
  readsGeneration(): number | undefined;
  close(): void;

  taskRow(taskId: string): TaskRow | undefined;
  /** Retains a task at its first claim; a task already retained is left as it is. */
  retainTask(task: Task, now: number): void;
  /**
   * The newest of the last `scanLimit` retained tasks of the same repository, Change, profile and step
   * (other than `exceptTaskId`) whose current attempt is unresolved (leased or cancelled).
   */
  priorUnresolvedTask(s: Subject, stepId: string, exceptTaskId: string, scanLimit: number): string | undefined;

  /** The current (highest-fence) attempt of a task, if any. */
  latestAttempt(taskId: string): AttemptRow | undefined;
  attempt(attemptId: string): AttemptRow | undefined;
  insertAttempt(row: AttemptRow): void;
  /** Changes an attempt row; returns how many rows changed (1, or 0 when there is no such attempt). */
  updateAttempt(attemptId: string, change: AttemptChange): number;

  requestRow(ownerId: string, agentId: string, requestId: string): RequestRow | undefined;
  insertRequest(row: NewRequest): void;
  insertAssertion(row: AssertionRow): void;

  collectorAttempt(attemptId: string): CollectorAttemptRow | undefined;
  insertCollectorAttempt(row: CollectorAttemptRow, now: number): void;
  transferByUpload(ownerId: string, agentId: string, uploadRequestId: string): TransferWithView | undefined;
  transferOfAttempt(attemptId: string): TransferRow | undefined;
  /** Just the binding of an attempt's transfer (reads need no more than this). */
  transferBindingOfAttempt(attemptId: string): TransferBinding | undefined;
  transfer(transferDigest: string): TransferRow | undefined;
  /** The stored length of a transfer's retained bytes, without reading them. */
  transferStoredLength(transferDigest: string): number | undefined;
  /** A transfer's original signed bytes (check transferStoredLength against the 16 MiB bound first). */
  transferBytes(transferDigest: string): Buffer | undefined;
  insertTransfer(row: NewTransfer): void;

  /** The newest receipt for exactly this subject, if one was finalized. */
  receiptFor(s: Subject): string | undefined;
  receiptBody(receiptDigest: string): Buffer | undefined;
  /** When the receipt was finalized (ms since the epoch). */
  receiptCreatedAt(receiptDigest: string): number | undefined;
  /** Retains a receipt for the subject; the same receipt digest again is left as it is. */
  insertReceipt(receiptDigest: string, s: Subject, body: Buffer, now: number): void;
}

/** The stores a Hub request runs against. */
export interface HubStorage {
  readonly authority: AuthorityStore;
  /** The journal if it exists; never creates it. */
  journal(): JournalStore | undefined;
}

/** The stores a Hub mutation runs against: the journal for writing is created on first use. */
export interface WritableHubStorage extends HubStorage {
  writable(): JournalStore;
}
