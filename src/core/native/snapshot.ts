// The native snapshot store: immutable, content-addressed snapshots of a workspace. A revision is the
// domain-separated SHA-256 root over the canonical manifest (paths, modes, sizes, content digests).
//
//   DATA_DIR/snapshots/blobs/<aa>/<sha256>        file contents (sha256 = plain SHA-256 of the bytes)
//   DATA_DIR/snapshots/packs/<id>.pack            the same contents, one pack per checkpoint: what makes them durable
//   DATA_DIR/snapshots/manifests/<revision>.json  canonical manifest; its digest is the revision
//
// A checkpoint writes each new blob without an fsync of its own and appends the bytes it read to one
// pack, which it fsyncs once (with its directory) before the manifest is published: after a crash a
// loose blob may be missing or torn, and readBlob then finds its bytes in a pack. The stat cache
// (encodeStatCache) records what each regular file's lstat was when its digest was taken, so that
// later scans read and hash only the files whose stat changed, as git's index does.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { canonicalJsonBytes, type JsonValue } from '../canonical/json.js';
import { compareUtf8 } from '../canonical/json.js';
import { DOMAINS, domainDigest, HEX64, sha256Hex } from '../crypto/digest.js';
import * as crypto from 'node:crypto';
import { badInput, localState } from '../errors.js';
import { randomBytes } from '../crypto/random.js';
import { ensurePrivateDir, fsyncDir, lstatOrUndefined, publishCreateOnly, writeNewFile } from '../fs/safe.js';

// child_process is loaded only for git work trees: the Stop hooks scan on every stop, most often
// without git, and loading it costs them start-up time. (getBuiltinModule, not createRequire: the Stop
// hook bundle is CommonJS, where import.meta is empty.)
const execFileSync = ((...args: Parameters<typeof import('node:child_process').execFileSync>) =>
  process.getBuiltinModule('node:child_process').execFileSync(...args)) as typeof import('node:child_process').execFileSync;

export const MODE_FILE = 0o100644;
export const MODE_EXEC = 0o100755;
export const MODE_SYMLINK = 0o120000;
/** Bound on one snapshot: file count and total bytes (a workspace is a source tree, not a data set). */
export const MAX_SNAPSHOT_FILES = 100_000;
export const MAX_SNAPSHOT_BYTES = 2 * 1024 * 1024 * 1024;

export interface ManifestEntry {
  readonly path: string;
  /** 100644, 100755 or 120000 (a symlink whose target stays inside the workspace), as octal numbers. */
  readonly mode: number;
  readonly size: number;
  readonly sha256: string;
}

export interface Manifest {
  readonly version: 1;
  readonly entries: readonly ManifestEntry[];
}

export function manifestBytes(m: Manifest): Buffer {
  const doc: JsonValue = { version: 1, entries: m.entries.map((e) => ({ path: e.path, mode: e.mode, size: e.size, sha256: e.sha256 })) };
  return canonicalJsonBytes(doc);
}

export function revisionOf(m: Manifest): string {
  return domainDigest(DOMAINS.snapshot, manifestBytes(m));
}

/** A listed workspace file and its lstat, taken once. */
export interface ListedFile {
  readonly path: string;
  readonly st: fs.Stats;
}

/**
 * Tool state that lives in a workspace but is never its content, so no snapshot takes it (and the Stop
 * hook, which lists the workspace the same way, never sees it change): the Tree Ring store at its
 * default root with its SQLite sidecars, Tree Ring's activation receipts and runtime files, and the
 * data dir (snapshots, journal, workspace state) when it lies inside the workspace. Writing memory or
 * a receipt, or a checkpoint writing its own state, therefore never makes the workspace dirty.
 */
export const TOOL_STATE_FILES: readonly string[] = ['memory.sqlite', 'memory.sqlite-wal', 'memory.sqlite-shm', 'memory.sqlite-journal'].map((f) => `.tree-ring/${f}`);
export const TOOL_STATE_DIRS: readonly string[] = ['.tree-ring/activation/receipts', '.tree-ring/activation/runtime'];

