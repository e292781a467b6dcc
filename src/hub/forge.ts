// Forge commit statuses. For every profile with publish_forge_status, the Hub follows each Change that
// has retained tasks: the status of its current subject (pending while its required tasks run or wait,
// success with the receipt digest once qualified, failure when a required task failed or is blocked)
// is queued in the journal's outbox whenever it differs from the last one queued for that Change (a
// new checkpoint, a new policy epoch, a task that started, failed or passed, a receipt). The status is
// for the git commit the subject's checkpoint recorded, and only when the snapshot equals that
// commit's tree. Queued rows are delivered one at a time in queue order (so in order per commit) to
// GitHub (POST /repos/{owner}/{repo}/statuses/{sha}, through @octokit/rest) or GitLab
// (POST /projects/:id/statuses/:sha, plain fetch): a 5xx or a network error is retried with
// exponential backoff up to a bound, any other non-2xx is reported once and not retried. The outbox is
// durable, so a Hub that stops with rows queued delivers them after it starts again (at least once).

import { Octokit } from '@octokit/rest';
import { taskViews } from './reads.js';
import { liveReceipt } from './receipts.js';
import type { Authority } from '../core/authority/store.js';
import type { GroupCommit } from './batch.js';
import type { Journal, OutboxRow } from './journal.js';
import type { MutationContext } from './subjects.js';

/** What the publisher needs of the Hub's shared state (server.ts ForgeHost). */
export interface ForgeHost {
  readonly authority: Authority;
  readonly commits: GroupCommit;
  journal(): Journal | undefined;
  writableJournal(): Journal;
  mutationContext(operations: readonly string[]): MutationContext;
}

export type ForgeKind = 'github' | 'gitlab';

export interface ForgeOptions {
  readonly kind: ForgeKind;
  /** API base URL, e.g. https://api.github.com or https://gitlab.example/api/v4. */
  readonly api: string;
  readonly token: string;
  /** How often the Hub compares each followed Change's status with the last one queued. */
  readonly pollMs: number;
  /** First retry delay; each further retry doubles it (at most 60 s). */
  readonly retryMs: number;
  /** Deliveries of one status before it is abandoned. */
  readonly maxAttempts: number;
}

export const FORGE_DEFAULTS = { pollMs: 1000, retryMs: 1000, maxAttempts: 8 } as const;

type Sent = { ok: true } | { ok: false; retry: boolean; error: string };

interface Publisher {
  send(row: OutboxRow, context: string): Promise<Sent>;
}

const DESCRIPTION_MAX = 140;

function classify(status: number | undefined, what: string): Sent {
  if (status !== undefined && status >= 200 && status < 300) return { ok: true };
  if (status === undefined || status >= 500 || status === 429) return { ok: false, retry: true, error: status === undefined ? `${what}: no answer` : `${what}: HTTP ${status}` };
  return { ok: false, retry: false, error: `${what}: HTTP ${status}` };
}

function github(o: ForgeOptions): Publisher {
  // No retry or throttling plugin: the outbox does the retrying, durably.
  const octokit = new Octokit({ auth: o.token, baseUrl: o.api.replace(/\/+$/, ''), request: { retries: 0 }, userAgent: 'agentscm-hub' });
  return {
    async send(row, context) {
      const [owner, repo] = row.repository.split('/') as [string, string];
      try {
        const r = await octokit.rest.repos.createCommitStatus({ owner, repo, sha: row.sha, state: row.state, context, description: row.description.slice(0, DESCRIPTION_MAX) });
        return classify(r.status, 'github');
      } catch (e) {
        return classify(typeof (e as { status?: unknown }).status === 'number' ? (e as { status: number }).status : undefined, 'github');
      }
    },
  };
}

