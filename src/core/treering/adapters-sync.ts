// DOX and Revolve sync: concise, source-linked memories from a project's AGENTS.md files and from
// Revolve evidence records (upstream tree-ring-memory-core dox.rs and revolve.rs, and the CLI's
// actions/adapters.rs, 0.15). Sources stay authoritative: every memory points back to its file. The
// walk never follows a symlink and refuses a symlinked root; a secret-like source is skipped whole.
// DOX memories also carry their source root's provenance (a `dox-root` link), so that a memory
// written for one project's AGENTS.md is never overwritten from another root; a legacy DOX memory
// without it is adopted only by its own project's `.tree-ring` store (a symlinked store path never
// counts as local). Every batch is written in one transaction, or not at all.

import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { conflict, notFound, badInput, type AgentscmError } from '../errors.js';
import { newEvent, validateEvent, type MemoryEvent } from './model.js';
import { detectEventSensitivity } from './sensitivity.js';
import { authorizeEventCreates, type WriteContext } from './store/policy.js';
import { openWritable, storePath, writeTransaction } from './store/schema.js';
import { getMemory, putInTransaction } from './store/write.js';

const MAX_SOURCE_BYTES = 256 * 1024;
const DOX_MAX_FILES = 128;
const DOX_MAX_SECTIONS = 8;
const REVOLVE_MAX_FILES = 256;
const SKIP_DIRS = new Set(['.git', 'target', 'node_modules', '.tree-ring']);
export const DOX_ROOT_LINK = 'dox-root';

/** 64-bit FNV-1a as 16 hex digits: upstream's `stable_id`, so that ids agree with its syncs. */
function stableId(prefix: string, value: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from(value, 'utf8')) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return `mem_${prefix}_${h.toString(16).padStart(16, '0')}`;
}

const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

function truncateChars(value: string, max: number): string {
  const chars = Array.from(value);
  return chars.length <= max ? value : `${chars.slice(0, max).join('')}...`;
}

/** Rust's `str::lines`: split on \n, a trailing \r dropped, no final empty line. */
function lines(content: string): string[] {
  const out = content.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out;
}

/** `Path::join` as displayed. */
function join(base: string, rel: string): string {
  return base === '' ? rel : base.endsWith('/') ? `${base}${rel}` : `${base}/${rel}`;
}

/** PathBuf ordering: component by component (so `a/b` sorts before `a-b`). */
function comparePaths(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return Buffer.compare(Buffer.from(x[i]!), Buffer.from(y[i]!));
  }
  return x.length - y.length;
}

interface Found {
  /** As displayed: the root as given joined with the relative path. */
  path: string;
  /** Relative to the root (empty when the root is the file itself). */
  rel: string;
}

function walkRoot(kind: 'DOX' | 'Revolve', root: string, cwd: string, maxFiles: number, accept: (name: string) => boolean): Found[] {
  const abs = path.resolve(cwd, root);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(abs);
  } catch {
    throw notFound(`${kind} root does not exist: ${root}`, 'NO_SOURCE_ROOT');
  }
  if (st.isSymbolicLink()) {
    if (!fs.existsSync(abs)) throw notFound(`${kind} root does not exist: ${root}`, 'NO_SOURCE_ROOT');
    throw badInput(`${kind} root cannot be a symlink: ${root}`, 'SYMLINK_SOURCE_ROOT');
  }
  if (st.isFile()) return accept(path.basename(abs)) ? [{ path: root, rel: '' }] : [];
  const out: Found[] = [];
  const visit = (dirAbs: string, dirShown: string, dirRel: string) => {
    if (out.length >= maxFiles) return;
    const entries = fs.readdirSync(dirAbs, { withFileTypes: true }).sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
    for (const e of entries) {
      if (out.length >= maxFiles) break;
      if (e.isSymbolicLink()) continue;
      const shown = join(dirShown, e.name);
      const rel = dirRel === '' ? e.name : `${dirRel}/${e.name}`;
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name)) visit(path.join(dirAbs, e.name), shown, rel);
      } else if (accept(e.name)) {
        out.push({ path: shown, rel });
      }
    }
  };
  visit(abs, root, '');
  return out.sort((a, b) => comparePaths(a.path, b.path));
}

/** The screened event, or 'secret' when any field is secret-like (the source is then skipped whole). */
function screen(e: MemoryEvent): MemoryEvent | 'secret' {
  try {
    const s = detectEventSensitivity(e);
    if (s !== 'normal') e.sensitivity = s;
  } catch {
    return 'secret';
  }
  validateEvent(e);
  return e;
}

// ---- DOX ----------------------------------------------------------------------------------------------

export interface DoxReport {
  root: string;
  source_count: number;
  memory_count: number;
  skipped_secret_count: number;
  warnings: string[];
  events: MemoryEvent[];
}

