// The native snapshot store: immutable, content-addressed snapshots of a workspace. A revision is the
// domain-separated SHA-256 root over the canonical manifest (paths, modes, sizes, content digests).
//
//   DATA_DIR/snapshots/blobs/<aa>/<sha256>        file contents (sha256 = plain SHA-256 of the bytes)
//   DATA_DIR/snapshots/manifests/<revision>.json  canonical manifest; its digest is the revision

import * as fs from 'node:fs';
import * as path from 'node:path';
import { canonicalJsonBytes, type JsonValue } from '../canonical/json.js';
import { compareUtf8 } from '../canonical/json.js';
import { DOMAINS, domainDigest, HEX64, sha256Hex } from '../crypto/digest.js';
import { nodeCrypto } from '../crypto/lazy.js';
import { badInput, localState } from '../errors.js';
import { ensurePrivateDir, fsyncDir, lstatOrUndefined, publishCreateOnly } from '../fs/safe.js';

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

/**
 * The workspace's file set: in a git work tree, what `git ls-files -co --exclude-standard` lists
 * (tracked and untracked-but-not-ignored files that exist); otherwise every regular file and symlink
 * under root. Paths are relative, "/"-separated, sorted by UTF-8 bytes.
 */
export function listWorkspaceFiles(root: string): string[] {
  const st = lstatOrUndefined(root);
  if (!st || !st.isDirectory()) throw badInput(`workspace ${root} is not a directory`, 'BAD_WORKSPACE');
  let files: string[];
  if (isGitWorkTreeRoot(root)) {
    const out = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: root, maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
    files = [...new Set(out.toString('utf8').split('\0').filter((p) => p !== ''))].filter((p) => {
      const s = lstatOrUndefined(path.join(root, p));
      return s !== undefined && !s.isDirectory(); // deleted tracked files and submodules are not content
    });
  } else {
    files = [];
    walk(root, '', files);
  }
  if (files.length > MAX_SNAPSHOT_FILES) throw badInput(`workspace has more than ${MAX_SNAPSHOT_FILES} files`, 'WORKSPACE_TOO_LARGE');
  return files.sort(compareUtf8);
}

function isGitWorkTreeRoot(root: string): boolean {
  if (!lstatOrUndefined(path.join(root, '.git'))) return false;
  try {
    const top = execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] }).toString('utf8').trim();
    return fs.realpathSync(top) === fs.realpathSync(root);
  } catch {
    return false;
  }
}

