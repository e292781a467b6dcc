// What every Hub operation shares: the stores it runs against (ReadContext, MutationContext), the scope
// a request's URL and bearer token give it (Scope), and the resolution of the subject and task a request
// names within that scope. Reads, mutations and the collector route all build on this module; it builds
// on none of them, so the Hub's modules import one another without a cycle.

import type { Task } from '../core/authority/plan.js';
import type { Subject, TokenActor } from '../core/authority/types.js';
import type { SnapshotStore } from '../core/native/snapshot.js';
import type { HubStorage, WritableHubStorage } from '../core/storage/stores.js';
import { HubError, notFoundError } from './errors.js';

/** What a read runs against: the stores (through their interface, see stores.ts), the snapshots, now. */
export interface ReadContext extends HubStorage {
  readonly snapshots: SnapshotStore;
  readonly now: number;
  /** Operations this Hub answers (later parts add the mutations); `capabilities` lists them sorted. */
  readonly operations: readonly string[];
}

/** What a mutation runs against: a read's context and the journal for writing, created on first use. */
export interface MutationContext extends ReadContext, WritableHubStorage {}

export interface Scope {
  readonly repository: string;
  readonly profile: string;
  readonly actor: TokenActor;
}

/** Resolves the subject a request names, within the URL's repository and profile. */
export function resolve(ctx: ReadContext, scope: Scope, claimed: Subject): { subject: Subject; current: boolean; tasks: Task[] } {
  if (claimed.repository !== scope.repository || claimed.profile !== scope.profile) {
    throw new HubError(400, 'subject_scope_mismatch', 'the subject names another repository or profile than the request path');
  }
  const r = ctx.authority.resolveSubject(claimed);
  if (!r) throw notFoundError('subject_not_found', 'no such subject: Change version, policy epoch or bound digests do not match the authority');
  return { ...r, tasks: ctx.authority.tasksFor(r.subject) };
}

/** The task of `tasks` a request names by id, with the digest it was given for it. */
export function findTask(tasks: readonly Task[], taskId: string, taskDigest: string): Task {
  const t = tasks.find((x) => x.task_id === taskId);
  if (!t) throw notFoundError('task_not_found', 'no such task for this subject');
  if (t.task_digest !== taskDigest) throw new HubError(409, 'task_digest_mismatch', 'the task digest does not match the stored task');
  return t;
}

/** The task a request names, of the subject it names (resolve, then findTask). */
export function resolveTask(ctx: ReadContext, scope: Scope, req: { subject: Subject; task_id: string; task_digest: string }): Task {
  return findTask(resolve(ctx, scope, req.subject).tasks, req.task_id, req.task_digest);
}
