// Fills a Tree Ring store with synthetic memories for the hook benchmark: deterministic, most of them
// in the benchmarked project (shared and agent scopes, every ring), a share in other projects, some
// sensitive or superseded, so the session query filters as it would in a real store.

import { newEvent, type MemoryEvent } from '../src/core/treering/model.js';
import { openWritable, writeTransaction } from '../src/core/treering/store/schema.js';
import { putInTransaction } from '../src/core/treering/store/write.js';

const WORDS = ['release', 'migration', 'schema', 'login', 'flaky', 'test', 'deploy', 'cache', 'index', 'retry', 'token', 'parser', 'bundle', 'hook', 'queue', 'lock', 'timeout', 'review', 'docs', 'build'];
const RINGS = ['cambium', 'outer', 'inner', 'heartwood', 'scar', 'seed'] as const;
const SCOPES = ['project', 'project', 'project', 'agent', 'workflow', 'session', 'global'] as const;

/** mulberry32: a small deterministic PRNG, so generated stores and query sets are reproducible. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function populateStore(memoryRoot: string, project: string, count: number): number {
  const r = rng(11);
  const text = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
  const db = openWritable(memoryRoot);
  const base = Date.now() - 300 * 86_400_000;
  try {
    for (let done = 0; done < count; ) {
      writeTransaction(db, () => {
        for (let i = 0; i < 2000 && done < count; i++, done++) {
          const e: MemoryEvent = newEvent(`${text(6 + Math.floor(r() * 8))} ${done}.`, 'lesson');
          e.id = `mem_bench_${String(done).padStart(6, '0')}`;
          e.created_at = e.updated_at = new Date(base + Math.floor(r() * 300 * 86_400_000)).toISOString().replace('Z', '000Z');
          e.project = r() < 0.8 ? project : `other-${Math.floor(r() * 5)}`;
          e.scope = SCOPES[Math.floor(r() * SCOPES.length)]!;
          e.agent_profile = r() < 0.5 ? 'claude-code' : `agent-${Math.floor(r() * 10)}`;
          e.workflow_id = `wf-${Math.floor(r() * 50)}`;
          e.session_id = `s-${Math.floor(r() * 500)}`;
          e.ring = RINGS[Math.floor(r() * RINGS.length)]!;
          e.salience = Math.round(r() * 100) / 100;
          e.confidence = Math.round(r() * 100) / 100;
          e.source = { type: 'agent', ref: `docs/notes-${done % 100}.md`, quote: '' };
          if (r() < 0.05) e.sensitivity = 'health';
          if (r() < 0.03) e.superseded_by = 'mem_bench_000000';
          putInTransaction(db, e);
        }
      });
    }
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  return count;
}
