// The agent-owned Stop check (seed 000, "Stop hook (agent-owned mode)"): may the agent stop working on
// this Change now? Only when the Hub says the Change's current subject is qualified and the local
// workspace holds exactly the qualified bytes. Everything else blocks with typed feedback.
//
// Strictly read-only: the authority and the workspace state are opened read-only (better-sqlite3
// `readonly` and `fileMustExist`: no migration, no journal-mode change; SQLite may make its -wal/-shm
// sidecars), nothing missing is created, the workspace files are only read (those whose stat the last
// checkpoint's stat cache does not vouch for) and hashed. The hook never claims, collects, uploads, finalizes, reconciles or checkpoints: `next` is
// data for the agent, never a command the hook runs.
//
// No zod, ink, react, dockerode or execa on this path (it runs on every stop).

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { subjectToJson } from '../authority/plan.js';
import { readCurrentSubjectUnchecked, type UncheckedSubject } from '../authority/read-only.js';
import type { Subject } from '../authority/types.js';
import { canonicalJson, type JsonValue } from '../canonical/json.js';
import { pinnedHubKey, verifyPinnedAnswer, type PinnedHubKey } from '../contract/answer-signature.js';
import { DOMAINS, domainDigest, HEX64 } from '../crypto/digest.js';
import type { NextStep, Qualification } from '../contract/qualification-check.js';
import { isAgentscmError } from '../errors.js';
import { lstatOrUndefined } from '../fs/safe.js';
import { readCaFile, readTokenFile } from '../hub-client/answer.js';
import { HubClient } from '../hub-client/client.js';
import { decodeStatCache, firstCachedChange, readWorkspaceLater, type CachedStats, type StatCache, type WorkspaceScan } from '../native/snapshot.js';
import { readWorkspaceStateWithCache, WORKSPACES_FILE, type StoredStatCache, type WorkspaceState } from '../native/workspace-state.js';

export const QUALIFICATION_TIMEOUT_MS = 30_000;

/** The only error texts a Stop hook reports: fixed categories, never paths or server text. */
export const ERROR_CATEGORIES = {
  local_store: 'local store unavailable',
  workspace: 'workspace unavailable',
  token: 'token unavailable',
  service: 'service request failed',
  token_rejected: 'token rejected',
  malformed: 'malformed response',
  signature: 'answer not signed by the pinned Hub key',
  hub_key: 'pinned Hub key malformed',
} as const;
export type ErrorCategory = keyof typeof ERROR_CATEGORIES;

/** The fixed sentence for each next.operation (and for a check that could not run). */
export const NEXT_ACTIONS: Record<NextStep['operation'] | 'error', string> = {
  collector_claim:
    'Claim the task named in next for the enrolled collector (agentscm agent-task collector-claim), run it on the claimed attempt (agentscm agent-task collect), then check qualification and try to finish again.',
  reconcile: 'Reconcile the unresolved attempt of the task named in next (agentscm agent-task reconcile or MCP), then try to finish again.',
  collector_finalize: 'Finalize the collected evidence (agentscm agent-task collector-finalize or MCP), then try to finish again.',
  checkpoint:
    'Checkpoint the workspace (agentscm checkpoint) so that the Change has a subject with exactly these bytes, complete its tasks, then try to finish again.',
  none: 'No task can progress for this subject; fix the work the failures name, checkpoint a new subject, then try to finish again.',
  error: 'The stop check could not run for the reason in error; fix that, then try to finish again.',
};

export interface TaskStopInput {
  readonly dataDir: string;
  readonly change: string;
  readonly endpoint: string;
  /** For an https endpoint: the CA certificates to trust instead of the system's. */
  readonly caFile?: string | undefined;
  readonly repository: string;
  readonly profile: string;
  readonly tokenFile: string;
  readonly workspace: string;
  /**
   * The pinned Hub receipt public key (64 hex, install-stop --hub-key): the request then carries a fresh
   * nonce, and only an answer signed by this key for this subject and nonce counts.
   */
  readonly hubKey?: string | undefined;
  readonly timeoutMs?: number;
}

/** Local findings that block regardless of the Hub's answer; each means the bytes are not the subject's. */
export type LocalCode =
  | 'workspace_dirty'
  | 'workspace_not_ready'
  | 'pending_operation'
  | 'state_status_disagree'
  | 'base_not_subject_revision'
  | 'workspace_other_change'
  | 'changed_during_run'
  | 'subject_changed'
  | 'change_not_checkpointed';

export type StopVerdict =
  | { readonly allow: true }
  | {
      readonly allow: false;
      readonly error?: ErrorCategory;
      readonly local: readonly LocalCode[];
      readonly failures: readonly { task_id: string; code: string }[];
      readonly next: NextStep | null;
      readonly qualified?: boolean;
      readonly subject_current?: boolean;
    };

