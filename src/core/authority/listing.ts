// Read-only listings of what the authority holds: workspace tokens (never the secret or its hash),
// enrollments, collector profile installations, agent-task profiles and Changes. The `list` commands
// print them; each row is plain data, newest last, optionally limited to one repository.

import type { Authority } from './store.js';

export interface TokenListRow {
  readonly token_id: string;
  readonly owner_id: string;
  readonly agent_id: string;
  /** null: every repository of the data dir. */
  readonly repository: string | null;
  readonly scope: 'full' | 'read';
  readonly may_integrate: boolean;
  readonly revoked: boolean;
  readonly created_at: number;
  readonly revoked_at: number | null;
}

export interface EnrollmentListRow {
  readonly registration_id: string;
  readonly repository: string;
  readonly profile: string;
  readonly step_id: string;
  readonly executor_id: string;
  readonly registration_epoch: number;
  readonly verification_key_id: string;
  /** The executor's highest epoch for this scope, unrevoked: the one evidence may rest on. */
  readonly current: boolean;
  readonly revoked: boolean;
  readonly created_at: number;
  readonly revoked_at: number | null;
}

export interface CollectorProfileListRow {
  readonly install_id: string;
  readonly registration_id: string;
  readonly repository: string;
  readonly profile: string;
  readonly step_id: string;
  readonly kind: string;
  readonly seq: number;
  readonly profile_digest: string;
  /** The registration's newest installation. */
  readonly current: boolean;
  readonly created_at: number;
}

export interface ProfileListRow {
  readonly repository: string;
  readonly profile: string;
  readonly target: string;
  readonly requirement_digest: string;
  readonly policy_epoch: number;
  readonly publish_forge_status: boolean;
  readonly updated_at: number;
}

export interface ChangeListRow {
  readonly repository: string;
  readonly change_id: string;
  readonly current_version: number;
  readonly revision: string;
  readonly created_at: number;
  readonly updated_at: number;
}

const where = (repository: string | undefined, column = 'repository') => (repository === undefined ? '' : ` WHERE ${column} = ?`);
const args = (repository: string | undefined) => (repository === undefined ? [] : [repository]);

export function listTokens(a: Authority, repository?: string): TokenListRow[] {
  // repository filter: tokens for that repository and the unlimited ones (which act on it too).
  const rows = a.db
    .prepare(
      `SELECT t.token_id, t.owner_id, t.agent_id, t.repository, t.scope, t.created_at, t.revoked_at, i.token_id IS NOT NULL AS may_integrate
         FROM tokens t LEFT JOIN integrator_tokens i USING (token_id)` +
        (repository === undefined ? '' : ' WHERE t.repository = ? OR t.repository IS NULL') +
        ' ORDER BY t.created_at, t.token_id',
    )
    .all(...args(repository)) as Array<Omit<TokenListRow, 'revoked' | 'may_integrate'> & { may_integrate: number }>;
  return rows.map((r) => ({
    token_id: r.token_id,
    owner_id: r.owner_id,
    agent_id: r.agent_id,
    repository: r.repository,
    scope: r.scope,
    may_integrate: r.may_integrate === 1,
    revoked: r.revoked_at !== null,
    created_at: r.created_at,
    revoked_at: r.revoked_at,
  }));
}

export function listEnrollments(a: Authority, repository?: string): EnrollmentListRow[] {
  const rows = a.db
    .prepare(
      `SELECT e.registration_id, e.repository, e.profile, e.step_id, e.executor_id, e.registration_epoch, e.verification_key_id, e.created_at,
              r.revoked_at AS revoked_at,
              e.registration_epoch = (SELECT MAX(x.registration_epoch) FROM enrollments x
                 WHERE x.repository = e.repository AND x.profile = e.profile AND x.step_id = e.step_id AND x.executor_id = e.executor_id) AS newest
         FROM enrollments e LEFT JOIN enrollment_revocations r USING (registration_id)` +
        where(repository, 'e.repository') +
        ' ORDER BY e.created_at, e.registration_id',
    )
    .all(...args(repository)) as Array<Omit<EnrollmentListRow, 'current' | 'revoked'> & { newest: number }>;
  return rows.map(({ newest, ...r }) => ({ ...r, current: newest === 1 && r.revoked_at === null, revoked: r.revoked_at !== null }));
}

export function listCollectorProfiles(a: Authority, repository?: string): CollectorProfileListRow[] {
  const rows = a.db
    .prepare(
      `SELECT c.install_id, c.registration_id, e.repository, e.profile, e.step_id, c.seq, c.profile_digest, c.canonical, c.created_at,
              c.seq = (SELECT MAX(x.seq) FROM collector_profiles x WHERE x.registration_id = c.registration_id) AS newest
         FROM collector_profiles c JOIN enrollments e USING (registration_id)` +
        where(repository, 'e.repository') +
        ' ORDER BY c.created_at, c.install_id',
    )
    .all(...args(repository)) as Array<Omit<CollectorProfileListRow, 'current' | 'kind'> & { canonical: Buffer; newest: number }>;
  return rows.map(({ canonical, newest, ...r }) => ({ ...r, kind: profileKind(canonical), current: newest === 1 }));
}

/** The installed file's kind ("command" or "review"); "unknown" for bytes that do not say. */
function profileKind(canonical: Buffer): string {
  try {
    const k = (JSON.parse(canonical.toString('utf8')) as { kind?: unknown }).kind;
    return k === 'command' || k === 'review' ? k : 'unknown';
  } catch {
    return 'unknown';
  }
}

export function listProfiles(a: Authority, repository?: string): ProfileListRow[] {
  const rows = a.db
    .prepare('SELECT repository, profile, target, requirement_digest, policy_epoch, publish_forge_status, updated_at FROM profiles' + where(repository) + ' ORDER BY repository, profile')
    .all(...args(repository)) as Array<Omit<ProfileListRow, 'publish_forge_status'> & { publish_forge_status: number }>;
  return rows.map((r) => ({ ...r, publish_forge_status: r.publish_forge_status === 1 }));
}

export function listChanges(a: Authority, repository?: string): ChangeListRow[] {
  return a.db
    .prepare(
      `SELECT c.repository, c.change_id, c.current_version, v.revision, c.created_at, v.created_at AS updated_at
         FROM changes c JOIN change_versions v ON v.repository = c.repository AND v.change_id = c.change_id AND v.change_version = c.current_version` +
        where(repository, 'c.repository') +
        ' ORDER BY c.created_at, c.change_id',
    )
    .all(...args(repository)) as ChangeListRow[];
}
