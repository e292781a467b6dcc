// Helpers for Tree Ring tests: temp projects, a store built with the upstream CLI's own DDL (copied
// from its source as data, to check that our reader and writer agree with it), and file snapshots.

import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { treeRing, type RunOptions, type RunResult } from './cli.js';

export function tempProject(prefix = 'tr-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Runs `tree-ring ARGS` in dir with a clean identity environment plus `env`. */
export function tr(dir: string, args: readonly string[], env: Record<string, string | undefined> = {}, opts: RunOptions = {}): RunResult {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('TREE_RING_')) delete base[k];
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete base[k];
    else base[k] = v;
  }
  return treeRing(args, { ...opts, cwd: dir, env: base });
}

/** sha256 of every regular file under dir, by relative path (what a byte-level snapshot compares). */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = path.join(e.parentPath, e.name);
    out[path.relative(dir, p)] = createHash('sha256').update(fs.readFileSync(p)).digest('hex');
  }
  return out;
}

/** Every file under dir, concatenated (for "the capability appears nowhere" greps). */
export function allBytes(dir: string): Buffer {
  const parts: Buffer[] = [];
  for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) if (e.isFile()) parts.push(fs.readFileSync(path.join(e.parentPath, e.name)));
  return Buffer.concat(parts);
}

// The upstream CLI's schema-3 DDL (crates/tree-ring-memory-sqlite: migrate() and the policy schema),
// reproduced as data. Triggers are not part of it: upstream's exact trigger text is not public in the
// reference we used, and triggers do not change what readers see.
export const UPSTREAM_V3_DDL = `
CREATE TABLE IF NOT EXISTS memories (
  id TEXT PRIMARY KEY, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, project TEXT, agent_profile TEXT,
  workflow_id TEXT, session_id TEXT, operation_id TEXT, scope TEXT NOT NULL, ring TEXT NOT NULL,
  event_type TEXT NOT NULL, summary TEXT NOT NULL, details TEXT NOT NULL, source_json TEXT NOT NULL,
  tags_json TEXT NOT NULL, salience REAL NOT NULL, confidence REAL NOT NULL, sensitivity TEXT NOT NULL,
  retention TEXT NOT NULL, expires_at TEXT, supersedes_json TEXT NOT NULL, superseded_by TEXT,
  links_json TEXT NOT NULL, review_json TEXT NOT NULL, raw_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS operation_claims (
  namespace_hash BLOB PRIMARY KEY NOT NULL CHECK(length(namespace_hash) = 32), memory_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS redaction_tombstones (memory_id TEXT PRIMARY KEY NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(id UNINDEXED, summary, details, tags, source_ref);
CREATE TABLE IF NOT EXISTS consolidations (
  id TEXT PRIMARY KEY, created_at TEXT NOT NULL, period_type TEXT NOT NULL, period_key TEXT NOT NULL,
  source_memory_ids_json TEXT NOT NULL, output_memory_ids_json TEXT NOT NULL, status TEXT NOT NULL, notes TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_memories_project ON memories(project);
CREATE INDEX IF NOT EXISTS idx_memories_agent_profile ON memories(agent_profile);
CREATE INDEX IF NOT EXISTS idx_memories_workflow_id ON memories(workflow_id);
CREATE INDEX IF NOT EXISTS idx_memories_session_id ON memories(session_id);
CREATE UNIQUE INDEX IF NOT EXISTS idx_memories_operation_namespace ON memories(
  COALESCE(project, ''), COALESCE(workflow_id, ''), COALESCE(agent_profile, ''), operation_id
) WHERE operation_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_operation_claims_memory_id ON operation_claims(memory_id);
CREATE TABLE IF NOT EXISTS store_policy (
  id INTEGER PRIMARY KEY NOT NULL CHECK(id = 1), mode TEXT NOT NULL CHECK(mode IN ('open', 'coordinated')),
  capability_hash BLOB CHECK(capability_hash IS NULL OR length(capability_hash) = 32),
  coordinator_label TEXT, enabled_at TEXT, updated_at TEXT NOT NULL,
  CHECK((mode = 'open' AND capability_hash IS NULL) OR (mode = 'coordinated' AND capability_hash IS NOT NULL))
);
CREATE TABLE IF NOT EXISTS authorization_audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT, created_at TEXT NOT NULL, action TEXT NOT NULL,
  decision TEXT NOT NULL CHECK(decision IN ('allowed', 'denied')), reason TEXT NOT NULL, actor_profile TEXT,
  origin TEXT NOT NULL, target_memory_id TEXT
);
CREATE INDEX IF NOT EXISTS idx_authorization_audit_created_at ON authorization_audit(created_at DESC, id DESC);
INSERT OR IGNORE INTO store_policy (id, mode, capability_hash, coordinator_label, enabled_at, updated_at)
  VALUES (1, 'open', NULL, NULL, NULL, '2026-01-01T00:00:00.000000Z');
PRAGMA user_version = 3;
`;