class Category extends Error {
  constructor(
    readonly category: ErrorCategory,
    cause?: unknown,
  ) {
    super(ERROR_CATEGORIES[category], cause === undefined ? undefined : { cause });
  }
}

function guard<T>(category: ErrorCategory, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof Category) throw e;
    throw new Category(category, e);
  }
}

interface WorkspaceRead {
  readonly state: WorkspaceState;
  /** The revision the live files had when they were read (computed by the read); undefined: the files were not read, or not all of them (ChangedRead). */
  readonly live: (() => string) | undefined;
  readonly scan: WorkspaceScan | undefined;
}

/** A read that scanned the files. */
interface FullRead extends WorkspaceRead {
  live(): string;
  readonly scan: WorkspaceScan;
  readonly changed: false;
}

/** A first read that stopped at a file changed since the checkpoint (firstCachedChange): the hook blocks whatever else changed. */
interface ChangedRead extends WorkspaceRead {
  readonly live: undefined;
  readonly scan: undefined;
  readonly changed: true;
}

/** The first read: it scans the files unless it finds one of the checkpoint's changed first. */
type FirstRead = FullRead | ChangedRead;

/** Whether a first read found the files as checkpointed. */
const readClean = (r: FirstRead): boolean => !r.changed && r.live() === r.state.base_revision;

// The stat cache as decoded by the first read: the second read finds the same bytes and reuses it.
let decoded: { stored: StoredStatCache; cache: StatCache } | undefined;

function statCacheOf(stored: StoredStatCache | undefined): StatCache | undefined {
  if (stored === undefined) return undefined;
  const d = decoded;
  if (d && d.stored.revision === stored.revision && d.stored.scanned_at_ms === stored.scanned_at_ms && d.stored.entries.equals(stored.entries)) return d.cache;
  try {
    const cache = decodeStatCache(stored.revision, stored.scanned_at_ms, stored.entries);
    decoded = { stored, cache };
    return cache;
  } catch (e) {
    // A stat cache that does not decode is a store failure, as a state row of the wrong type is.
    if (isAgentscmError(e)) throw new Category('local_store');
    throw e;
  }
}

/**
 * One read of the workspace: its recorded state, then (`scanFiles`) a complete read-only scan of its files
 * (by the stat cache: only files whose stat changed since the checkpoint are read and hashed).
 */
function readWorkspace(dataDir: string, workspace: string): FirstRead;
function readWorkspace(dataDir: string, workspace: string, previous: FirstRead, scanFiles: boolean): WorkspaceRead;
function readWorkspace(dataDir: string, workspace: string, previous?: FirstRead, scanFiles = true): FirstRead | WorkspaceRead {
  return guard('workspace', () => {
    // stat, not lstat: a workspace reached through a symlink is still that workspace (its key is the real path).
    const st = fs.statSync(workspace, { throwIfNoEntry: false });
    if (!st || !st.isDirectory()) throw new Category('workspace');
    // The state file is the store's lock on this workspace: missing means never checkpointed here,
    // and it is not created (readWorkspaceState opens it existing-only and read-only).
    if (!lstatOrUndefined(path.join(dataDir, WORKSPACES_FILE))?.isFile()) throw new Category('workspace');
    const real = fs.realpathSync(workspace);
    let read: ReturnType<typeof readWorkspaceStateWithCache>;
    try {
      read = readWorkspaceStateWithCache(dataDir, real);
    } catch (e) {
      // A state file that exists but cannot be read as one consistent snapshot is a store failure.
      if (isAgentscmError(e) && (e.code === 'STORE_UNREADABLE' || e.code === 'STORE_CORRUPT')) throw new Category('local_store');
      throw e;
    }
    if (!read) throw new Category('workspace');
    if (!scanFiles) return { state: read.state, scan: undefined, live: undefined };
    const cache = statCacheOf(read.cache);
    // The first read looks at the checkpoint's own files first and stops at one that changed: a
    // changed file blocks whatever else the tree holds. Where it finds none, the scan takes the stats
    // it took. (Only by a cached listing: a tree walked without one would be lstat'ed twice.)
    let seen: CachedStats | undefined;
    if (previous === undefined && cache?.listing !== undefined) {
      const look = firstCachedChange(real, cache);
      if (look.changed !== undefined) return { state: read.state, scan: undefined, live: undefined, changed: true };
      seen = look.seen;
    }
    // The second read takes the first one's revision when it found the same entries (no manifest to hash again).
    const files = readWorkspaceLater(real, cache, previous?.scan, [dataDir], dataDir, seen);
    return { state: read.state, scan: files.scanned(), live: () => guard('workspace', () => files.scanned().revision), changed: false };
  });
}

