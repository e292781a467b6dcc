// GET /v1/hub/ready: whether this Hub can serve every profile it was started for. Unlike the health
// ping it checks, per data dir, that the authority file is still the one the Hub opened and answers,
// that the journal can take a write transaction, and, per profile, that the installed profile still
// exists with the pinned requirement (whose stored bytes must still match their digest).

import * as fs from 'node:fs';
import * as path from 'node:path';
import type Database from 'better-sqlite3';
import { openDatabase } from '../core/sqlite/open.js';
import { checkStoredRequirement } from '../core/authority/plan.js';
import { authorityPath, type Authority } from '../core/authority/store.js';
import { lstatOrUndefined } from '../core/fs/safe.js';
import { entryMismatch, type ProfileEntry } from './config.js';
import { JOURNAL_SCHEMA_VERSION, journalPath } from './journal.js';

/** What readiness looks at of one data dir's state (server.ts ReadyState). */
export interface ReadyState {
  readonly dataDir: string;
  readonly authority: Authority;
  isOpenedAuthority(st: { dev: number; ino: number }): boolean;
}

export interface ReadyReason {
  readonly code: string;
  readonly data_dir?: string;
  readonly repository?: string;
  readonly profile?: string;
}

function authorityProblem(state: ReadyState): string | undefined {
  const st = lstatOrUndefined(authorityPath(state.dataDir));
  if (!st || !state.isOpenedAuthority(st)) return 'authority_unavailable';
  try {
    state.authority.revalidate();
    if (!state.authority.ping()) return 'authority_unavailable';
    state.authority.authorityId();
  } catch {
    return 'authority_unavailable';
  }
  return undefined;
}

/** A write probe on its own connection: BEGIN IMMEDIATE then ROLLBACK (busy counts as writable). */
function journalProblem(dataDir: string): string | undefined {
  const f = journalPath(dataDir);
  if (!lstatOrUndefined(f)) {
    // Not created yet: the first mutation creates it in the data dir.
    const probe = path.join(dataDir, `.ready-probe-${process.pid}`);
    try {
      fs.writeFileSync(probe, '', { flag: 'wx', mode: 0o600 });
      fs.unlinkSync(probe);
      return undefined;
    } catch {
      return 'journal_unwritable';
    }
  }
  let db: Database.Database | undefined;
  try {
    db = openDatabase(f, { fileMustExist: true, timeout: 0 });
    if ((db.pragma('user_version', { simple: true }) as number) !== JOURNAL_SCHEMA_VERSION) return 'journal_schema_mismatch';
    db.exec('BEGIN IMMEDIATE');
    db.exec('ROLLBACK');
    return undefined;
  } catch (e) {
    return String((e as { code?: unknown }).code).startsWith('SQLITE_BUSY') ? undefined : 'journal_unwritable';
  } finally {
    db?.close();
  }
}

function profileProblem(state: ReadyState, repository: string, profile: string, entry: ProfileEntry | undefined, index: number): string | undefined {
  try {
    if (entry) {
      const m = entryMismatch(entry, index, state.authority);
      if (m) return m.code;
    }
    const p = state.authority.getProfile(repository, profile);
    if (!p) return 'profile_missing';
    // Read again, not from the per-process cache: the stored bytes must still match their digest.
    const row = state.authority.db.prepare('SELECT canonical, plan_digest FROM requirements WHERE requirement_digest = ?').get(p.requirement_digest) as
      | { canonical: Buffer; plan_digest: string }
      | undefined;
    if (!row) return 'requirement_unreadable';
    checkStoredRequirement(p.requirement_digest, row.canonical, row.plan_digest);
    return undefined;
  } catch {
    return 'requirement_unreadable';
  }
}

/** Every reason this Hub is not ready; empty when it is. */
export function readiness(states: readonly ReadyState[], entries: readonly ProfileEntry[] | undefined, draining: boolean): ReadyReason[] {
  const out: ReadyReason[] = [];
  if (draining) out.push({ code: 'draining' });
  for (const state of states) {
    const a = authorityProblem(state);
    if (a) {
      out.push({ code: a, data_dir: state.dataDir });
      continue;
    }
    const j = journalProblem(state.dataDir);
    if (j) out.push({ code: j, data_dir: state.dataDir });
    const pins = entries ? entries.map((e, i) => ({ e, i })).filter(({ e }) => e.data_dir === state.dataDir) : undefined;
    const profiles = pins
      ? pins.map(({ e, i }) => ({ repository: e.native_repository, profile: e.profile_id, entry: e as ProfileEntry | undefined, i }))
      : (state.authority.db.prepare('SELECT repository, profile FROM profiles ORDER BY repository, profile').all() as { repository: string; profile: string }[]).map((r) => ({ ...r, entry: undefined, i: -1 }));
    for (const p of profiles) {
      const code = profileProblem(state, p.repository, p.profile, p.entry, p.i);
      if (code) out.push({ code, data_dir: state.dataDir, repository: p.repository, profile: p.profile });
    }
  }
  return out;
}