/** The workspace-relative prefixes of the directories in `dirs` that lie inside root. */
function excludedDirsOf(root: string, dirs: readonly string[]): string[] {
  const out = [...TOOL_STATE_DIRS];
  for (const d of dirs) {
    let real: string;
    try {
      real = fs.realpathSync(d);
    } catch {
      continue;
    }
    const rel = path.relative(root, real);
    if (rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)) out.push(rel.split(path.sep).join('/'));
    // A workspace inside the data dir (or the data dir itself) is refused elsewhere; nothing to exclude.
  }
  return out;
}

function isToolState(rel: string, dirs: readonly string[]): boolean {
  return TOOL_STATE_FILES.includes(rel) || dirs.some((d) => rel === d || rel.startsWith(`${d}/`));
}

/**
 * The workspace's file set: in a git work tree, what `git ls-files -co --exclude-standard` lists
 * (tracked and untracked-but-not-ignored files that exist); otherwise every regular file and symlink
 * under root; in both cases without tool state (TOOL_STATE_FILES, TOOL_STATE_DIRS, `stateDirs`).
 * Paths are relative, "/"-separated, sorted by UTF-8 bytes; each file is lstat'ed once.
 */
export function listWorkspace(root: string, stateDirs: readonly string[] = []): ListedFile[] {
  const st = lstatOrUndefined(root);
  if (!st || !st.isDirectory()) throw badInput(`workspace ${root} is not a directory`, 'BAD_WORKSPACE');
  const out: ListedFile[] = [];
  const excluded = excludedDirsOf(root, stateDirs);
  if (isGitWorkTreeRoot(root)) {
    const listed = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: root, maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
    const seen = new Set<string>();
    for (const p of listed.toString('utf8').split('\0')) {
      if (p === '' || seen.has(p) || isToolState(p, excluded)) continue;
      seen.add(p);
      const s = lstatOrUndefined(path.join(root, p));
      // Deleted tracked files and submodules are not content.
      if (s !== undefined && !s.isDirectory()) out.push({ path: p, st: s });
      if (out.length > MAX_SNAPSHOT_FILES) throw badInput(`workspace has more than ${MAX_SNAPSHOT_FILES} files`, 'WORKSPACE_TOO_LARGE');
    }
  } else {
    walk(root, '', out, excluded);
  }
  // git lists in its index's byte order, which is this one: the sort then only confirms it.
  return out.sort((a, b) => compareUtf8(a.path, b.path));
}

/** The paths of listWorkspace. */
export function listWorkspaceFiles(root: string, stateDirs: readonly string[] = []): string[] {
  return listWorkspace(root, stateDirs).map((f) => f.path);
}

// Whether a directory is a work tree's top level, asked of git once per directory and process: the
// Stop hook lists the workspace twice, and each git process costs it a start.
const gitTopLevel = new Map<string, boolean>();

export function isGitWorkTreeRoot(root: string): boolean {
  if (!lstatOrUndefined(path.join(root, '.git'))) return false;
  const known = gitTopLevel.get(root);
  if (known !== undefined) return known;
  let top: boolean;
  try {
    const out = execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] }).toString('utf8').trim();
    top = fs.realpathSync(out) === fs.realpathSync(root);
  } catch {
    top = false;
  }
  gitTopLevel.set(root, top);
  return top;
}

function walk(root: string, rel: string, out: ListedFile[], excluded: readonly string[]): void {
  for (const d of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const p = rel === '' ? d.name : `${rel}/${d.name}`;
    if (isToolState(p, excluded)) continue;
    if (d.isDirectory()) walk(root, p, out, excluded);
    else if (d.isFile() || d.isSymbolicLink()) {
      const s = lstatOrUndefined(path.join(root, p));
      if (s === undefined) throw badInput('a workspace file was removed during the scan; retry', 'WORKSPACE_CHANGED');
      out.push({ path: p, st: s });
    } else throw badInput(`workspace entry ${p} is not a regular file, directory or symlink`, 'BAD_WORKSPACE');
    if (out.length > MAX_SNAPSHOT_FILES) throw badInput(`workspace has more than ${MAX_SNAPSHOT_FILES} files`, 'WORKSPACE_TOO_LARGE');
  }
}

/** A symlink is kept (as its target text) only when the target stays inside the workspace. */
function checkedLinkTarget(root: string, rel: string): string {
  const target = fs.readlinkSync(path.join(root, rel));
  if (resolveInside(root, rel.split('/').slice(0, -1), target, { hops: 0 }) === undefined) {
    throw badInput(`workspace symlink ${rel} points outside the workspace (or loops); refusing it`, 'SYMLINK_ESCAPES');
  }
  return target;
}