/** Whether hex (64 hex digits) is a canonical Ed25519 public key that is not of small order. */
async function isPublicKey(hex: string): Promise<boolean> {
  const { parsePublicKeyHex } = await import('../crypto/ed25519.js');
  try {
    parsePublicKeyHex(hex);
    return true;
  } catch {
    return false;
  }
}

/** The pinned key (64 hex) ready to check the answer, with its key id. */
function pinnedKey(hex: string): PinnedHubKey {
  const key = Buffer.from(hex, 'hex');
  return pinnedHubKey(key, domainDigest(DOMAINS.verificationKey, key));
}

function sameState(a: WorkspaceState, b: WorkspaceState): boolean {
  return (
    a.status === b.status &&
    a.base_revision === b.base_revision &&
    a.generation === b.generation &&
    a.pending_operation === b.pending_operation &&
    a.last_scan_revision === b.last_scan_revision &&
    a.change_id === b.change_id &&
    a.repository === b.repository
  );
}

function errorVerdict(category: ErrorCategory): StopVerdict {
  return { allow: false, error: category, local: [], failures: [], next: null };
}

/** Maps a Hub client failure to its category; the message (which may hold server text) is dropped. */
function hubCategory(e: unknown): ErrorCategory {
  if (isAgentscmError(e)) {
    if (e.kind === 'AUTH_REJECTED') return 'token_rejected';
    if (e.kind === 'HUB_MALFORMED') return 'malformed';
  }
  return 'service';
}

/** Runs the whole check. Never throws: every failure becomes a blocking verdict with a category. */
export async function evaluateTaskStop(input: TaskStopInput): Promise<StopVerdict> {
  try {
    return await evaluate(input);
  } catch (e) {
    if (e instanceof Category) return errorVerdict(e.category);
    return errorVerdict('local_store');
  }
}

async function evaluate(input: TaskStopInput): Promise<StopVerdict> {
  const workspace = path.resolve(input.workspace);
  const token = guard('token', () => readTokenFile(input.tokenFile));
  // install-stop writes only a valid key; one edited by hand into something else is no key to check with.
  if (input.hubKey !== undefined && !HEX64.test(input.hubKey)) return errorVerdict('hub_key');

  // Existing-only: a missing data dir or authority blocks and is not created (the reader creates nothing).
  const readSubject = (): UncheckedSubject =>
    guard('local_store', () => {
      if (!lstatOrUndefined(input.dataDir)?.isDirectory()) throw new Category('local_store');
      return readCurrentSubjectUnchecked(input.dataDir, input.repository, input.profile, input.change);
    });
  let first: UncheckedSubject;
  try {
    first = readSubject();
  } catch (e) {
    // A Change the authority has no checkpoint of yet: nothing to ask the Hub about, and the way forward
    // is the agent's first checkpoint.
    if (e instanceof Category && isAgentscmError(e.cause) && e.cause.code === 'CHANGE_NOT_FOUND') {
      return { allow: false, local: ['change_not_checkpointed'], failures: [], next: { operation: 'checkpoint' } };
    }
    throw e;
  }
  const subject = first.subject;
  // One request, sent only after the first workspace read, as the seed orders them; the time limit
  // bounds the whole request.
  const limitMs = input.timeoutMs ?? QUALIFICATION_TIMEOUT_MS;
  const hub = guard('service', () => new HubClient({
    endpoint: input.endpoint,
    ...(input.caFile !== undefined ? { ca: readCaFile(input.caFile) } : {}),
    repository: input.repository,
    profile: input.profile,
    token,
    timeoutMs: limitMs,
    deadlineMs: limitMs,
    maxAnswerBytes: 256 * 1024,
    // One call, then the process ends: its connection is closed by the exit, not on the answer's path.
    keepConnection: true,
  }));
  let before: FirstRead;
  try {
    before = readWorkspace(input.dataDir, workspace);
  } catch (e) {
    hub.close();
    throw e;
  }

  const subjectJson = subjectToJson(subject);
  const pinned = input.hubKey;
  const nonce = pinned === undefined ? undefined : randomBytes(32).toString('hex');
  // The connection is made, and the request written, only once this run yields to the event loop: it
  // waits for that (or for the request's failure) before the work below, which then overlaps the Hub's.
  let written!: () => void;
  const sent = new Promise<void>((resolve) => (written = resolve));
  const pending = hub.call({ operation: 'qualification', subject: subjectJson, ...(nonce !== undefined ? { nonce } : {}) }, () => written());
  // A failure is read below, unless the local check ends the run first.
  const settled = pending.then(
    () => {},
    () => {},
  );
  await Promise.race([sent, settled]);
  // The answer's checker (zod/mini schemas, built when their module loads) and the pinned key are
  // made while the Hub works too.
  const checking = import('../contract/qualification-check.js');
  checking.catch(() => {});
  // The installed requirement's integrity check (its bytes, its plan, the stored plan digest the request
  // carries) needs nothing from the answer: it runs while the Hub works, and a failure still blocks
  // as the local store's, whatever the Hub answers. (The workspace's changed files were read and
  // hashed by the first read, before the request: live() only gives that read's revision.)
  try {
    guard('local_store', () => first.check());
  } catch (e) {
    hub.close();
    throw e;
  }
  const key: PinnedHubKey | undefined = pinned !== undefined ? pinnedKey(pinned) : undefined;
  const { checkQualification } = await checking;
  let answer: JsonValue;
  try {
    answer = await pending;
  } catch (e) {
    return errorVerdict(hubCategory(e));
  }
  if (pinned !== undefined) {
    // Whoever holds the endpoint's port cannot answer for the Hub: no signature, another key's, or one
    // made for another request (subject or nonce) blocks.
    // A pinned key that is no Ed25519 public key (64 hex digits edited by hand into a non-point) can
    // check no answer: it is reported as malformed, not as the Hub's failure. The point is checked only
    // here, on the failure path, so that a good stop does not pay for it.
    if (!verifyPinnedAnswer(answer, subjectJson, nonce!, key!)) return errorVerdict((await isPublicKey(pinned)) ? 'signature' : 'hub_key');
  }
  const checked = checkQualification(answer);
  if (!checked.ok) return errorVerdict('malformed');
  const q: Qualification = checked.value;
  if (q.revision !== subject.revision) return errorVerdict('malformed');

  // Both reads take the recorded state; the second scans the files again only when the first found
  // them as checkpointed: files already edited block as workspace_dirty whatever a second scan finds,
  // and on a large workspace the scan is most of the hook's time.
  const after = readWorkspace(input.dataDir, workspace, before, readClean(before));
  const againRead = readSubject();
  guard('local_store', () => againRead.check());
  const subjectAfter = againRead.subject;
  return decide(input, subject, subjectAfter, before, after, q);
}

