// The authority store of a data dir: profiles and their installed requirements (by policy epoch),
// workspace tokens (hashed), executor enrollments and revocations, and Changes with their immutable
// versions. Shared by the Hub, the `authority` admin commands, `checkpoint`, the typed CLI, the collector
// and (read-only) the Stop hooks. No zod and no printing here. This is the SQLite implementation of
// AuthorityStore (src/core/storage/stores.ts).

import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type Database from 'better-sqlite3';
import { openDatabase } from '../sqlite/open.js';
import { DOMAINS, domainDigest, HEX64 } from '../crypto/digest.js';
import { AUTHORITY_FILE, AUTHORITY_SCHEMA_VERSION } from './files.js';
import { badInput, localState, notFound } from '../errors.js';
import { assertPrivateDir, checkStoreFile, ensurePrivateDir, lstatOrUndefined } from '../fs/safe.js';
import { checkStoredRequirement, compilePlan, contextDigest, deriveTasks, type Plan, type Task } from './plan.js';
import type { ApprovalRow, ChangeVersion, Enrollment, IntegrationRow, Profile, Subject, TokenActor, TokenScope } from './types.js';
import type { AddProfileInput, AuthorityStore, CollectorProfileRow, LoadedRequirement } from '../storage/stores.js';

export { AUTHORITY_FILE, AUTHORITY_SCHEMA_VERSION } from './files.js';
export type { AddProfileInput, CollectorProfileRow } from '../storage/stores.js';

const SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE requirements (
  requirement_digest TEXT PRIMARY KEY,
  canonical BLOB NOT NULL,
  plan_digest TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE TABLE profiles (
  repository TEXT NOT NULL,
  profile TEXT NOT NULL,
  target TEXT NOT NULL,
  requirement_digest TEXT NOT NULL REFERENCES requirements(requirement_digest),
  policy_epoch INTEGER NOT NULL,
  publish_forge_status INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (repository, profile)
) STRICT;
CREATE TABLE profile_epochs (
  repository TEXT NOT NULL,
  profile TEXT NOT NULL,
  policy_epoch INTEGER NOT NULL,
  target TEXT NOT NULL,
  requirement_digest TEXT NOT NULL REFERENCES requirements(requirement_digest),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (repository, profile, policy_epoch)
) STRICT;
CREATE TABLE tokens (
  token_id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
  owner_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  -- NULL: every repository of this data dir; otherwise the one repository the token may act on.
  repository TEXT,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER,
  -- full: every operation; read: the read-only operations (and MCP tools) only.
  scope TEXT NOT NULL DEFAULT 'full' CHECK (scope IN ('full', 'read'))
) STRICT;
CREATE TABLE enrollments (
  registration_id TEXT PRIMARY KEY,
  repository TEXT NOT NULL,
  profile TEXT NOT NULL,
  step_id TEXT NOT NULL,
  executor_id TEXT NOT NULL,
  registration_epoch INTEGER NOT NULL,
  public_key TEXT NOT NULL,
  verification_key_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (repository, profile, step_id, executor_id, registration_epoch)
) STRICT;
CREATE TABLE enrollment_revocations (
  registration_id TEXT PRIMARY KEY REFERENCES enrollments(registration_id),
  revoked_at INTEGER NOT NULL
) STRICT;
-- Operator-installed collector profiles: immutable rows, one exact registration (epoch) each. The
-- newest installation of a registration is its current profile; evidence names the install_id.
CREATE TABLE collector_profiles (
  install_id TEXT PRIMARY KEY,
  registration_id TEXT NOT NULL REFERENCES enrollments(registration_id),
  seq INTEGER NOT NULL,
  profile_digest TEXT NOT NULL,
  canonical BLOB NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (registration_id, seq)
) STRICT;
CREATE TABLE changes (
  repository TEXT NOT NULL,
  change_id TEXT NOT NULL,
  current_version INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (repository, change_id)
) STRICT;
CREATE TABLE change_versions (
  repository TEXT NOT NULL,
  change_id TEXT NOT NULL,
  change_version INTEGER NOT NULL,
  revision TEXT NOT NULL,
  parent_revision TEXT,
  context_digest TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (repository, change_id, change_version)
) STRICT;
`;

/**
 * Version 3: protected targets, the target revision each Change version was based on, approvals and
 * integrations (landings). A target row exists once something landed on it; before, it is empty.
 */
const SCHEMA_V3 = `
CREATE TABLE targets (
  repository TEXT NOT NULL,
  target TEXT NOT NULL,
  revision TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (repository, target)
) STRICT;
CREATE TABLE change_bases (
  repository TEXT NOT NULL,
  change_id TEXT NOT NULL,
  change_version INTEGER NOT NULL,
  target TEXT NOT NULL,
  -- The target's revision when this version was checkpointed; NULL while the target was empty.
  base_revision TEXT,
  PRIMARY KEY (repository, change_id, change_version, target)
) STRICT;
-- The git commit a Change version's checkpoint describes: the work tree's HEAD and whether the snapshot
-- equals its tree (forge commit statuses are published only then).
CREATE TABLE change_commits (
  repository TEXT NOT NULL,
  change_id TEXT NOT NULL,
  change_version INTEGER NOT NULL,
  git_head TEXT NOT NULL,
  tree_matches INTEGER NOT NULL,
  PRIMARY KEY (repository, change_id, change_version)
) STRICT;
-- Workspace tokens the operator allowed to approve and land through the Hub (issue --may-integrate).
CREATE TABLE integrator_tokens (
  token_id TEXT PRIMARY KEY REFERENCES tokens(token_id)
) STRICT;
CREATE TABLE approvals (
  approval_id TEXT PRIMARY KEY,
  repository TEXT NOT NULL,
  profile TEXT NOT NULL,
  change_id TEXT NOT NULL,
  change_version INTEGER NOT NULL,
  policy_epoch INTEGER NOT NULL,
  context_digest TEXT NOT NULL,
  revision TEXT NOT NULL,
  receipt_digest TEXT NOT NULL,
  actor TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX approvals_by_change ON approvals (repository, profile, change_id);
CREATE TABLE integrations (
  integration_id TEXT PRIMARY KEY,
  repository TEXT NOT NULL,
  profile TEXT NOT NULL,
  target TEXT NOT NULL,
  change_id TEXT NOT NULL,
  change_version INTEGER NOT NULL,
  policy_epoch INTEGER NOT NULL,
  revision TEXT NOT NULL,
  base_revision TEXT,
  receipt_digest TEXT NOT NULL,
  approval_id TEXT NOT NULL REFERENCES approvals(approval_id),
  actor TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
`;

const TOKEN_RE = /^agentscm_wt1_([0-9a-f]{24})_([A-Za-z0-9_-]{43})$/;

export function authorityPath(dataDir: string): string {
  return path.join(dataDir, AUTHORITY_FILE);
}

/** Opens a SQLite file with the store's pragmas: WAL (writers only), busy timeout, foreign keys. */
export function openSqlite(file: string, readonly: boolean): Database.Database {
  let db: Database.Database;
  try {
    db = openDatabase(file, { readonly, fileMustExist: true });
  } catch (e) {
    throw localState(`cannot open ${path.basename(file)} in the data dir: ${(e as Error).message}`, 'STORE_UNAVAILABLE');
  }
  db.pragma('busy_timeout = 5000');
  if (!readonly) db.pragma('foreign_keys = ON');
  return db;
}

/** Creates the data dir (0700) and the authority database. Idempotent: an initialized dir is reported. */
export function initAuthority(dataDir: string): { created: boolean; authority_id: string; data_dir: string } {
  ensurePrivateDir(dataDir, 'data dir');
  const file = authorityPath(dataDir);
  if (!checkStoreFile(file, lstatOrUndefined(file), 'the authority database')) {
    const tmp = `${file}.init-${process.pid}-${randomBytes(4).toString('hex')}`;
    const db = openDatabase(tmp);
    try {
      fs.chmodSync(tmp, 0o600);
      db.pragma('journal_mode = WAL');
      db.exec(SCHEMA);
      db.exec(SCHEMA_V3);
      db.prepare('INSERT INTO meta (key, value) VALUES (?, ?), (?, ?)').run('authority_id', `auth-${randomBytes(12).toString('hex')}`, 'created_at', String(Date.now()));
      db.pragma(`user_version = ${AUTHORITY_SCHEMA_VERSION}`);
    } finally {
      db.close();
    }
    // WAL sidecars belong to the temp name until it is closed; linking keeps an existing file untouched.
    try {
      fs.linkSync(tmp, file);
      fs.rmSync(tmp);
      const a = Authority.open(dataDir);
      try {
        return { created: true, authority_id: a.authorityId(), data_dir: path.resolve(dataDir) };
      } finally {
        a.close();
      }
    } catch (e) {
      fs.rmSync(tmp, { force: true });
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  const a = Authority.open(dataDir);
  try {
    return { created: false, authority_id: a.authorityId(), data_dir: path.resolve(dataDir) };
  } finally {
    a.close();
  }
}

export class Authority implements AuthorityStore {
  private readonly requirementCache = new Map<string, LoadedRequirement>();
  private readonly taskCache = new Map<string, Task[]>();
  /** Subjects that matched their immutable rows (see resolveSubject). */
  private readonly subjectCache = new Map<string, Subject>();
  /** Token hashes by token, so that a busy client's token is hashed once (bounded). */
  private readonly tokenHashes = new Map<string, Buffer>();
  /** The lookup memo (see enableMemo); undefined when off. */
  private memo: AuthorityMemo | undefined;
  private readonly stmts: {
    dataVersion: Database.Statement<[], number>;
    ownChanges: Database.Statement<[], number>;
    token: Database.Statement<[string], TokenRow>;
    profile: Database.Statement<[string, string], ProfileRow>;
    epoch: Database.Statement<[string, string, number], { target: string; requirement_digest: string }>;
    change: Database.Statement<[string, string], { current_version: number }>;
    version: Database.Statement<[string, string, number], ChangeVersion>;
    enrollment: Database.Statement<[string], Enrollment>;
    currentRegistration: Database.Statement<[string, string, string, string], Enrollment>;
    collectorProfile: Database.Statement<[string], CollectorProfileRow>;
    tokenActive: Database.Statement<[string], { revoked_at: number | null }>;
  };

  private constructor(
    readonly db: Database.Database,
    readonly dataDir: string,
    readonly readonly: boolean,
  ) {
    this.stmts = {
      dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
      ownChanges: db.prepare<[], number>('SELECT total_changes()').pluck(),
      token: db.prepare('SELECT token_hash, owner_id, agent_id, repository, revoked_at, scope FROM tokens WHERE token_id = ?'),
      profile: db.prepare('SELECT * FROM profiles WHERE repository = ? AND profile = ?'),
      epoch: db.prepare('SELECT target, requirement_digest FROM profile_epochs WHERE repository = ? AND profile = ? AND policy_epoch = ?'),
      change: db.prepare('SELECT current_version FROM changes WHERE repository = ? AND change_id = ?'),
      version: db.prepare('SELECT repository, change_id, change_version, revision, parent_revision, context_digest, created_at FROM change_versions WHERE repository = ? AND change_id = ? AND change_version = ?'),
      enrollment: db.prepare(`SELECT e.*, r.revoked_at AS revoked_at FROM enrollments e LEFT JOIN enrollment_revocations r USING (registration_id) WHERE e.registration_id = ?`),
      currentRegistration: db.prepare(
        `SELECT e.*, r.revoked_at AS revoked_at FROM enrollments e LEFT JOIN enrollment_revocations r USING (registration_id)
         WHERE e.repository = ? AND e.profile = ? AND e.step_id = ? AND e.executor_id = ? ORDER BY e.registration_epoch DESC LIMIT 1`,
      ),
      collectorProfile: db.prepare('SELECT * FROM collector_profiles WHERE registration_id = ? ORDER BY seq DESC LIMIT 1'),
      tokenActive: db.prepare('SELECT revoked_at FROM tokens WHERE token_id = ?'),
    };
  }

  /** Opens an existing authority; never creates one (reads must not initialize a data dir). */
  static open(dataDir: string, opts: { readonly?: boolean } = {}): Authority {
    assertPrivateDir(dataDir, 'data dir');
    const file = authorityPath(dataDir);
    const st = checkStoreFile(file, lstatOrUndefined(file), 'the authority database');
    if (!st) throw localState('the data dir has no authority (run `agentscm authority init --data-dir DIR`)', 'NO_AUTHORITY');
    const readonly = opts.readonly ?? false;
    const db = openSqlite(file, readonly);
    let version = db.pragma('user_version', { simple: true }) as number;
    if (version === 2 && !readonly) {
      // Version 2 gains the tables of version 3 and the tokens' scope (every token it issued keeps full
      // scope); its rows stay as they are.
      db.transaction(() => {
        if ((db.pragma('user_version', { simple: true }) as number) !== 2) return;
        db.exec(SCHEMA_V3);
        db.exec("ALTER TABLE tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'full' CHECK (scope IN ('full', 'read'))");
        db.pragma(`user_version = ${AUTHORITY_SCHEMA_VERSION}`);
      }).immediate();
      version = db.pragma('user_version', { simple: true }) as number;
    }
    if (version !== AUTHORITY_SCHEMA_VERSION) {
      db.close();
      throw localState(`the authority schema is version ${version}, this program needs ${AUTHORITY_SCHEMA_VERSION}`, 'SCHEMA_NOT_CURRENT');
    }
    return new Authority(db, dataDir, readonly);
  }

  close(): void {
    this.db.close();
  }

  // ---- lookup memo (the Hub) ---------------------------------------------------------------------

  /**
   * Lets token, profile and Change lookups be answered from memory while nothing changed. Other
   * processes (the operator's authority commands) write this file while a Hub runs, so the memo is
   * trusted only within the synchronous stretch of code that called revalidate(): a lookup anywhere else
   * goes to SQLite as before. revalidate() drops the memo whenever another connection committed since
   * its last check (PRAGMA data_version, which SQLite changes on any other connection's commit,
   * in any process) or this connection wrote (total_changes()).
   */
  enableMemo(): void {
    this.memo ??= new AuthorityMemo();
  }

  /** How many revalidations asked SQLite (PRAGMA data_version). */
  dataVersionChecks = 0;

  /**
   * Checks the authority for changes and makes the memo usable until the current synchronous stretch
   * ends (the next microtask checkpoint): PRAGMA data_version (inside an open transaction it reads that
   * transaction's snapshot, so the memo then agrees with every statement of it) and total_changes().
   * A no-op without enableMemo().
   */
  revalidate(): void {
    const m = this.memo;
    if (!m) return;
    const own = this.stmts.ownChanges.get()!;
    this.dataVersionChecks++;
    const dv = this.stmts.dataVersion.get()!;
    if (dv !== m.dataVersion || own !== m.ownChanges) {
      m.clear();
      m.dataVersion = dv;
      m.ownChanges = own;
    }
    if (!m.valid) {
      m.valid = true;
      queueMicrotask(m.expire);
    }
  }

  /**
   * A number that changes whenever the memo is dropped (another connection committed, this one wrote,
   * or one of the Hub's own writes cleared it), while the memo may be used now (see revalidate);
   * undefined otherwise. A value derived only from memoized lookups may be kept under it.
   */
  memoGeneration(): number | undefined {
    return this.live()?.generation;
  }

  /** The memo when it may be used now (see revalidate). */
  private live(): AuthorityMemo | undefined {
    const m = this.memo;
    return m && m.valid ? m : undefined;
  }

  /** The health check: one trivial query against the store. */
  ping(): boolean {
    return (this.db.prepare('SELECT 1 AS ok').get() as { ok: number }).ok === 1;
  }

  authorityId(): string {
    return (this.db.prepare("SELECT value FROM meta WHERE key = 'authority_id'").get() as { value: string }).value;
  }

  // ---- requirements and profiles -----------------------------------------------------------------

  /**
   * Installs or updates an agent-task profile. The same target and requirement is a no-op; anything
   * else starts a new policy epoch, which supersedes every subject evaluated under the old one.
   */
  addProfile(input: AddProfileInput): Profile & { plan_digest: string; changed: boolean } {
    const { digest: plan_digest } = compilePlan(input.requirement, input.requirement_digest);
    const now = Date.now();
    const tx = this.db.transaction(() => {
      this.db
        .prepare('INSERT OR IGNORE INTO requirements (requirement_digest, canonical, plan_digest, created_at) VALUES (?, ?, ?, ?)')
        .run(input.requirement_digest, input.canonical, plan_digest, now);
      const cur = this.stmts.profile.get(input.repository, input.profile);
      const publish = input.publish_forge_status ?? false;
      if (cur && cur.target === input.target && cur.requirement_digest === input.requirement_digest) {
        if (Boolean(cur.publish_forge_status) === publish) return { ...rowToProfile(cur), changed: false };
        // Publishing a commit status is not policy: the subject (and so every task and receipt) stays.
        this.db.prepare('UPDATE profiles SET publish_forge_status = ?, updated_at = ? WHERE repository = ? AND profile = ?').run(publish ? 1 : 0, now, input.repository, input.profile);
        return { ...rowToProfile(cur), publish_forge_status: publish, changed: true };
      }
      const epoch = cur ? cur.policy_epoch + 1 : 1;
      this.db
        .prepare(
          `INSERT INTO profiles (repository, profile, target, requirement_digest, policy_epoch, publish_forge_status, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (repository, profile) DO UPDATE SET target = excluded.target, requirement_digest = excluded.requirement_digest,
             policy_epoch = excluded.policy_epoch, publish_forge_status = excluded.publish_forge_status, updated_at = excluded.updated_at`,
        )
        .run(input.repository, input.profile, input.target, input.requirement_digest, epoch, publish ? 1 : 0, now);
      this.db
        .prepare('INSERT INTO profile_epochs (repository, profile, policy_epoch, target, requirement_digest, created_at) VALUES (?, ?, ?, ?, ?, ?)')
        .run(input.repository, input.profile, epoch, input.target, input.requirement_digest, now);
      return {
        repository: input.repository,
        profile: input.profile,
        target: input.target,
        requirement_digest: input.requirement_digest,
        policy_epoch: epoch,
        publish_forge_status: publish,
        changed: true,
      };
    });
    return { ...tx.immediate(), plan_digest };
  }

  getProfile(repository: string, profile: string): Profile | undefined {
    const m = this.live();
    const key = m && `${repository}\0${profile}`;
    if (m) {
      const hit = m.profiles.get(key!);
      if (hit) return hit;
    }
    const row = this.stmts.profile.get(repository, profile);
    const p = row ? rowToProfile(row) : undefined;
    if (m && p) m.put(m.profiles, key!, p);
    return p;
  }

  requireProfile(repository: string, profile: string): Profile {
    const p = this.getProfile(repository, profile);
    if (!p) throw notFound(`no agent-task profile ${profile} for repository ${repository}`, 'PROFILE_NOT_FOUND');
    return p;
  }

  /** Loads an installed requirement by digest, rechecking the stored bytes against it. */
  loadRequirement(digest: string): LoadedRequirement {
    const hit = this.requirementCache.get(digest);
    if (hit) return hit;
    const row = this.db.prepare('SELECT canonical, plan_digest FROM requirements WHERE requirement_digest = ?').get(digest) as
      | { canonical: Buffer; plan_digest: string }
      | undefined;
    if (!row) throw localState(`installed requirement ${digest} is missing`, 'STORE_CORRUPT');
    const loaded = checkStoredRequirement(digest, row.canonical, row.plan_digest);
    this.requirementCache.set(digest, loaded);
    return loaded;
  }

  // ---- tokens ------------------------------------------------------------------------------------

  /** Issues a workspace bearer token; only its hash is stored. The caller writes the token file. */
  issueToken(ownerId: string, agentId: string, repository: string | null = null, scope: TokenScope = 'full'): { token_id: string; token: string } {
    const tokenId = randomBytes(12).toString('hex');
    const token = `agentscm_wt1_${tokenId}_${randomBytes(32).toString('base64url')}`;
    this.db
      .prepare('INSERT INTO tokens (token_id, token_hash, owner_id, agent_id, repository, created_at, scope) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(tokenId, tokenHash(token), ownerId, agentId, repository, Date.now(), scope);
    this.memo?.clear();
    return { token_id: tokenId, token };
  }

  /** Forgets a token issued moments ago whose file could not be written. */
  deleteToken(tokenId: string): void {
    this.db.prepare('DELETE FROM tokens WHERE token_id = ?').run(tokenId);
    this.memo?.clear();
  }

  revokeToken(tokenId: string): { token_id: string; revoked: boolean } {
    const row = this.db.prepare('SELECT revoked_at FROM tokens WHERE token_id = ?').get(tokenId) as { revoked_at: number | null } | undefined;
    if (!row) throw notFound(`no token ${tokenId}`, 'TOKEN_NOT_FOUND');
    if (row.revoked_at !== null) return { token_id: tokenId, revoked: false };
    this.db.prepare('UPDATE tokens SET revoked_at = ? WHERE token_id = ?').run(Date.now(), tokenId);
    this.memo?.clear();
    return { token_id: tokenId, revoked: true };
  }

  /** The actor of a bearer token, or undefined for an unknown, malformed or revoked one. */
  authenticate(token: string): TokenActor | undefined {
    const m = TOKEN_RE.exec(token);
    if (!m) return undefined;
    const row = this.tokenRow(m[1]!);
    if (!row || row.revoked_at !== null) return undefined;
    const a = Buffer.from(row.token_hash, 'hex');
    let b = this.tokenHashes.get(token);
    if (!b) {
      b = Buffer.from(tokenHash(token), 'hex');
      if (this.tokenHashes.size >= 1024) this.tokenHashes.clear();
      this.tokenHashes.set(token, b);
    }
    if (a.length !== b.length || !timingSafeEqual(a, b)) return undefined;
    return { token_id: m[1]!, owner_id: row.owner_id, agent_id: row.agent_id, repository: row.repository, scope: row.scope };
  }

  private tokenRow(tokenId: string): TokenRow | undefined {
    const m = this.live();
    if (m) {
      const hit = m.tokens.get(tokenId);
      if (hit) return hit;
    }
    const row = this.stmts.token.get(tokenId);
    if (m && row) m.put(m.tokens, tokenId, row);
    return row;
  }

  // ---- enrollments -------------------------------------------------------------------------------

  /**
   * Enrolls an operator-supplied public key (already validated by the caller) for one repository,
   * profile and step: a new immutable registration with the next epoch for that executor.
   */
  enroll(input: { repository: string; profile: string; step_id: string; executor_id: string; public_key: string; verification_key_id: string }): Enrollment {
    const tx = this.db.transaction(() => {
      const p = this.requireProfile(input.repository, input.profile);
      const { requirement } = this.loadRequirement(p.requirement_digest);
      if (!requirement.steps.some((s) => s.id === input.step_id)) {
        throw badInput(`step ${input.step_id} is not in the installed requirement of ${input.repository} ${input.profile}`, 'UNKNOWN_STEP');
      }
      const max = this.db
        .prepare('SELECT MAX(registration_epoch) AS m FROM enrollments WHERE repository = ? AND profile = ? AND step_id = ? AND executor_id = ?')
        .get(input.repository, input.profile, input.step_id, input.executor_id) as { m: number | null };
      const e: Enrollment = {
        registration_id: `reg-${randomBytes(12).toString('hex')}`,
        repository: input.repository,
        profile: input.profile,
        step_id: input.step_id,
        executor_id: input.executor_id,
        registration_epoch: (max.m ?? 0) + 1,
        public_key: input.public_key,
        verification_key_id: input.verification_key_id,
        created_at: Date.now(),
        revoked_at: null,
      };
      this.db
        .prepare(
          'INSERT INTO enrollments (registration_id, repository, profile, step_id, executor_id, registration_epoch, public_key, verification_key_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(e.registration_id, e.repository, e.profile, e.step_id, e.executor_id, e.registration_epoch, e.public_key, e.verification_key_id, e.created_at);
      return e;
    });
    const out = tx.immediate();
    this.memo?.clear();
    return out;
  }

  revokeEnrollment(registrationId: string): { registration_id: string; revoked: boolean } {
    const tx = this.db.transaction(() => {
      if (!this.getEnrollment(registrationId)) throw notFound(`no enrollment ${registrationId}`, 'ENROLLMENT_NOT_FOUND');
      const r = this.db.prepare('INSERT OR IGNORE INTO enrollment_revocations (registration_id, revoked_at) VALUES (?, ?)').run(registrationId, Date.now());
      return { registration_id: registrationId, revoked: r.changes === 1 };
    });
    const out = tx.immediate();
    this.memo?.clear();
    return out;
  }

  getEnrollment(registrationId: string): Enrollment | undefined {
    return this.memoized('enrollments', registrationId, () => this.stmts.enrollment.get(registrationId));
  }

  /**
   * The current registration: the enrollment with the highest epoch for this executor and scope, and
   * only if it is not revoked. An older epoch is never current, even when unrevoked.
   */
  currentRegistration(repository: string, profile: string, stepId: string, executorId: string): Enrollment | undefined {
    return this.memoized('registrations', `${repository}\0${profile}\0${stepId}\0${executorId}`, () => {
      const e = this.stmts.currentRegistration.get(repository, profile, stepId, executorId);
      return e && e.revoked_at === null ? e : undefined;
    });
  }

  /**
   * A lookup answered from the memo while it is live (see revalidate), absent answers included;
   * otherwise from SQLite. This connection's own writes to what these lookups read (enroll,
   * revokeEnrollment, installCollectorProfile, issueToken, revokeToken) drop the memo at once.
   */
  private memoized<V>(map: 'enrollments' | 'registrations' | 'collectorProfiles' | 'activeTokens', key: string, get: () => V | undefined): V | undefined {
    const m = this.live();
    if (!m) return get();
    const cache = m[map] as Map<string, { value: V | undefined }>;
    const hit = cache.get(key);
    if (hit) return hit.value;
    const value = get();
    m.put(cache, key, { value });
    return value;
  }

  /** The current registration of the executor that holds this verification key for a step, if any. */
  currentRegistrationByKey(repository: string, profile: string, stepId: string, verificationKeyId: string): Enrollment | undefined {
    const rows = this.db
      .prepare('SELECT DISTINCT executor_id FROM enrollments WHERE repository = ? AND profile = ? AND step_id = ? AND verification_key_id = ?')
      .all(repository, profile, stepId, verificationKeyId) as { executor_id: string }[];
    for (const r of rows) {
      const e = this.currentRegistration(repository, profile, stepId, r.executor_id);
      if (e && e.verification_key_id === verificationKeyId) return e;
    }
    return undefined;
  }

  // ---- collector profiles ------------------------------------------------------------------------

  /**
   * Installs a collector profile (already validated and canonicalized by the caller) for its exact
   * registration, which must be the executor's current, unrevoked one for a collector step. Installing
   * the bytes that are already current is a no-op; anything else is a new immutable installation that
   * replaces the current one (evidence bound to the old installation stops counting).
   */
  installCollectorProfile(input: { registration_id: string; registration_epoch: number; repository: string; profile: string; step_id: string; canonical: Buffer; profile_digest: string; kind?: 'command' | 'review'; policy_digest?: string }): CollectorProfileRow & { changed: boolean } {
    const tx = this.db.transaction(() => {
      const e = this.getEnrollment(input.registration_id);
      if (!e) throw notFound(`no enrollment ${input.registration_id}`, 'ENROLLMENT_NOT_FOUND');
      if (e.repository !== input.repository || e.profile !== input.profile || e.step_id !== input.step_id || e.registration_epoch !== input.registration_epoch) {
        throw badInput('the collector profile names another repository, profile, step or epoch than its registration', 'PROFILE_BINDING_MISMATCH');
      }
      const current = this.currentRegistration(e.repository, e.profile, e.step_id, e.executor_id);
      if (!current || current.registration_id !== e.registration_id) throw badInput('the registration is revoked or not the executor\'s current epoch', 'ENROLLMENT_NOT_CURRENT');
      const p = this.requireProfile(e.repository, e.profile);
      const step = this.loadRequirement(p.requirement_digest).requirement.steps.find((s) => s.id === e.step_id);
      const cls = input.kind === 'review' ? 'review_collector' : 'command_collector';
      if (!step || step.action_class !== cls) throw badInput(`step ${e.step_id} is not a ${cls} step of the installed requirement`, 'NOT_A_COLLECTOR_STEP');
      if (input.kind === 'review' && input.policy_digest !== p.requirement_digest) throw badInput('the review profile\'s policy_digest is not the installed requirement digest', 'POLICY_DIGEST_MISMATCH');
      const cur = this.currentCollectorProfile(e.registration_id);
      if (cur && cur.profile_digest === input.profile_digest) return { ...cur, changed: false };
      const row: CollectorProfileRow = {
        install_id: `cp-${randomBytes(12).toString('hex')}`,
        registration_id: e.registration_id,
        seq: (cur?.seq ?? 0) + 1,
        profile_digest: input.profile_digest,
        canonical: input.canonical,
        created_at: Date.now(),
      };
      this.db
        .prepare('INSERT INTO collector_profiles (install_id, registration_id, seq, profile_digest, canonical, created_at) VALUES (?, ?, ?, ?, ?, ?)')
        .run(row.install_id, row.registration_id, row.seq, row.profile_digest, row.canonical, row.created_at);
      return { ...row, changed: true };
    });
    const out = tx.immediate();
    this.memo?.clear();
    return out;
  }

  /** The newest installed collector profile of a registration, its bytes rechecked against the digest. */
  currentCollectorProfile(registrationId: string): CollectorProfileRow | undefined {
    return this.memoized('collectorProfiles', registrationId, () => {
      const row = this.stmts.collectorProfile.get(registrationId);
      if (row && domainDigest(DOMAINS.collectorProfile, row.canonical) !== row.profile_digest) throw localState('an installed collector profile does not match its digest', 'STORE_CORRUPT');
      return row;
    });
  }

  /** One installation of a registration's collector profile, current or not, as stored. */
  collectorProfileInstall(installId: string, registrationId: string): CollectorProfileRow | undefined {
    return this.db.prepare('SELECT * FROM collector_profiles WHERE install_id = ? AND registration_id = ?').get(installId, registrationId) as CollectorProfileRow | undefined;
  }

  /** Whether a workspace token (an originating grant) still exists unrevoked. */
  tokenActive(tokenId: string): boolean {
    return (
      this.memoized('activeTokens', tokenId, () => {
        const row = this.stmts.tokenActive.get(tokenId);
        return row !== undefined && row.revoked_at === null;
      }) === true
    );
  }

  // ---- Changes and subjects ----------------------------------------------------------------------

  /**
   * Records a new version of a Change at revision (creating the Change at version 1). With `target`,
   * also records the target's revision at this moment as the version's base (what land swaps from).
   */
  recordChangeVersion(repository: string, changeId: string, revision: string, target?: string, commit?: { head: string | null; tree_matches: boolean }): ChangeVersion {
    if (!HEX64.test(revision)) throw badInput('revision must be 64 lowercase hex characters', 'BAD_REVISION');
    const tx = this.db.transaction(() => {
      const cur = this.stmts.change.get(repository, changeId);
      const version = cur ? cur.current_version + 1 : 1;
      const parent = cur ? this.stmts.version.get(repository, changeId, cur.current_version)!.revision : null;
      const cv: ChangeVersion = {
        repository,
        change_id: changeId,
        change_version: version,
        revision,
        parent_revision: parent,
        context_digest: contextDigest(repository, changeId, version, revision, parent),
        created_at: Date.now(),
      };
      this.db
        .prepare('INSERT INTO change_versions (repository, change_id, change_version, revision, parent_revision, context_digest, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
        .run(cv.repository, cv.change_id, cv.change_version, cv.revision, cv.parent_revision, cv.context_digest, cv.created_at);
      if (cur) this.db.prepare('UPDATE changes SET current_version = ? WHERE repository = ? AND change_id = ?').run(version, repository, changeId);
      else this.db.prepare('INSERT INTO changes (repository, change_id, current_version, created_at) VALUES (?, ?, ?, ?)').run(repository, changeId, version, cv.created_at);
      if (target !== undefined) {
        this.db
          .prepare('INSERT INTO change_bases (repository, change_id, change_version, target, base_revision) VALUES (?, ?, ?, ?, ?)')
          .run(repository, changeId, version, target, this.targetRevision(repository, target));
      }
      if (commit?.head) {
        this.db
          .prepare('INSERT INTO change_commits (repository, change_id, change_version, git_head, tree_matches) VALUES (?, ?, ?, ?, ?)')
          .run(repository, changeId, version, commit.head, commit.tree_matches ? 1 : 0);
      }
      return cv;
    });
    return tx.immediate();
  }

  currentChangeVersion(repository: string, changeId: string): ChangeVersion | undefined {
    const cur = this.changeHead(repository, changeId);
    return cur === undefined ? undefined : this.getChangeVersion(repository, changeId, cur);
  }

  /** The current version number of a Change, if the Change exists. */
  private changeHead(repository: string, changeId: string): number | undefined {
    const m = this.live();
    const key = m && `${repository}\0${changeId}`;
    if (m) {
      const hit = m.heads.get(key!);
      if (hit !== undefined) return hit;
    }
    const v = this.stmts.change.get(repository, changeId)?.current_version;
    if (m && v !== undefined) m.put(m.heads, key!, v);
    return v;
  }

  getChangeVersion(repository: string, changeId: string, version: number): ChangeVersion | undefined {
    const m = this.live();
    const key = m && `${repository}\0${changeId}\0${version}`;
    if (m) {
      const hit = m.versions.get(key!);
      if (hit) return hit;
    }
    const cv = this.stmts.version.get(repository, changeId, version);
    if (m && cv) m.put(m.versions, key!, cv);
    return cv;
  }

  /** The current subject of a Change under a profile: its current version at the current policy epoch. */
  currentSubject(repository: string, profile: string, changeId: string): Subject {
    const p = this.requireProfile(repository, profile);
    const cv = this.currentChangeVersion(repository, changeId);
    if (!cv) throw notFound(`no Change ${changeId} in ${repository} (run \`agentscm checkpoint\` first)`, 'CHANGE_NOT_FOUND');
    return this.subjectOf(p, cv, p.policy_epoch, p.target, p.requirement_digest);
  }

  private subjectOf(p: Profile, cv: ChangeVersion, epoch: number, target: string, requirementDigest: string): Subject {
    return {
      repository: p.repository,
      profile: p.profile,
      target,
      change_id: cv.change_id,
      change_version: cv.change_version,
      revision: cv.revision,
      context_digest: cv.context_digest,
      policy_epoch: epoch,
      requirement_digest: requirementDigest,
      plan_digest: this.loadRequirement(requirementDigest).plan_digest,
    };
  }

  /**
   * Resolves a subject named by a caller: it must be a real Change version evaluated at a real policy
   * epoch of the profile, with every field equal to the stored one. `current` says whether it is still
   * the Change's current version at the profile's current epoch.
   */
  resolveSubject(claimed: Subject): { subject: Subject; current: boolean } | undefined {
    const p = this.getProfile(claimed.repository, claimed.profile);
    if (!p) return undefined;
    // Change versions, policy epochs and requirements are immutable rows, so a subject that matched
    // them once always will: only the profile's current epoch and the Change's current version move.
    const key = subjectKey(claimed);
    let subject = this.subjectCache.get(key);
    if (subject && !sameSubject(subject, claimed)) subject = undefined;
    if (!subject) {
      const cv = this.getChangeVersion(claimed.repository, claimed.change_id, claimed.change_version);
      if (!cv) return undefined;
      const ep = this.stmts.epoch.get(claimed.repository, claimed.profile, claimed.policy_epoch);
      if (!ep) return undefined;
      const resolved = this.subjectOf(p, cv, claimed.policy_epoch, ep.target, ep.requirement_digest);
      if (!sameSubject(resolved, claimed)) return undefined;
      if (this.subjectCache.size >= 4096) this.subjectCache.clear();
      this.subjectCache.set(key, resolved);
      subject = resolved;
    }
    const head = this.changeHead(claimed.repository, claimed.change_id);
    return { subject, current: head === claimed.change_version && p.policy_epoch === claimed.policy_epoch };
  }

  // ---- protected targets, approvals and integrations ---------------------------------------------

  /** Runs f under the authority's write lock (one BEGIN IMMEDIATE transaction). */
  underWriteLock<T>(f: () => T): T {
    return this.db.transaction(f).immediate();
  }

  /** Lets a token approve and land through the Hub. */
  grantIntegration(tokenId: string): void {
    this.db.prepare('INSERT OR IGNORE INTO integrator_tokens (token_id) VALUES (?)').run(tokenId);
  }

  /** Whether a token is unrevoked and may approve and land (read inside the write lock by the Hub). */
  mayIntegrate(tokenId: string): boolean {
    return this.tokenActive(tokenId) && this.db.prepare('SELECT 1 FROM integrator_tokens WHERE token_id = ?').get(tokenId) !== undefined;
  }

  /** The revision a protected target is at, or null while nothing has landed on it. */
  targetRevision(repository: string, target: string): string | null {
    const r = this.db.prepare('SELECT revision FROM targets WHERE repository = ? AND target = ?').get(repository, target) as { revision: string } | undefined;
    return r?.revision ?? null;
  }

  /** The git commit a Change version's checkpoint recorded, if it was taken in a git work tree with a HEAD. */
  changeCommit(repository: string, changeId: string, version: number): { git_head: string; tree_matches: boolean } | undefined {
    const r = this.db.prepare('SELECT git_head, tree_matches FROM change_commits WHERE repository = ? AND change_id = ? AND change_version = ?').get(repository, changeId, version) as
      | { git_head: string; tree_matches: number }
      | undefined;
    return r && { git_head: r.git_head, tree_matches: r.tree_matches === 1 };
  }

  /** The target revision a Change version was based on; undefined when none was recorded for target. */
  changeBase(repository: string, changeId: string, version: number, target: string): { base_revision: string | null } | undefined {
    return this.db
      .prepare('SELECT base_revision FROM change_bases WHERE repository = ? AND change_id = ? AND change_version = ? AND target = ?')
      .get(repository, changeId, version, target) as { base_revision: string | null } | undefined;
  }

  recordApproval(subject: Subject, receiptDigest: string, actor: string): ApprovalRow {
    const row: ApprovalRow = {
      approval_id: `apr-${randomBytes(12).toString('hex')}`,
      repository: subject.repository,
      profile: subject.profile,
      change_id: subject.change_id,
      change_version: subject.change_version,
      policy_epoch: subject.policy_epoch,
      context_digest: subject.context_digest,
      revision: subject.revision,
      receipt_digest: receiptDigest,
      actor,
      created_at: Date.now(),
    };
    this.db
      .prepare(
        `INSERT INTO approvals (approval_id, repository, profile, change_id, change_version, policy_epoch, context_digest, revision, receipt_digest, actor, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(row.approval_id, row.repository, row.profile, row.change_id, row.change_version, row.policy_epoch, row.context_digest, row.revision, row.receipt_digest, row.actor, row.created_at);
    return row;
  }

  /** The newest approval of a Change under a profile, whatever subject it names. */
  latestApproval(repository: string, profile: string, changeId: string): ApprovalRow | undefined {
    return this.db
      .prepare('SELECT * FROM approvals WHERE repository = ? AND profile = ? AND change_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1')
      .get(repository, profile, changeId) as ApprovalRow | undefined;
  }

  /**
   * Moves the target from `from` to `to` and records the integration; false (nothing written) when the
   * target is not at `from`. Call under underWriteLock together with the checks it rests on.
   */
  integrate(input: Omit<IntegrationRow, 'integration_id' | 'created_at'>): IntegrationRow | undefined {
    if (this.targetRevision(input.repository, input.target) !== input.base_revision) return undefined;
    const row: IntegrationRow = { ...input, integration_id: `int-${randomBytes(12).toString('hex')}`, created_at: Date.now() };
    this.db
      .prepare(
        `INSERT INTO targets (repository, target, revision, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (repository, target) DO UPDATE SET revision = excluded.revision, updated_at = excluded.updated_at`,
      )
      .run(row.repository, row.target, row.revision, row.created_at);
    this.db
      .prepare(
        `INSERT INTO integrations (integration_id, repository, profile, target, change_id, change_version, policy_epoch, revision, base_revision, receipt_digest, approval_id, actor, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(row.integration_id, row.repository, row.profile, row.target, row.change_id, row.change_version, row.policy_epoch, row.revision, row.base_revision, row.receipt_digest, row.approval_id, row.actor, row.created_at);
    return row;
  }

  /**
   * The subject's tasks, derived from its installed requirement (same ids everywhere). Derivation is a
   * pure function of the subject, so results are memoized per exact subject (bounded).
   */
  tasksFor(subject: Subject): Task[] {
    const key = subjectKey(subject);
    const hit = this.taskCache.get(key);
    if (hit) return hit;
    const { requirement, plan } = this.loadRequirement(subject.requirement_digest);
    const tasks = deriveTasks(subject, requirement, plan);
    if (this.taskCache.size >= 4096) this.taskCache.clear();
    this.taskCache.set(key, tasks);
    return tasks;
  }
}

interface TokenRow {
  readonly token_hash: string;
  readonly owner_id: string;
  readonly agent_id: string;
  readonly repository: string | null;
  readonly revoked_at: number | null;
  readonly scope: TokenScope;
}

/** Rows looked up by the Hub on every request, valid while the authority is unchanged (bounded). */
class AuthorityMemo {
  dataVersion = -1;
  ownChanges = -1;
  valid = false;
  /** Counts the clears (Authority.memoGeneration). */
  generation = 0;
  readonly tokens = new Map<string, TokenRow>();
  readonly profiles = new Map<string, Profile>();
  readonly heads = new Map<string, number>();
  readonly versions = new Map<string, ChangeVersion>();
  // Absent answers are kept too ({ value: undefined }): they change only through a commit as well.
  readonly enrollments = new Map<string, { value: Enrollment | undefined }>();
  readonly registrations = new Map<string, { value: Enrollment | undefined }>();
  readonly collectorProfiles = new Map<string, { value: CollectorProfileRow | undefined }>();
  readonly activeTokens = new Map<string, { value: boolean | undefined }>();
  readonly expire = (): void => {
    this.valid = false;
  };

  put<V>(map: Map<string, V>, key: string, value: V): void {
    if (map.size >= 4096) map.clear();
    map.set(key, value);
  }

  clear(): void {
    this.generation++;
    this.tokens.clear();
    this.profiles.clear();
    this.heads.clear();
    this.versions.clear();
    this.enrollments.clear();
    this.registrations.clear();
    this.collectorProfiles.clear();
    this.activeTokens.clear();
  }
}

interface ProfileRow {
  repository: string;
  profile: string;
  target: string;
  requirement_digest: string;
  policy_epoch: number;
  publish_forge_status: number;
  updated_at: number;
}

function rowToProfile(r: ProfileRow): Profile {
  return {
    repository: r.repository,
    profile: r.profile,
    target: r.target,
    requirement_digest: r.requirement_digest,
    policy_epoch: r.policy_epoch,
    publish_forge_status: r.publish_forge_status === 1,
  };
}

function sameSubject(a: Subject, b: Subject): boolean {
  for (const k of Object.keys(a) as (keyof Subject)[]) if (a[k] !== b[k]) return false;
  return true;
}

/** Every field of a subject, for the memo tables keyed by exact subject. */
function subjectKey(s: Subject): string {
  return [s.repository, s.profile, s.target, s.change_id, s.change_version, s.revision, s.context_digest, s.policy_epoch, s.requirement_digest, s.plan_digest].join('\0');
}

function tokenHash(token: string): string {
  return domainDigest(DOMAINS.token, Buffer.from(token, 'utf8'));
}