function gitlab(o: ForgeOptions): Publisher {
  const base = o.api.replace(/\/+$/, '');
  return {
    async send(row, context) {
      const url = `${base}/projects/${encodeURIComponent(row.repository)}/statuses/${row.sha}`;
      const body = { state: row.state === 'failure' ? 'failed' : row.state, name: context, description: row.description.slice(0, DESCRIPTION_MAX) };
      try {
        const r = await fetch(url, {
          method: 'POST',
          headers: { 'PRIVATE-TOKEN': o.token, 'content-type': 'application/json', 'user-agent': 'agentscm-hub' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
        await r.arrayBuffer().catch(() => undefined);
        return classify(r.status, 'gitlab');
      } catch {
        return classify(undefined, 'gitlab');
      }
    },
  };
}

/** The status a Change's current subject should show, or undefined when there is nothing to publish. */
function desired(state: ForgeHost, repository: string, profile: string, changeId: string): Omit<OutboxRow, 'seq' | 'delivery' | 'attempts' | 'last_error' | 'updated_at' | 'next_at' | 'created_at'> | undefined {
  const p = state.authority.getProfile(repository, profile);
  if (!p || !p.publish_forge_status) return undefined;
  let subject;
  try {
    subject = state.authority.currentSubject(repository, profile, changeId);
  } catch {
    return undefined;
  }
  const commit = state.authority.changeCommit(repository, changeId, subject.change_version);
  if (!commit || !commit.tree_matches) return undefined;
  const ctx = state.mutationContext([]);
  const views = taskViews(ctx, state.authority.tasksFor(subject)).filter((v) => v.task.step.required);
  const receipt = liveReceipt(ctx.journal(), state.authority, subject).digest;
  const base = { repository, profile, change_id: changeId, change_version: subject.change_version, policy_epoch: subject.policy_epoch, sha: commit.git_head };
  if (views.every((v) => v.state === 'succeeded') && receipt !== undefined) return { ...base, state: 'success', description: `qualified: receipt ${receipt}`, receipt_digest: receipt };
  const failed = views.find((v) => v.state === 'failed' || v.state === 'blocked');
  if (failed) return { ...base, state: 'failure', description: `step ${failed.task.step.id}: ${failed.code ?? 'failed'}`, receipt_digest: null };
  return { ...base, state: 'pending', description: `change ${changeId} version ${subject.change_version}: required tasks not yet done`, receipt_digest: null };
}

/** The Hub's forge publisher: the observer that fills the outbox and the loop that delivers it. */
export class ForgeStatus {
  private readonly publisher: Publisher;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private stopped = false;
  /** Deliveries made and refusals reported (diagnostics). */
  delivered = 0;

  constructor(
    private readonly state: ForgeHost,
    private readonly o: ForgeOptions,
    private readonly log: (line: string) => void,
  ) {
    this.publisher = o.kind === 'github' ? github(o) : gitlab(o);
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      void this.tick().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.o.pollMs);
      });
    };
    this.timer = setTimeout(tick, 0);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** Writes in the journal go through the Hub's group commit, like every mutation. */
  private write(f: () => void): Promise<void> {
    return new Promise((resolve, reject) =>
      this.state.commits.submit(
        () => {
          f();
          return null;
        },
        (o) => (o.ok ? resolve() : reject(o.error)),
      ),
    );
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.observe();
      await this.deliver();
    } catch (e) {
      this.log(`hub: forge status: ${(e as Error).message}`);
    } finally {
      this.running = false;
    }
  }

  private async observe(): Promise<void> {
    const journal = this.state.journal();
    if (!journal) return;
    this.state.authority.revalidate();
    const queue: Parameters<ReturnType<ForgeHost['writableJournal']>['insertOutbox']>[0][] = [];
    for (const c of journal.changesWithTasks()) {
      const d = desired(this.state, c.repository, c.profile, c.change_id);
      if (!d) continue;
      const last = this.state.writableJournal().lastOutbox(c.repository, c.profile, c.change_id);
      if (last && last.sha === d.sha && last.state === d.state && last.change_version === d.change_version && last.policy_epoch === d.policy_epoch && last.receipt_digest === d.receipt_digest) continue;
      const now = Date.now();
      queue.push({ ...d, next_at: now, created_at: now });
    }
    if (queue.length > 0) await this.write(() => queue.forEach((r) => this.state.writableJournal().insertOutbox(r)));
  }

  private async deliver(): Promise<void> {
    const blocked = new Set<string>();
    for (const row of this.state.writableJournal().queuedOutbox(256)) {
      if (this.stopped) return;
      // In order per commit: a row waits while an earlier one for the same commit is still queued.
      if (blocked.has(row.sha) || row.next_at > Date.now()) {
        blocked.add(row.sha);
        continue;
      }
      const sent = await this.publisher.send(row, `agentscm/${row.profile}`);
      const now = Date.now();
      const attempts = row.attempts + 1;
      if (sent.ok) {
        this.delivered++;
        await this.write(() => this.state.writableJournal().updateOutbox(row.seq, { delivery: 'delivered', attempts, next_at: now, last_error: null, updated_at: now }));
      } else if (!sent.retry) {
        this.log(`hub: forge status ${row.state} for ${row.repository}@${row.sha} rejected (${sent.error}); not retried`);
        await this.write(() => this.state.writableJournal().updateOutbox(row.seq, { delivery: 'rejected', attempts, next_at: now, last_error: sent.error, updated_at: now }));
      } else if (attempts >= this.o.maxAttempts) {
        this.log(`hub: forge status ${row.state} for ${row.repository}@${row.sha} abandoned after ${attempts} attempts (${sent.error})`);
        await this.write(() => this.state.writableJournal().updateOutbox(row.seq, { delivery: 'abandoned', attempts, next_at: now, last_error: sent.error, updated_at: now }));
      } else {
        const delay = Math.min(this.o.retryMs * 2 ** (attempts - 1), 60_000);
        await this.write(() => this.state.writableJournal().updateOutbox(row.seq, { delivery: 'queued', attempts, next_at: now + delay, last_error: sent.error, updated_at: now }));
        blocked.add(row.sha);
      }
    }
  }
}
