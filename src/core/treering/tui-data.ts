// What the terminal console shows: ring counts, the newest memories and recall results, read from
// the store read-only (a missing store is shown as such and never created; only normal-sensitivity,
// live memories appear, as in default recall).

import * as fs from 'node:fs';
import { RINGS } from './model.js';
import { recall } from './recall.js';
import { openReadOnly, storePath, userVersion, SQLITE_SCHEMA_VERSION } from './store/schema.js';

export interface TuiMemory {
  id: string;
  ring: string;
  scope: string;
  event_type: string;
  project: string | null;
  created_at: string;
  summary: string;
}

export interface TuiSnapshot {
  initialized: boolean;
  total: number;
  rings: Record<string, number>;
  recent: TuiMemory[];
}

const clean = (s: string) => s.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ');

function emptyRings(): Record<string, number> {
  return Object.fromEntries(RINGS.map((r) => [r, 0]));
}

export function loadSnapshot(root: string, limit = 200): TuiSnapshot {
  if (!fs.existsSync(storePath(root))) return { initialized: false, total: 0, rings: emptyRings(), recent: [] };
  const db = openReadOnly(root);
  try {
    const rings = emptyRings();
    let total = 0;
    for (const r of db.prepare("SELECT ring, count(*) AS n FROM memories WHERE sensitivity = 'normal' AND superseded_by IS NULL GROUP BY ring").all() as Array<{ ring: string; n: number }>) {
      rings[r.ring] = r.n;
      total += r.n;
    }
    const recent = (
      db
        .prepare("SELECT id, ring, scope, event_type, project, created_at, summary FROM memories WHERE sensitivity = 'normal' AND superseded_by IS NULL ORDER BY created_at DESC LIMIT ?")
        .all(limit) as TuiMemory[]
    ).map((m) => ({ ...m, summary: clean(m.summary) }));
    return { initialized: true, total, rings, recent };
  } finally {
    db.close();
  }
}

/** Ranked recall as `tree-ring recall` ranks it; a store older than schema 3 is not searched (no migration). */
export function searchStore(root: string, query: string, limit = 20): TuiMemory[] {
  if (!fs.existsSync(storePath(root))) return [];
  const db = openReadOnly(root);
  try {
    if (userVersion(db) < SQLITE_SCHEMA_VERSION) return [];
    return recall(db, query, { limit }).map(({ memory: m }) => ({ id: m.id, ring: m.ring, scope: m.scope, event_type: m.event_type, project: m.project, created_at: m.created_at, summary: clean(m.summary) }));
  } finally {
    db.close();
  }
}