/**
 * Where a link target leads from the directory `base` (components under root), walked a component at a
 * time as the kernel would: a symlink met on the way is followed (at most 40 in all), so `d/../..` with
 * `d` itself a link to `..` is seen to leave. Components that do not exist are taken as written.
 * Undefined when the walk leaves root, or loops.
 */
function resolveInside(root: string, base: readonly string[], target: string, seen: { hops: number }): string[] | undefined {
  if (target.startsWith('/')) return undefined;
  let parts = [...base];
  for (const c of target.split('/')) {
    if (c === '' || c === '.') continue;
    if (c === '..') {
      if (parts.length === 0) return undefined;
      parts.pop();
      continue;
    }
    parts.push(c);
    const st = lstatOrUndefined(path.join(root, ...parts));
    if (st?.isSymbolicLink()) {
      if (++seen.hops > 40) return undefined;
      const next = resolveInside(root, parts.slice(0, -1), fs.readlinkSync(path.join(root, ...parts)), seen);
      if (next === undefined) return undefined;
      parts = next;
    }
  }
  return parts;
}

/** A workspace file that disappeared between listing and reading: the workspace changed meanwhile. */
function vanished(e: unknown): unknown {
  const code = (e as { code?: unknown } | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR' ? badInput('a workspace file was removed during the checkpoint; retry', 'WORKSPACE_CHANGED') : e;
}


// ---------------------------------------------------------------------------------------------------
// The stat cache: what a checkpoint saw of each regular file.

/** The parts of an lstat that change when a file is written, replaced, or has its mode changed (git's index keeps the same). */
export interface StatKey {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly ino: number;
  /** st_mode: file type and permission bits. */
  readonly mode: number;
}

/** A regular file's manifest entry with the lstat taken before its bytes were read. */
export interface CachedEntry extends ManifestEntry {
  readonly stat: StatKey;
}

/** A decoded stat cache: the snapshot its entries belong to, and when the scan that took them began. */
export interface StatCache {
  readonly revision: string;
  readonly scannedAtMs: number;
  /** Regular files only, by path (symlinks are read again on every scan: their check needs the tree). */
  readonly entries: ReadonlyMap<string, CachedEntry>;
  /** How many manifest entries the snapshot has (symlinks included). */
  readonly manifestEntries: number;
}

/**
 * How close to the start of the checkpoint's scan a file's mtime or ctime may be for its cached stat
 * to be trusted. A file written again in the same timestamp tick as the stat was taken keeps its
 * stat ("racily clean", in git's words), so such entries are hashed again, as git does with an entry
 * whose mtime is not older than its index. The margin covers file systems that keep whole seconds
 * (FAT even two) and the kernel's coarse clock, which may lag the process's clock by a tick.
 */
export const RACY_MARGIN_MS = 2000;

/**
 * Whether a cached entry still describes the file: the same size, mtime, ctime, inode and mode, and
 * not racily clean against the cache's scan start.
 */
export function statClean(c: StatKey, st: fs.Stats, scannedAtMs: number): boolean {
  return (
    c.size === st.size &&
    c.mtimeMs === st.mtimeMs &&
    c.ctimeMs === st.ctimeMs &&
    c.ino === st.ino &&
    c.mode === st.mode &&
    Math.max(st.mtimeMs, st.ctimeMs) < scannedAtMs - RACY_MARGIN_MS
  );
}

const CACHE_MAGIC = 0x31435341; // "ASC1", little-endian
const ENTRY_FIXED = 4 + 4 + 8 * 4 + 32;

/**
 * Encodes cache entries (little-endian u32 and f64): magic, the snapshot's manifest entry count, the
 * cache's entry count, then per entry path length, path, st_mode, size, mtime, ctime, inode, digest.
 */
export function encodeStatCache(entries: readonly CachedEntry[], manifestEntries: number): Buffer {
  const paths = entries.map((e) => Buffer.from(e.path, 'utf8'));
  const out = Buffer.allocUnsafe(12 + paths.reduce((n, p) => n + p.length + ENTRY_FIXED, 0));
  out.writeUInt32LE(CACHE_MAGIC, 0);
  out.writeUInt32LE(manifestEntries, 4);
  out.writeUInt32LE(entries.length, 8);
  let o = 12;
  entries.forEach((e, i) => {
    const p = paths[i]!;
    o = out.writeUInt32LE(p.length, o);
    o += p.copy(out, o);
    o = out.writeUInt32LE(e.stat.mode >>> 0, o);
    o = out.writeDoubleLE(e.stat.size, o);
    o = out.writeDoubleLE(e.stat.mtimeMs, o);
    o = out.writeDoubleLE(e.stat.ctimeMs, o);
    o = out.writeDoubleLE(e.stat.ino, o);
    o += out.write(e.sha256, o, 32, 'hex');
  });
  return out;
}

/** Decodes encodeStatCache's bytes; STORE_CORRUPT when they are not such bytes. */
export function decodeStatCache(revision: string, scannedAtMs: number, b: Buffer): StatCache {
  const corrupt = () => localState('workspace stat cache is malformed', 'STORE_CORRUPT');
  if (b.length < 12 || b.readUInt32LE(0) !== CACHE_MAGIC) throw corrupt();
  const manifestEntries = b.readUInt32LE(4);
  const count = b.readUInt32LE(8);
  if (count > manifestEntries || manifestEntries > MAX_SNAPSHOT_FILES) throw corrupt();
  const entries = new Map<string, CachedEntry>();
  let o = 12;
  for (let i = 0; i < count; i++) {
    if (o + 4 > b.length) throw corrupt();
    const n = b.readUInt32LE(o);
    o += 4;
    if (o + n + ENTRY_FIXED - 4 > b.length) throw corrupt();
    const p = b.toString('utf8', o, o + n);
    o += n;
    const mode = b.readUInt32LE(o);
    const stat: StatKey = { mode, size: b.readDoubleLE(o + 4), mtimeMs: b.readDoubleLE(o + 12), ctimeMs: b.readDoubleLE(o + 20), ino: b.readDoubleLE(o + 28) };
    const sha256 = b.toString('hex', o + 36, o + 68);
    o += 68;
    entries.set(p, { path: p, mode: (mode & 0o111) !== 0 ? MODE_EXEC : MODE_FILE, size: stat.size, sha256, stat });
  }
  if (o !== b.length || entries.size !== count) throw corrupt();
  return { revision, scannedAtMs, entries, manifestEntries };
}

// ---------------------------------------------------------------------------------------------------
// Scanning: the workspace's manifest now, reading only what the stat cache cannot vouch for.

/** One scanned file: its manifest entry and, for a regular file, the stat its digest goes with. */
interface Scanned extends ManifestEntry {
  readonly stat?: StatKey;
}

/** What a scan found: the entries, and whether each came unchanged from the cache (no file read). */
export interface WorkspaceScan {
  readonly manifest: Manifest;
  readonly revision: string;
  /** Regular files with their stat, for the next stat cache. */
  readonly cacheEntries: readonly CachedEntry[];
  /** When the scan began (Date.now()): the racy-entry bound of a cache made from it. */
  readonly scannedAtMs: number;
  /** How many files were read (the others came from the stat cache). */
  readonly read: number;
}

const statKey = (st: fs.Stats): StatKey => ({ size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, mode: st.mode });

/**
 * Scans the workspace: lists it, and for each regular file whose lstat matches its cache entry takes
 * the entry's digest; every other file (changed, new, racily clean, a symlink) is read once and hashed,
 * and handed to `onRead` with its bytes. Writes nothing.
 */
export function scanWorkspace(root: string, cache?: StatCache, onRead?: (entry: ManifestEntry, bytes: Buffer) => void, stateDirs: readonly string[] = []): WorkspaceScan {
  const scannedAtMs = Date.now();
  const files = listWorkspace(root, stateDirs);
  let total = 0;
  const cached: (CachedEntry | undefined)[] = [];
  for (const { path: rel, st } of files) {
    if (rel.split('/').some((s) => s === '' || s === '.' || s === '..') || /[\x00-\x1f\x7f]/.test(rel)) {
      throw badInput(`workspace path ${JSON.stringify(rel)} cannot be recorded`, 'BAD_WORKSPACE');
    }
    if (!st.isSymbolicLink() && !st.isFile()) throw badInput(`workspace entry ${rel} is not a regular file`, 'BAD_WORKSPACE');
    if (st.isFile()) total += st.size;
    if (total > MAX_SNAPSHOT_BYTES) throw badInput('workspace is larger than the snapshot limit', 'WORKSPACE_TOO_LARGE');
    const c = st.isFile() ? cache?.entries.get(rel) : undefined;
    const clean = c !== undefined && statClean(c.stat, st, cache!.scannedAtMs) ? c : undefined;
    cached.push(clean);
  }
  const out: Scanned[] = [];
  const cacheEntries: CachedEntry[] = [];
  let read = 0;
  let allCached = cache !== undefined && files.length === cache.manifestEntries;
  files.forEach(({ path: rel, st }, i) => {
    const c = cached[i];
    if (c) {
      out.push(c);
      cacheEntries.push(c);
      return;
    }
    allCached = false;
    read++;
    if (st.isSymbolicLink()) {
      const bytes = Buffer.from(checkedLinkTarget(root, rel), 'utf8');
      const e: Scanned = { path: rel, mode: MODE_SYMLINK, size: bytes.length, sha256: sha256Hex(bytes) };
      out.push(e);
      onRead?.(e, bytes);
      return;
    }
    const bytes = fs.readFileSync(path.join(root, rel));
    // Written between its lstat and its read: the stat would not describe these bytes.
    if (bytes.length !== st.size) throw badInput(`workspace file ${rel} changed during the scan; retry`, 'WORKSPACE_CHANGED');
    const e: CachedEntry = { path: rel, mode: (st.mode & 0o111) !== 0 ? MODE_EXEC : MODE_FILE, size: bytes.length, sha256: sha256Hex(bytes), stat: statKey(st) };
    out.push(e);
    cacheEntries.push(e);
    onRead?.(e, bytes);
  });
  const manifest: Manifest = { version: 1, entries: out.map(({ path: p, mode, size, sha256 }) => ({ path: p, mode, size, sha256 })) };
  // As many entries as the cached snapshot, each one of its entries unchanged: the manifest is that
  // snapshot's, and so is the revision (not computed again over every entry).
  const revision = allCached && cache !== undefined ? cache.revision : revisionOf(manifest);
  return { manifest, revision, cacheEntries, scannedAtMs, read };
}

/**
 * Reads the workspace now, read-only: scanned() gives the manifest and revision of the bytes as they
 * were read (the Stop hook's dirty check). With a stat cache, only the files whose stat changed are read.
 */
export function readWorkspaceLater(root: string, cache?: StatCache, stateDirs: readonly string[] = []): { scanned(): { manifest: Manifest; revision: string } } {
  const scan = scanWorkspace(root, cache, undefined, stateDirs);
  return { scanned: () => scan };
}

/**
 * The mode of a blob written now: read-only for everyone, inside owner-private directories. Stores made
 * before kept blobs at 0o400; a collector copies those instead of linking them.
 */
export const BLOB_MODE = 0o444;

/** The first bytes of a pack; then records of a raw 32-byte SHA-256, a u64be length and the bytes. */
const PACK_MAGIC = Buffer.from('agentscm-pack-v1\n', 'latin1');
const PACK_RECORD_HEAD = 40;

/** What a checkpoint recorded: the snapshot, and the stat cache of its regular files. */
export interface RecordedSnapshot {
  readonly revision: string;
  readonly manifest: Manifest;
  readonly statCache: { readonly scannedAtMs: number; readonly entries: Buffer };
}

/**
 * One checkpoint's pack: every file it read, appended as read, made durable by one fsync of the pack
 * and one of its directory. Until published it has a temporary name that no reader looks at.
 */
class PackWriter {
  private fd: number | undefined;
  private readonly tmp: string;
  private offset = 0;
  constructor(private readonly dir: string) {
    this.tmp = path.join(dir, `.${process.pid}.${randomBytes(8).toString('hex')}.pack.tmp`);
  }

  add(sha256: string, bytes: Buffer): void {
    if (this.fd === undefined) {
      this.fd = fs.openSync(this.tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o400);
      this.write(PACK_MAGIC);
    }
    const head = Buffer.alloc(PACK_RECORD_HEAD);
    head.write(sha256, 0, 32, 'hex');
    head.writeBigUInt64BE(BigInt(bytes.length), 32);
    this.write(head);
    this.write(bytes);
  }

  private write(b: Buffer): void {
    let off = 0;
    while (off < b.length) off += fs.writeSync(this.fd!, b, off, b.length - off, this.offset + off);
    this.offset += b.length;
  }

  /** Makes the pack durable under its final name (none when nothing was added). */
  publish(): void {
    if (this.fd === undefined) return;
    fs.fsyncSync(this.fd);
    fs.closeSync(this.fd);
    this.fd = undefined;
    fs.linkSync(this.tmp, path.join(this.dir, path.basename(this.tmp).slice(1).replace(/\.tmp$/, '')));
    fs.unlinkSync(this.tmp);
    fsyncDir(this.dir);
  }

  discard(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
    fs.rmSync(this.tmp, { force: true });
  }
}

export class SnapshotStore {
  readonly root: string;
  constructor(readonly dataDir: string) {
    this.root = path.join(dataDir, 'snapshots');
  }

  /** Where a blob is kept (create-only, never rewritten): what a materialized snapshot may hard-link. */
  blobPath(sha: string): string {
    return path.join(this.root, 'blobs', sha.slice(0, 2), sha);
  }

  private manifestPath(revision: string): string {
    return path.join(this.root, 'manifests', `${revision}.json`);
  }

  /**
   * Records the workspace as an immutable snapshot and returns its revision and the new stat cache.
   * Files whose stat matches `cache` are neither read nor written: their blobs are the ones a completed
   * checkpoint made durable. Every other file is read once: its blob is written when missing (no fsync
   * of its own) and its bytes go to this checkpoint's pack, which is fsynced once before the manifest
   * is published create-only (fsynced too). An existing snapshot is never rewritten, and a crash leaves
   * at most unreferenced blobs and an unnamed temporary pack.
   */
  record(workspace: string, cache?: StatCache): RecordedSnapshot {
    const root = fs.realpathSync(workspace);
    // The store's own directory too: a symlinked snapshots/ would publish blobs elsewhere.
    ensurePrivateDir(this.root, 'snapshot store');
    ensurePrivateDir(path.join(this.root, 'blobs'), 'snapshot store');
    ensurePrivateDir(path.join(this.root, 'manifests'), 'snapshot store');
    ensurePrivateDir(path.join(this.root, 'packs'), 'snapshot store');
    const pack = new PackWriter(path.join(this.root, 'packs'));
    const blobDirs = new Set<string>();
    let scan: WorkspaceScan;
    try {
      try {
        scan = scanWorkspace(
          root,
          cache,
          (e, bytes) => {
            pack.add(e.sha256, bytes);
            this.writeLooseBlob(e.sha256, bytes, blobDirs);
          },
          [this.dataDir],
        );
      } catch (e) {
        throw vanished(e);
      }
      pack.publish();
    } catch (e) {
      pack.discard();
      throw e;
    }
    const bytes = manifestBytes(scan.manifest);
    const revision = domainDigest(DOMAINS.snapshot, bytes);
    // An existing manifest (the same snapshot recorded before, perhaps by a writer still syncing it)
    // gets the directory fsync that publishing it would have given.
    if (!publishCreateOnly(this.manifestPath(revision), bytes, 0o400)) fsyncDir(path.join(this.root, 'manifests'));
    return { revision, manifest: scan.manifest, statCache: { scannedAtMs: scan.scannedAtMs, entries: encodeStatCache(scan.cacheEntries, scan.manifest.entries.length) } };
  }

  /**
   * Writes a blob that is missing: a temporary file linked to the blob's name (a name is never seen
   * half-written), without an fsync: the pack holds the durable copy.
   */
  private writeLooseBlob(sha256: string, bytes: Buffer, dirs: Set<string>): void {
    const file = this.blobPath(sha256);
    const dir = path.dirname(file);
    if (!dirs.has(dir)) {
      // Made without a directory fsync: a blob lost with its directory in a crash is in the pack.
      if (!lstatOrUndefined(dir)) {
        fs.mkdirSync(dir, { mode: 0o700 });
        fs.chmodSync(dir, 0o700);
      }
      ensurePrivateDir(dir, 'snapshot store');
      dirs.add(dir);
    }
    if (lstatOrUndefined(file)) return;
    const tmp = path.join(dir, `.${sha256}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    // Readable by all (BLOB_MODE, whatever the umask): a collector materializes regular files by
    // hard-linking their blobs, and a container's user need not be the owner. The store's
    // directories stay owner-private.
    writeNewFile(tmp, bytes, BLOB_MODE);
    try {
      fs.linkSync(tmp, file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
        fs.unlinkSync(tmp);
        throw e;
      }
    }
    fs.unlinkSync(tmp);
  }

  /** Loads a manifest and checks it against its revision; undefined when the snapshot does not exist. */
  manifest(revision: string): Manifest | undefined {
    if (!HEX64.test(revision)) return undefined;
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(this.manifestPath(revision));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw localState('snapshot store unreadable', 'STORE_UNAVAILABLE');
    }
    if (domainDigest(DOMAINS.snapshot, bytes) !== revision) throw localState(`snapshot ${revision} does not match its revision`, 'STORE_CORRUPT');
    return JSON.parse(bytes.toString('utf8')) as Manifest;
  }

  /**
   * Reads a blob of at most maxBytes, checked against its SHA-256: the loose blob, or, when that is
   * missing or not those bytes (a crash after the checkpoint that wrote it, before the system wrote it
   * out), the copy in a pack. Returns 'limit' when over maxBytes, undefined when found nowhere.
   */
  readBlob(sha256: string, maxBytes: number): Buffer | 'limit' | undefined {
    const loose = this.readLooseBlob(sha256, maxBytes);
    if (loose === 'limit') return loose;
    if (loose !== undefined && crypto.createHash('sha256').update(loose).digest('hex') === sha256) return loose;
    return this.readPackedBlob(sha256, maxBytes);
  }

  /**
   * Reads the loose blob file of at most maxBytes, unchecked (what a hard link to it shows). The size
   * is checked on the open descriptor before any byte is read; returns 'limit' when over, undefined
   * when missing.
   */
  readLooseBlob(sha256: string, maxBytes: number): Buffer | 'limit' | undefined {
    let fd: number;
    try {
      fd = fs.openSync(this.blobPath(sha256), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw localState('snapshot store unreadable', 'STORE_UNAVAILABLE');
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) return undefined;
      if (st.size > maxBytes) return 'limit';
      const buf = Buffer.alloc(st.size);
      let off = 0;
      while (off < st.size) {
        const n = fs.readSync(fd, buf, off, st.size - off, off);
        if (n === 0) break;
        off += n;
      }
      return off === st.size ? buf : undefined;
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Finds a blob's bytes in the packs (a rare path: only after a crash), checked against its SHA-256. */
  private readPackedBlob(sha256: string, maxBytes: number): Buffer | 'limit' | undefined {
    const dir = path.join(this.root, 'packs');
    let names: string[];
    try {
      names = fs.readdirSync(dir).filter((n) => n.endsWith('.pack')).sort();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw localState('snapshot store unreadable', 'STORE_UNAVAILABLE');
    }
    const want = Buffer.from(sha256, 'hex');
    for (const name of names) {
      let fd: number;
      try {
        fd = fs.openSync(path.join(dir, name), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
      } catch {
        continue;
      }
      try {
        const size = fs.fstatSync(fd).size;
        const head = Buffer.alloc(PACK_RECORD_HEAD);
        const magic = Buffer.alloc(PACK_MAGIC.length);
        if (fs.readSync(fd, magic, 0, magic.length, 0) !== magic.length || !magic.equals(PACK_MAGIC)) continue;
        for (let at = PACK_MAGIC.length; at + PACK_RECORD_HEAD <= size; ) {
          if (fs.readSync(fd, head, 0, PACK_RECORD_HEAD, at) !== PACK_RECORD_HEAD) break;
          const len = Number(head.readBigUInt64BE(32));
          const body = at + PACK_RECORD_HEAD;
          if (body + len > size) break;
          if (head.subarray(0, 32).equals(want)) {
            if (len > maxBytes) return 'limit';
            const buf = Buffer.alloc(len);
            if (len > 0 && fs.readSync(fd, buf, 0, len, body) !== len) break;
            if (crypto.createHash('sha256').update(buf).digest('hex') === sha256) return buf;
          }
          at = body + len;
        }
      } finally {
        fs.closeSync(fd);
      }
    }
    return undefined;
  }
}