/** An event as upstream's serde writes it (field order, nulls, 1.0-style floats). */
export function upstreamRawJson(o: {
  id: string;
  created_at: string;
  project: string | null;
  agent_profile?: string | null;
  workflow_id?: string | null;
  session_id?: string | null;
  operation_id?: string | null;
  scope: string;
  ring: string;
  event_type: string;
  summary: string;
  details?: string;
  source_type?: string;
  source_ref?: string;
  tags?: string[];
  salience: string;
  confidence: string;
  sensitivity?: string;
}): string {
  const s = JSON.stringify;
  const n = (v: string | null | undefined) => (v === null || v === undefined ? 'null' : s(v));
  return (
    `{"id":${s(o.id)},"created_at":${s(o.created_at)},"updated_at":${s(o.created_at)},"project":${n(o.project)},` +
    `"agent_profile":${n(o.agent_profile)},"workflow_id":${n(o.workflow_id)},"session_id":${n(o.session_id)},"operation_id":${n(o.operation_id)},` +
    `"scope":${s(o.scope)},"ring":${s(o.ring)},"event_type":${s(o.event_type)},"summary":${s(o.summary)},"details":${s(o.details ?? '')},` +
    `"source":{"type":${s(o.source_type ?? 'manual')},"ref":${s(o.source_ref ?? '')},"quote":""},"tags":${s(o.tags ?? [])},` +
    `"salience":${o.salience},"confidence":${o.confidence},"sensitivity":${s(o.sensitivity ?? 'normal')},"retention":"normal",` +
    `"expires_at":null,"supersedes":[],"superseded_by":null,"links":[],"review":{"needs_review":false,"review_reason":null,"reviewed_at":null,"reviewed_by":null}}`
  );
}

/** Inserts a row the way upstream's writer does (columns + FTS), on a connection it opened itself. */
export function insertUpstreamRow(db: Database.Database, raw: string): void {
  const e = JSON.parse(raw) as Record<string, any>;
  db.prepare(
    `INSERT INTO memories (id, created_at, updated_at, project, agent_profile, workflow_id, session_id, operation_id, scope, ring, event_type, summary, details,
      source_json, tags_json, salience, confidence, sensitivity, retention, expires_at, supersedes_json, superseded_by, links_json, review_json, raw_json)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    e.id, e.created_at, e.updated_at, e.project, e.agent_profile, e.workflow_id, e.session_id, e.operation_id, e.scope, e.ring, e.event_type,
    e.summary, e.details, JSON.stringify(e.source), JSON.stringify(e.tags), e.salience, e.confidence, e.sensitivity, e.retention, e.expires_at,
    JSON.stringify(e.supersedes), e.superseded_by, JSON.stringify(e.links), JSON.stringify(e.review), raw,
  );
  db.prepare('INSERT INTO memory_fts (id, summary, details, tags, source_ref) VALUES (?, ?, ?, ?, ?)').run(e.id, e.summary, e.details, (e.tags as string[]).join(' '), e.source.ref);
}

/** Builds `<root>/memory.sqlite` with the upstream DDL; returns the opened connection (caller closes). */
export function buildUpstreamStore(root: string): Database.Database {
  fs.mkdirSync(root, { recursive: true });
  const db = new Database(path.join(root, 'memory.sqlite'));
  db.function('tree_ring_writer_protocol', { deterministic: true }, () => 3);
  db.pragma('journal_mode = WAL');
  db.exec(UPSTREAM_V3_DDL);
  return db;
}