function walk(root: string, rel: string, out: string[]): void {
  for (const d of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const p = rel === '' ? d.name : `${rel}/${d.name}`;
    if (d.isDirectory()) walk(root, p, out);
    else if (d.isFile() || d.isSymbolicLink()) out.push(p);
    else throw badInput(`workspace entry ${p} is not a regular file, directory or symlink`, 'BAD_WORKSPACE');
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

interface ScannedFile extends ManifestEntry {
  /** Where to read the bytes from (or the link target text). */
  readonly source: { kind: 'file'; abs: string } | { kind: 'link'; target: string };
}

/**
 * Above this many bytes of file contents a scan hashes with node:crypto from the start: its load
 * (about 6 ms in a cold process) costs less than hashing that much without it (sha256.ts).
 */
const SMALL_WORKSPACE_BYTES = 256 * 1024;

/** A listed file as read: its entry's fields but the digest, and its bytes (or link target text). */
interface ReadFile {
  readonly path: string;
  readonly mode: number;
  readonly bytes: Buffer;
  readonly source: ScannedFile['source'];
}

/** Checks and stats the listed files, then reads each: the read-only half of a checkpoint, unhashed. */
function readFiles(root: string, files: readonly string[], each: (f: ReadFile) => void): number {
  const stats: fs.Stats[] = [];
  let total = 0;
  for (const rel of files) {
    if (rel.split('/').some((s) => s === '' || s === '.' || s === '..') || /[\x00-\x1f\x7f]/.test(rel)) {
      throw badInput(`workspace path ${JSON.stringify(rel)} cannot be recorded`, 'BAD_WORKSPACE');
    }
    const st = fs.lstatSync(path.join(root, rel));
    if (!st.isSymbolicLink() && !st.isFile()) throw badInput(`workspace entry ${rel} is not a regular file`, 'BAD_WORKSPACE');
    if (st.isFile()) total += st.size;
    if (total > MAX_SNAPSHOT_BYTES) throw badInput('workspace is larger than the snapshot limit', 'WORKSPACE_TOO_LARGE');
    stats.push(st);
  }
  // A small workspace (what a Stop hook scans on every stop) hashes without node:crypto; see above.
  if (total > SMALL_WORKSPACE_BYTES) nodeCrypto();
  files.forEach((rel, i) => {
    const abs = path.join(root, rel);
    if (stats[i]!.isSymbolicLink()) {
      const target = checkedLinkTarget(root, rel);
      each({ path: rel, mode: MODE_SYMLINK, bytes: Buffer.from(target, 'utf8'), source: { kind: 'link', target } });
      return;
    }
    each({ path: rel, mode: (stats[i]!.mode & 0o111) !== 0 ? MODE_EXEC : MODE_FILE, bytes: fs.readFileSync(abs), source: { kind: 'file', abs } });
  });
  return total;
}

const hashed = (f: ReadFile): ScannedFile => ({ path: f.path, mode: f.mode, size: f.bytes.length, sha256: sha256Hex(f.bytes), source: f.source });

/** Hashes the listed files without writing anything: the read-only half of a checkpoint. */
function scan(root: string, files: readonly string[]): ScannedFile[] {
  const out: ScannedFile[] = [];
  // One file's bytes at a time.
  readFiles(root, files, (f) => out.push(hashed(f)));
  return out;
}

const revisionOfScan = (scanned: readonly ScannedFile[]): { manifest: Manifest; revision: string } => {
  const manifest: Manifest = { version: 1, entries: scanned.map(({ path: p, mode, size, sha256 }) => ({ path: p, mode, size, sha256 })) };
  return { manifest, revision: revisionOf(manifest) };
};

/**
 * Reads the workspace now, read-only, and leaves the hashing for later: scanned() gives the manifest and
 * revision of the bytes as they were read. A Stop hook reads before its request and hashes while the
 * Hub works. A workspace over SMALL_WORKSPACE_BYTES is hashed as it is read (one file's bytes at a
 * time, as a checkpoint's scan), so that deferring never holds a large one in memory.
 */
export function readWorkspaceLater(root: string): { scanned(): { manifest: Manifest; revision: string } } {
  const files = listWorkspaceFiles(root);
  const read: ReadFile[] = [];
  const now: ScannedFile[] = [];
  let total = 0;
  readFiles(root, files, (f) => {
    total += f.bytes.length;
    if (total > SMALL_WORKSPACE_BYTES || now.length > 0) {
      // Too large to keep: hash what was kept and everything from here on, as it is read.
      for (const k of read.splice(0)) now.push(hashed(k));
      now.push(hashed(f));
    } else read.push(f);
  });
  let result: { manifest: Manifest; revision: string } | undefined;
  return {
    scanned: () => (result ??= revisionOfScan(now.length > 0 ? now : read.map(hashed))),
  };
}

/**
 * The mode of a blob written now: read-only for everyone, inside owner-private directories. Stores made
 * before kept blobs at 0o400; a collector copies those instead of linking them.
 */
export const BLOB_MODE = 0o444;

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
   * Records the workspace as an immutable snapshot and returns its revision. Blobs and the manifest
   * are published create-only, so an existing snapshot is never rewritten and a crash leaves at most
   * unreferenced blobs.
   */
  record(workspace: string): { revision: string; manifest: Manifest } {
    const root = fs.realpathSync(workspace);
    let scanned: ScannedFile[];
    try {
      scanned = scan(root, listWorkspaceFiles(root));
    } catch (e) {
      throw vanished(e);
    }
    // The store's own directory too: a symlinked snapshots/ would publish blobs elsewhere.
    ensurePrivateDir(this.root, 'snapshot store');
    ensurePrivateDir(path.join(this.root, 'blobs'), 'snapshot store');
    ensurePrivateDir(path.join(this.root, 'manifests'), 'snapshot store');
    for (const f of scanned) {
      const file = this.blobPath(f.sha256);
      if (lstatOrUndefined(file)) continue;
      let bytes: Buffer;
      try {
        bytes = f.source.kind === 'file' ? fs.readFileSync(f.source.abs) : Buffer.from(f.source.target, 'utf8');
      } catch (e) {
        throw vanished(e);
      }
      // The file may have changed between scan and copy: the blob must be what the manifest names.
      if (nodeCrypto().createHash('sha256').update(bytes).digest('hex') !== f.sha256) throw badInput(`workspace file ${f.path} changed during the checkpoint; retry`, 'WORKSPACE_CHANGED');
      ensurePrivateDir(path.dirname(file), 'snapshot store');
      // Readable by all (BLOB_MODE): a collector materializes regular files by hard-linking their blobs,
      // and a container's user need not be the owner. The store's directories stay owner-private.
      publishCreateOnly(file, bytes, BLOB_MODE);
    }
    const manifest: Manifest = { version: 1, entries: scanned.map(({ path: p, mode, size, sha256 }) => ({ path: p, mode, size, sha256 })) };
    const bytes = manifestBytes(manifest);
    const revision = domainDigest(DOMAINS.snapshot, bytes);
    publishCreateOnly(this.manifestPath(revision), bytes, 0o400);
    fsyncDir(path.join(this.root, 'manifests'));
    return { revision, manifest };
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
   * Reads a blob of at most maxBytes. The size is checked on the open descriptor before any byte is
   * read; returns 'limit' when over, undefined when missing. The content hash is the caller's check.
   */
  readBlob(sha256: string, maxBytes: number): Buffer | 'limit' | undefined {
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
}
