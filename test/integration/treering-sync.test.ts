// `tree-ring dox sync` and `tree-ring revolve sync` (upstream 0.15 dox.rs, revolve.rs, actions/adapters.rs
// and tests/dox_path_acceptance.rs): source-linked memories, stable ids, symlinks never followed, and
// DOX root provenance that a symlinked store path cannot claim.

import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { json } from '../support/cli.js';
import { snapshot, tempProject, tr } from '../support/treering.js';

type Ev = { id: string; ring: string; event_type: string; scope: string; retention: string; project: string | null; summary: string; source: { type: string; ref: string; quote: string }; links: Array<{ type: string; target: string }>; tags: string[] };
type DoxDoc = { ok: boolean; dry_run: boolean; report: { root: string; source_count: number; memory_count: number; skipped_secret_count: number; warnings: string[]; events: Ev[] } };

function rows(db: string, sql = 'SELECT id, raw_json FROM memories ORDER BY id'): Array<{ id: string; raw_json: string }> {
  const h = new Database(db, { readonly: true });
  try {
    return h.prepare(sql).all() as Array<{ id: string; raw_json: string }>;
  } finally {
    h.close();
  }
}

/** Turns every DOX memory of a store into a legacy one (no dox-root link), as an older release wrote it. */
function stripRootProvenance(db: string): void {
  const h = new Database(db);
  h.function('tree_ring_writer_protocol', { deterministic: true }, () => 3);
  try {
    for (const r of h.prepare('SELECT id, raw_json FROM memories').all() as Array<{ id: string; raw_json: string }>) {
      const e = JSON.parse(r.raw_json) as Ev;
      e.links = e.links.filter((l) => l.type !== 'dox-root');
      h.prepare('UPDATE memories SET raw_json = ?, links_json = ? WHERE id = ?').run(JSON.stringify(e), JSON.stringify(e.links), r.id);
    }
  } finally {
    h.close();
  }
}

test('dox sync: sections become source-linked memories; dry run opens no store; re-sync updates in place', () => {
  const dir = tempProject();
  fs.writeFileSync(path.join(dir, 'AGENTS.md'), '# Rules\n- You must run cargo test before release.\n\n```\n# not a heading\n```\n# Notes\nPlain build notes.\n');
  fs.mkdirSync(path.join(dir, 'crates/core'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'crates/core/AGENTS.md'), '# Verification\nUse focused tests before full cargo test.\n');
  fs.mkdirSync(path.join(dir, 'node_modules/x'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'node_modules/x/AGENTS.md'), '# Skipped\nnever read\n');
  const outside = tempProject('tr-outside-');
  fs.writeFileSync(path.join(outside, 'AGENTS.md'), '# Outside\nYou must not import this.\n');
  fs.symlinkSync(outside, path.join(dir, 'outside-link'));
  fs.mkdirSync(path.join(dir, 'secret'));
  fs.writeFileSync(path.join(dir, 'secret/AGENTS.md'), '# Keys\nUse sk-proj-abcdefghijklmnopqrstuvwxyz1234567890 for the API.\n');

  const preview = json<DoxDoc>(tr(dir, ['--json', 'dox', 'sync', '--project', 'tree-ring', '--dry-run']));
  assert.equal(fs.existsSync(path.join(dir, '.tree-ring')), false, 'a dry run opens no store');
  assert.equal(preview.dry_run, true);
  assert.deepEqual(Object.keys(preview.report), ['root', 'source_count', 'memory_count', 'skipped_secret_count', 'warnings', 'events']);
  assert.equal(preview.report.source_count, 3, 'the symlinked directory and node_modules are not walked');
  assert.equal(preview.report.skipped_secret_count, 1);
  assert.ok(!JSON.stringify(preview).includes('sk-proj-'));
  const refs = preview.report.events.map((e) => e.source.ref);
  assert.deepEqual(refs, ['AGENTS.md#rules-2', 'AGENTS.md#notes-3', 'crates/core/AGENTS.md#verification-2']);
  const [rule, note] = preview.report.events;
  assert.equal(rule!.ring, 'heartwood');
  assert.equal(rule!.event_type, 'dox_contract');
  assert.equal(rule!.retention, 'durable');
  assert.equal(rule!.scope, 'dox');
  assert.equal(rule!.summary, 'DOX verification guidance in AGENTS.md: You must run cargo test before release.');
  assert.equal(rule!.source.quote, 'You must run cargo test before release.');
  assert.match(rule!.id, /^mem_dox_[0-9a-f]{16}$/);
  assert.equal(note!.ring, 'outer');
  assert.equal(note!.event_type, 'dox_guidance');
  assert.deepEqual(rule!.links.map((l) => l.type), ['dox', 'dox-root']);
  assert.match(rule!.links[1]!.target, /^sha256:[0-9a-f]{64}$/);

  const text = tr(dir, ['dox', 'sync', '--project', 'tree-ring']);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^Tree Ring Memory DOX sync: sources=3 memories=3 skipped_secret=1 dry_run=false\n/);
  assert.match(text.stdout, /\nSource AGENTS\.md files remain authoritative; re-read them before acting\.\n$/);
  const db = path.join(dir, '.tree-ring', 'memory.sqlite');
  assert.deepEqual(rows(db).map((r) => r.id).sort(), preview.report.events.map((e) => e.id).sort(), 'the stored ids are the preview ids');
  assert.equal(tr(dir, ['dox', 'sync', '--project', 'tree-ring']).code, 0);
  assert.equal(rows(db).length, 3, 'a re-sync updates in place');

  fs.symlinkSync(path.join(dir, 'AGENTS.md'), path.join(dir, 'link.md'));
  const r = tr(dir, ['dox', 'sync', '--source-root', 'link.md']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /DOX root cannot be a symlink: link\.md/);
  assert.match(tr(dir, ['dox', 'sync', '--source-root', 'missing']).stderr, /DOX root does not exist: missing/);
});