function decide(input: TaskStopInput, subject: Subject, subjectAfter: Subject, before: FirstRead, after: WorkspaceRead, q: Qualification): StopVerdict {
  const local: LocalCode[] = [];
  if (canonicalJson(subjectToJson(subject)) !== canonicalJson(subjectToJson(subjectAfter))) local.push('subject_changed');
  const afterLive = after.live?.();
  if (!sameState(before.state, after.state) || (afterLive !== undefined && before.live?.() !== afterLive)) local.push('changed_during_run');
  const s = after.state;
  if (s.status !== 'ready') local.push('workspace_not_ready');
  if (s.pending_operation !== null) local.push('pending_operation');
  // The recorded state and the status of its last scan must describe the same base.
  if (s.base_revision === null || s.last_scan_revision !== s.base_revision) local.push('state_status_disagree');
  if (s.change_id !== input.change || s.repository !== input.repository) local.push('workspace_other_change');
  if ((afterLive !== undefined && afterLive !== s.base_revision) || !readClean(before)) local.push('workspace_dirty');
  if (s.base_revision !== q.revision) local.push('base_not_subject_revision');

  const failures = q.failures.map((f) => ({ task_id: f.task_id, code: f.code }));
  if (local.length > 0) {
    // The Hub's answer describes a subject these bytes are not: the way forward is a new checkpoint.
    return { allow: false, local, failures, next: { operation: 'checkpoint' }, qualified: q.qualified, subject_current: q.subject_current };
  }
  if (q.qualified && q.subject_current && q.receipt_digest !== null) return { allow: true };
  return { allow: false, local, failures, next: q.next, qualified: q.qualified, subject_current: q.subject_current };
}

/**
 * The block reason: one compact JSON document the agent reads. It holds the typed failures, the fixed
 * next_action sentence for next.operation and next itself; never paths, tokens or server text.
 */
export function blockReason(change: string, v: Exclude<StopVerdict, { allow: true }>): string {
  const op = v.next === null ? 'error' : v.next.operation;
  const doc: Record<string, JsonValue> = {
    stop_check: 'agentscm.agent-workflow-tasks/v1',
    change_id: change,
    verdict: v.error !== undefined ? 'check_failed' : 'not_ready_to_stop',
  };
  if (v.error !== undefined) doc.error = ERROR_CATEGORIES[v.error];
  if (v.qualified !== undefined) doc.qualified = v.qualified;
  if (v.subject_current !== undefined) doc.subject_current = v.subject_current;
  if (v.local.length > 0) doc.local = [...v.local];
  doc.failures = v.failures.map((f) => ({ task_id: f.task_id, code: f.code }));
  doc.next_action = NEXT_ACTIONS[op];
  doc.next = v.next === null ? null : ({ ...v.next } as JsonValue);
  return 'Do not stop yet: this Change is not qualified for landing. ' + canonicalJson(doc);
}