interface Section {
  heading: string;
  occurrence: number;
  lines: string[];
}

function extractSections(content: string, max: number): Section[] {
  const sections: Section[] = [];
  let current: Section = { heading: 'overview', occurrence: 1, lines: [] };
  let inFence = false;
  let occurrence = 1;
  const push = () => {
    if (sections.length < max && current.lines.length > 0) sections.push({ ...current, lines: [...current.lines] });
  };
  for (const line of lines(content)) {
    const t = line.trim();
    if (t.startsWith('```')) {
      inFence = !inFence;
      continue;
    }
    if (inFence) continue;
    if (t.startsWith('#')) {
      push();
      occurrence += 1;
      current = { heading: t.replace(/^#+/, '').trim(), occurrence, lines: [] };
      continue;
    }
    if (t !== '') current.lines.push(t);
  }
  push();
  return sections;
}

function summarizeLines(ls: readonly string[]): string {
  const joined = ls
    .slice(0, 4)
    .map((l) => l.trim().replace(/^[-*]+/, '').trim())
    .filter((l) => l !== '')
    .join(' ');
  return truncateChars(joined.split(/\s+/).filter(Boolean).join(' '), 180);
}

function classifySection(heading: string, snippet: string): string {
  const t = asciiLower(`${heading} ${snippet}`);
  const has = (...n: string[]) => n.some((x) => t.includes(x));
  if (has('security', 'privacy', 'secret')) return 'safety';
  if (has('test', 'verify', 'check')) return 'verification';
  if (has('build', 'run', 'install')) return 'workflow';
  if (has('owner', 'authority', 'contract')) return 'authority';
  return 'project';
}

function isDurableRule(heading: string, snippet: string): boolean {
  const t = asciiLower(`${heading} ${snippet}`);
  return ['must', 'never', 'required', 'do not', 'contract', 'authority', 'rule', 'security', 'privacy'].some((n) => t.includes(n));
}

function slugify(v: string): string {
  return Array.from(v, (c) => (/^[A-Za-z0-9]$/.test(c) ? c.toLowerCase() : '-'))
    .join('')
    .split('-')
    .filter(Boolean)
    .join('-');
}

/** The canonical directory a DOX source root names (a file root: its directory). */
function canonicalSourceDir(root: string, cwd: string): string {
  const real = fs.realpathSync(path.resolve(cwd, root));
  return fs.statSync(real).isFile() ? path.dirname(real) : real;
}

/** The provenance value of a DOX source root: a digest of its canonical directory (no path is stored). */
export function doxRootFingerprint(canonicalDir: string): string {
  return `sha256:${createHash('sha256').update('tree-ring-dox-root-v1\0').update(canonicalDir, 'utf8').digest('hex')}`;
}

function doxEvents(file: Found, abs: string, project: string | undefined, rootLink: string): MemoryEvent[] | 'secret' | string {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(abs);
  } catch (e) {
    return (e as Error).message;
  }
  if (st.isSymbolicLink()) return `Refusing symlinked AGENTS.md: ${file.path}`;
  if (st.size > MAX_SOURCE_BYTES) return `AGENTS.md exceeds ${MAX_SOURCE_BYTES} bytes: ${file.path}`;
  let content: string;
  try {
    content = fs.readFileSync(abs, 'utf8');
  } catch (e) {
    return (e as Error).message;
  }
  const out: MemoryEvent[] = [];
  for (const s of extractSections(content, DOX_MAX_SECTIONS)) {
    const snippet = summarizeLines(s.lines);
    if (snippet === '') continue;
    const category = classifySection(s.heading, snippet);
    const durable = isDurableRule(s.heading, snippet);
    const ref = `${file.rel}#${slugify(s.heading)}-${s.occurrence}`;
    const e = newEvent(`DOX ${category} guidance in ${file.rel}: ${snippet}`, durable ? 'dox_contract' : 'dox_guidance');
    e.id = stableId('dox', ref);
    e.scope = 'dox';
    e.ring = durable ? 'heartwood' : 'outer';
    e.project = project ?? null;
    e.details = `Source AGENTS.md remains authoritative. Re-read ${file.rel} before acting. Heading: ${s.heading}.`;
    e.source = { type: 'dox', ref, quote: snippet };
    e.tags = ['dox', 'agents-md', category];
    e.salience = durable ? 0.84 : 0.62;
    e.confidence = durable ? 0.88 : 0.72;
    e.retention = durable ? 'durable' : 'normal';
    e.links = [
      { type: 'dox', target: file.rel },
      { type: DOX_ROOT_LINK, target: rootLink },
    ];
    const screened = screen(e);
    if (screened === 'secret') return 'secret';
    out.push(screened);
  }
  return out;
}

/** Collects the DOX memories of `root` (a directory or an AGENTS.md file). Reads only. */
export function collectDox(root: string, cwd: string, project: string | undefined): DoxReport {
  const files = walkRoot('DOX', root, cwd, DOX_MAX_FILES, (n) => n === 'AGENTS.md');
  const rootLink = doxRootFingerprint(canonicalSourceDir(root, cwd));
  const report: DoxReport = { root, source_count: files.length, memory_count: 0, skipped_secret_count: 0, warnings: [], events: [] };
  for (const f of files) {
    const r = doxEvents(f, path.resolve(cwd, f.path), project, rootLink);
    if (r === 'secret') report.skipped_secret_count++;
    else if (typeof r === 'string') report.warnings.push(r);
    else report.events.push(...r);
  }
  report.memory_count = report.events.length;
  return report;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: AgentscmError };

/** Whether the store is the source project's own `.tree-ring` (resolved: a symlinked path is not). */
function isSourceProjectsOwnStore(storeRoot: string, sourceDir: string): boolean {
  try {
    const db = fs.realpathSync(storePath(storeRoot));
    const memoryRoot = path.dirname(db);
    return path.basename(memoryRoot) === '.tree-ring' && path.dirname(memoryRoot) === sourceDir;
  } catch {
    return false;
  }
}

/** Writes a DOX preview's events, all or none, under the provenance rules above. */
export function writeDox(storeRoot: string, report: DoxReport, cwd: string, ctx: WriteContext): void {
  const sourceDir = canonicalSourceDir(report.root, cwd);
  const db = openWritable(storeRoot);
  try {
    const allowLegacy = isSourceProjectsOwnStore(storeRoot, sourceDir);
    const outcome = writeTransaction(db, (): Outcome<null> => {
      const auth = authorizeEventCreates(db, ctx, 'dox_sync', report.events);
      if (!auth.allowed) return { ok: false, error: auth.error };
      for (const e of report.events) {
        const existing = getMemory(db, e.id);
        if (!existing) continue;
        const mine = e.links.find((l) => l.type === DOX_ROOT_LINK)?.target;
        const theirs = existing.links.find((l) => l.type === DOX_ROOT_LINK)?.target;
        if (theirs === undefined) {
          if (!allowLegacy) return { ok: false, error: conflict(`legacy DOX memory has no root provenance: ${e.id}; sync it from its own project's .tree-ring store`, 'DOX_LEGACY_PROVENANCE') };
        } else if (theirs !== mine) {
          return { ok: false, error: conflict(`DOX memory ${e.id} belongs to another DOX source root`, 'DOX_ROOT_MISMATCH') };
        }
      }
      for (const e of report.events) putInTransaction(db, e);
      return { ok: true, value: null };
    });
    if (!outcome.ok) throw outcome.error;
  } finally {
    db.close();
  }
}

export function doxJson(r: DoxReport, dryRun: boolean, eventJson: (e: MemoryEvent) => string): string {
  const q = JSON.stringify;
  return (
    `{"ok":true,"dry_run":${dryRun},"report":{"root":${q(r.root)},"source_count":${r.source_count},"memory_count":${r.memory_count},` +
    `"skipped_secret_count":${r.skipped_secret_count},"warnings":${q(r.warnings)},"events":[${r.events.map(eventJson).join(',')}]}}`
  );
}

export function doxText(r: DoxReport, dryRun: boolean): string {
  const out = [`Tree Ring Memory DOX sync: sources=${r.source_count} memories=${r.memory_count} skipped_secret=${r.skipped_secret_count} dry_run=${dryRun}`];
  for (const w of r.warnings) out.push(`warning: ${w}`);
  for (const e of r.events) out.push(`${e.id} [${e.ring}] ${e.summary} <- ${e.source.ref}`);
  out.push('Source AGENTS.md files remain authoritative; re-read them before acting.');
  return `${out.join('\n')}\n`;
}

// ---- Revolve ------------------------------------------------------------------------------------------

export interface RevolveReport {
  root: string;
  source_count: number;
  memory_count: number;
  skipped_large_count: number;
  skipped_secret_count: number;
  warnings: string[];
  events: MemoryEvent[];
}

type RevolveOutcome = 'promoted' | 'rejected' | 'deferred' | 'observed';

const OUTCOME_MAP: Record<RevolveOutcome, [ring: string, eventType: string, salience: number, confidence: number, retention: string]> = {
  promoted: ['heartwood', 'evaluation_promotion', 0.86, 0.84, 'durable'],
  rejected: ['scar', 'evaluation_rejection', 0.9, 0.78, 'durable'],
  deferred: ['seed', 'evaluation_hypothesis', 0.68, 0.6, 'normal'],
  observed: ['outer', 'evaluation_result', 0.72, 0.7, 'normal'],
};

function classifyOutcome(t: string): RevolveOutcome | undefined {
  const has = (...n: string[]) => n.some((x) => t.includes(x));
  if (has('rejected', 'rejection', 'rolled back', 'rollback', 'regression', 'failed branch')) return 'rejected';
  if (has('promoted', 'promotion', 'accepted', 'winner')) return 'promoted';
  if (has('deferred', 'future work', 'hypothesis', 'seed', 'unresolved')) return 'deferred';
  if (has('evaluation', 'result', 'score', 'checkpoint', 'run')) return 'observed';
  return undefined;
}

/** Rust's `Path::extension` test: md, txt, json or jsonl (a leading-dot name has no extension). */
function isRevolveSource(name: string): boolean {
  const i = name.lastIndexOf('.');
  return i > 0 && ['md', 'txt', 'json', 'jsonl'].includes(name.slice(i + 1));
}

function firstMeaningfulLine(content: string): string | undefined {
  for (const l of lines(content)) {
    const t = l.trim().replace(/^#+/, '').replace(/^[-*]+/, '').trim();
    if (t !== '' && Buffer.byteLength(t) > 6) return t;
  }
  return undefined;
}

export function collectRevolve(root: string, cwd: string, project: string | undefined): RevolveReport {
  const files = walkRoot('Revolve', root, cwd, REVOLVE_MAX_FILES, isRevolveSource);
  const report: RevolveReport = { root, source_count: files.length, memory_count: 0, skipped_large_count: 0, skipped_secret_count: 0, warnings: [], events: [] };
  for (const f of files) {
    const abs = path.resolve(cwd, f.path);
    let content: string;
    try {
      if (fs.statSync(abs).size > MAX_SOURCE_BYTES) {
        report.skipped_large_count++;
        continue;
      }
      content = fs.readFileSync(abs, 'utf8');
    } catch (e) {
      report.warnings.push((e as Error).message);
      continue;
    }
    const outcome = classifyOutcome(asciiLower(`${f.rel} ${content}`));
    if (!outcome) continue;
    const [ring, eventType, salience, confidence, retention] = OUTCOME_MAP[outcome];
    const line = firstMeaningfulLine(content);
    const excerpt = line !== undefined ? truncateChars(line, 180) : `Revolve ${outcome} evidence in ${f.rel}`;
    const e = newEvent(`Revolve ${outcome} evidence from ${f.rel}: ${excerpt}`, eventType);
    e.id = stableId('revolve', `${f.rel}:${eventType}`);
    e.scope = 'revolve';
    e.ring = ring;
    e.project = project ?? null;
    e.details = `Outcome: ${outcome}. Source Revolve record remains authoritative. Re-read ${f.rel} before treating this memory as current truth.`;
    e.source = { type: 'revolve', ref: f.rel, quote: '' };
    e.tags = ['revolve', 'evidence', `outcome:${outcome}`];
    e.salience = salience;
    e.confidence = confidence;
    e.retention = retention;
    e.links = [{ type: 'revolve', target: f.rel }];
    const screened = screen(e);
    if (screened === 'secret') report.skipped_secret_count++;
    else report.events.push(screened);
  }
  report.memory_count = report.events.length;
  return report;
}

export function writeRevolve(storeRoot: string, report: RevolveReport, ctx: WriteContext): void {
  const db = openWritable(storeRoot);
  try {
    const outcome = writeTransaction(db, (): Outcome<null> => {
      const auth = authorizeEventCreates(db, ctx, 'revolve_sync', report.events);
      if (!auth.allowed) return { ok: false, error: auth.error };
      for (const e of report.events) putInTransaction(db, e);
      return { ok: true, value: null };
    });
    if (!outcome.ok) throw outcome.error;
  } finally {
    db.close();
  }
}

export function revolveJson(r: RevolveReport, dryRun: boolean, eventJson: (e: MemoryEvent) => string): string {
  const q = JSON.stringify;
  return (
    `{"ok":true,"dry_run":${dryRun},"report":{"root":${q(r.root)},"source_count":${r.source_count},"memory_count":${r.memory_count},` +
    `"skipped_large_count":${r.skipped_large_count},"skipped_secret_count":${r.skipped_secret_count},"warnings":${q(r.warnings)},` +
    `"events":[${r.events.map(eventJson).join(',')}]}}`
  );
}

export function revolveText(r: RevolveReport, dryRun: boolean): string {
  const out = [`Tree Ring Memory Revolve sync: sources=${r.source_count} memories=${r.memory_count} skipped_large=${r.skipped_large_count} skipped_secret=${r.skipped_secret_count} dry_run=${dryRun}`];
  for (const w of r.warnings) out.push(`warning: ${w}`);
  for (const e of r.events) out.push(`${e.id} [${e.ring}] ${e.summary} <- ${e.source.ref}`);
  out.push('Revolve records remain authoritative; re-read evaluations before treating memory as current truth.');
  return `${out.join('\n')}\n`;
}
