// The Stop hooks' read of the authority: a Change's current subject, from one consistent snapshot of
// authority.sqlite, opened read-only (src/core/sqlite/read-only.ts: no migration, no journal-mode
// change, nothing written). Same rows and the same checks as Authority.currentSubject in store.ts.

import * as path from 'node:path';
import { localState, notFound } from '../errors.js';
import { assertPrivateDir, checkStoreFile, lstatOrUndefined } from '../fs/safe.js';
import type { Database } from '../sqlite/open.js';
import { readSqlite } from '../sqlite/read-only.js';
import { checkStoredRequirement } from './plan.js';
import type { Subject } from './types.js';

import { AUTHORITY_FILE, AUTHORITY_READABLE_VERSIONS, AUTHORITY_SCHEMA_VERSION } from './files.js';

export { AUTHORITY_FILE, AUTHORITY_SCHEMA_VERSION };

type Row = Readonly<Record<string, unknown>>;

const corrupt = (what: string) => localState(`authority row of unexpected type: ${what}`, 'STORE_CORRUPT');

function text(r: Row, k: string): string {
  const v = r[k];
  if (typeof v !== 'string') throw corrupt(k);
  return v;
}

function int(r: Row, k: string): number {
  const v = r[k];
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw corrupt(k);
  return v;
}

// A Stop hook reads the subject twice (before and after its Hub call), normally from the same
// requirement row: the recheck of byte-identical inputs has the same outcome, so it runs once.
let lastChecked: { digest: string; canonical: Buffer; stored: string; planDigest: string } | undefined;

function checkedPlanDigest(digest: string, canonical: Buffer, stored: string): string {
  const c = lastChecked;
  if (c && c.digest === digest && c.stored === stored && c.canonical.equals(canonical)) return c.planDigest;
  const { plan_digest } = checkStoredRequirement(digest, canonical, stored);
  lastChecked = { digest, canonical: Buffer.from(canonical), stored, planDigest: plan_digest };
  return plan_digest;
}

function subjectIn(db: Database, repository: string, profile: string, changeId: string): UncheckedSubject {
  if (!AUTHORITY_READABLE_VERSIONS.includes(db.pragma('user_version', { simple: true }) as number)) throw localState('the authority schema is not current', 'SCHEMA_NOT_CURRENT');
  const get = (sql: string, ...args: unknown[]) => db.prepare(sql).get(...args) as Row | undefined;
  const p = get('SELECT repository, profile, target, requirement_digest, policy_epoch FROM profiles WHERE repository = ? AND profile = ?', repository, profile);
  if (!p) throw notFound(`no agent-task profile ${profile} for repository ${repository}`, 'PROFILE_NOT_FOUND');
  const cur = get('SELECT current_version FROM changes WHERE repository = ? AND change_id = ?', repository, changeId);
  if (!cur) throw notFound(`no Change ${changeId} in ${repository} (run \`agentscm checkpoint\` first)`, 'CHANGE_NOT_FOUND');
  const cv = get('SELECT change_id, change_version, revision, context_digest FROM change_versions WHERE repository = ? AND change_id = ? AND change_version = ?', repository, changeId, int(cur, 'current_version'));
  // The Change's current version names a version row that is not there.
  if (!cv) throw corrupt('current_version');
  const digest = text(p, 'requirement_digest');
  const req = get('SELECT canonical, plan_digest FROM requirements WHERE requirement_digest = ?', digest);
  if (!req) throw localState(`installed requirement ${digest} is missing`, 'STORE_CORRUPT');
  const canonical = req.canonical;
  if (!Buffer.isBuffer(canonical)) throw corrupt('canonical');
  const plan_digest = text(req, 'plan_digest');
  const subject: Subject = {
    repository: text(p, 'repository'),
    profile: text(p, 'profile'),
    target: text(p, 'target'),
    change_id: text(cv, 'change_id'),
    change_version: int(cv, 'change_version'),
    revision: text(cv, 'revision'),
    context_digest: text(cv, 'context_digest'),
    policy_epoch: int(p, 'policy_epoch'),
    requirement_digest: digest,
    plan_digest,
  };
  return { subject, check: () => void checkedPlanDigest(digest, canonical, plan_digest) };
}

/**
 * The current subject of a Change under a profile, read-only: the data dir must be an existing
 * owner-private directory holding the authority (nothing is created), at the current schema. Its plan
 * digest is the stored one; check() verifies that the installed requirement's bytes give that digest
 * and that plan (checkStoredRequirement: it throws STORE_CORRUPT otherwise). The subject may be used
 * only once check() has passed; the Stop hook runs the check while its request is with the Hub, since
 * nothing in the request waits for it.
 */
export interface UncheckedSubject {
  readonly subject: Subject;
  check(): void;
}

export function readCurrentSubjectUnchecked(dataDir: string, repository: string, profile: string, changeId: string): UncheckedSubject {
  assertPrivateDir(dataDir, 'data dir');
  const file = path.join(dataDir, AUTHORITY_FILE);
  const st = checkStoreFile(file, lstatOrUndefined(file), 'the authority database');
  if (!st) throw localState('the data dir has no authority (run `agentscm authority init --data-dir DIR`)', 'NO_AUTHORITY');
  return readSqlite(file, (db) => subjectIn(db, repository, profile, changeId));
}