test('dox sync: a legacy memory is adopted only by its own project store, never through a symlinked store path', () => {
  for (const linkDirectory of [true, false]) {
    const temp = tempProject();
    const project = path.join(temp, 'project');
    fs.mkdirSync(project);
    const source = path.join(project, 'AGENTS.md');
    fs.writeFileSync(source, '# Fresh\n\nRun scoped checks.\n\n# Rules\n\nKeep project guidance.\n');
    // The other project's store holds legacy copies (no root provenance) of this project's memories.
    const otherRoot = path.join(temp, 'other-project', '.tree-ring');
    fs.mkdirSync(otherRoot, { recursive: true });
    assert.equal(tr(project, ['--root', otherRoot, 'dox', 'sync', '--source-root', source, '--project', 'p']).code, 0);
    const otherDb = path.join(otherRoot, 'memory.sqlite');
    stripRootProvenance(otherDb);
    const before = rows(otherDb);
    const alias = path.join(project, '.tree-ring');
    if (linkDirectory) {
      fs.symlinkSync(otherRoot, alias);
    } else {
      fs.mkdirSync(alias);
      fs.symlinkSync(otherDb, path.join(alias, 'memory.sqlite'));
    }
    const r = tr(project, ['--json', '--root', '.tree-ring', 'dox', 'sync', '--source-root', source, '--project', 'p']);
    assert.equal(r.code, 2, `directory link ${linkDirectory}: ${r.stdout} ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, linkDirectory ? /symlink/ : /legacy DOX memory has no root provenance/);
    assert.deepEqual(rows(otherDb), before, 'nothing of the batch is written');
    assert.ok(fs.lstatSync(linkDirectory ? alias : path.join(alias, 'memory.sqlite')).isSymbolicLink());
  }

  // In the source project's own .tree-ring the legacy record is adopted (and gains its provenance).
  const dir = tempProject();
  fs.writeFileSync(path.join(dir, 'AGENTS.md'), '# Rules\n\nKeep project guidance.\n');
  assert.equal(tr(dir, ['dox', 'sync', '--source-root', 'AGENTS.md', '--project', 'p']).code, 0);
  const db = path.join(dir, '.tree-ring', 'memory.sqlite');
  stripRootProvenance(db);
  for (let i = 0; i < 2; i++) {
    const r = tr(dir, ['dox', 'sync', '--source-root', 'AGENTS.md', '--project', 'p']);
    assert.equal(r.code, 0, r.stderr);
    const saved = rows(db);
    assert.equal(saved.length, 1);
    assert.equal((JSON.parse(saved[0]!.raw_json) as Ev).links.filter((l) => l.type === 'dox-root').length, 1);
  }
});

test('dox sync: a shared store refuses a second root whose memories would take the same ids', () => {
  const temp = tempProject();
  const shared = path.join(temp, 'shared');
  for (const [i, parent] of ['first', 'second'].entries()) {
    const root = path.join(temp, parent, 'project');
    fs.mkdirSync(root, { recursive: true });
    fs.writeFileSync(path.join(root, 'AGENTS.md'), '# Rules\n\nAlways run tests.\n');
    const before = fs.existsSync(path.join(shared, 'memory.sqlite')) ? snapshot(shared) : undefined;
    const r = tr(temp, ['--root', shared, 'dox', 'sync', '--source-root', root, '--project', 'project']);
    if (i === 0) {
      assert.equal(r.code, 0, r.stderr);
      assert.equal(tr(temp, ['--root', shared, 'dox', 'sync', '--source-root', root, '--project', 'project']).code, 0);
    } else {
      assert.equal(r.code, 2);
      assert.match(r.stderr, /another DOX source root/);
      assert.deepEqual(snapshot(shared), before);
    }
  }
  assert.equal(rows(path.join(shared, 'memory.sqlite')).length, 1);
});

test('revolve sync: outcomes map to rings; records without one, large, secret and symlinked ones are skipped', () => {
  const dir = tempProject();
  const rv = path.join(dir, 'revolve');
  fs.mkdirSync(path.join(rv, 'projects/ui/revisions/rev-001/checkpoints/win'), { recursive: true });
  fs.writeFileSync(path.join(rv, 'projects/ui/revisions/rev-001/checkpoints/win/AGENTS.md'), '# Promotion\nPromoted snapshot invalidation because it fixed stale unread state.\n');
  fs.writeFileSync(path.join(rv, 'cache-experiment.md'), '# Rejected\nRejected aggressive caching after stale multi-chat regression.\n');
  fs.writeFileSync(path.join(rv, 'timeline-ui.md'), '# Deferred\nHypothesis: a visual ring timeline may improve explainability.\n');
  fs.writeFileSync(path.join(rv, 'notes.md'), 'plain notes without outcome\n');
  fs.writeFileSync(path.join(rv, 'image.png'), 'promoted');
  fs.writeFileSync(path.join(rv, 'big.md'), `promoted ${'x'.repeat(256 * 1024)}`);
  fs.writeFileSync(path.join(rv, 'key.md'), 'Promoted with PASSWORD=hunter2hunter2\n');
  const outside = tempProject('tr-outside-');
  fs.writeFileSync(path.join(outside, 'promotion.md'), '# Promotion\nPromoted external branch.\n');
  fs.symlinkSync(outside, path.join(rv, 'outside-link'));

  const doc = json<{ ok: boolean; dry_run: boolean; report: Record<string, any> }>(tr(dir, ['revolve', 'sync', '--project', 'ui', '--dry-run', '--json']));
  assert.equal(fs.existsSync(path.join(dir, '.tree-ring')), false);
  assert.deepEqual(Object.keys(doc.report), ['root', 'source_count', 'memory_count', 'skipped_large_count', 'skipped_secret_count', 'warnings', 'events']);
  assert.equal(doc.report.root, 'revolve');
  assert.equal(doc.report.source_count, 6);
  assert.equal(doc.report.skipped_large_count, 1);
  assert.equal(doc.report.skipped_secret_count, 1);
  const byRef = Object.fromEntries((doc.report.events as Ev[]).map((e) => [e.source.ref, e]));
  assert.deepEqual(Object.keys(byRef).sort(), ['cache-experiment.md', 'projects/ui/revisions/rev-001/checkpoints/win/AGENTS.md', 'timeline-ui.md']);
  assert.equal(byRef['cache-experiment.md']!.ring, 'scar');
  assert.equal(byRef['cache-experiment.md']!.event_type, 'evaluation_rejection');
  assert.ok(byRef['cache-experiment.md']!.tags.includes('outcome:rejected'));
  assert.equal(byRef['timeline-ui.md']!.ring, 'seed');
  const win = byRef['projects/ui/revisions/rev-001/checkpoints/win/AGENTS.md']!;
  assert.equal(win.ring, 'heartwood');
  assert.equal(win.retention, 'durable');
  assert.equal(win.scope, 'revolve');
  assert.equal(win.summary, 'Revolve promoted evidence from projects/ui/revisions/rev-001/checkpoints/win/AGENTS.md: Promotion');
  assert.match(win.id, /^mem_revolve_[0-9a-f]{16}$/);

  const text = tr(dir, ['revolve', 'sync', '--project', 'ui']);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^Tree Ring Memory Revolve sync: sources=6 memories=3 skipped_large=1 skipped_secret=1 dry_run=false\n/);
  assert.match(text.stdout, /\nRevolve records remain authoritative; re-read evaluations before treating memory as current truth\.\n$/);
  assert.equal(tr(dir, ['revolve', 'sync', '--project', 'ui']).code, 0);
  assert.equal(rows(path.join(dir, '.tree-ring', 'memory.sqlite')).length, 3);
  fs.symlinkSync(rv, path.join(dir, 'rv-link'));
  assert.match(tr(dir, ['revolve', 'sync', '--source-root', 'rv-link']).stderr, /Revolve root cannot be a symlink: rv-link/);
});
