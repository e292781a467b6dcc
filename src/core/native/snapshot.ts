// The native snapshot store: immutable, content-addressed snapshots of a workspace. A revision is the
// domain-separated SHA-256 root over the canonical manifest (paths, modes, sizes, content digests).
//
//   DATA_DIR/snapshots/packs/<id>.pack            file contents (pack.ts), one pack per checkpoint: every file it read
//   DATA_DIR/snapshots/blobs/<aa>/<sha256>        loose copies a collector hard-links (sha256 = plain SHA-256 of the bytes)
//   DATA_DIR/snapshots/manifests/<revision>.json  canonical manifest; its digest is the revision
//
// A checkpoint appends the bytes of each file it read to one pack, which it fsyncs once (with its
// directory) before the manifest is published; it writes no file per blob. A collector writes the
// loose blobs it links from the packs, without an fsync: after a crash one may be missing or torn, and
// readBlob then finds its bytes in a pack again. The stat cache
// (encodeStatCache) records what each regular file's lstat was when its digest was taken, so that
// later scans read and hash only the files whose stat changed, as git's index does.

import { isUtf8 } from 'node:buffer';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { canonicalJsonBytes, type JsonValue } from '../canonical/json.js';
import { compareUtf8 } from '../canonical/json.js';
import { DOMAINS, domainDigest, HEX64, sha256Hex } from '../crypto/digest.js';
import { AgentscmError, badInput, localState } from '../errors.js';
import { randomBytes } from '../crypto/random.js';
import { assertPrivateDir, ensurePrivateDir, fsyncDir, lstatOrUndefined, publishCreateOnly, readExactly, writeNewFile } from '../fs/safe.js';
import { lstatMany, STAT_FIELDS, StatHelpers } from '../fs/lstat-many.js';
import { fineTimestamps, subSecondTimes } from '../fs/timestamps.js';
import { PackSet, PackWriter, repackPacks, type RepackResult } from './pack.js';

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
  // No "d/" string made per path: this runs once for every listed file.
  return TOOL_STATE_FILES.includes(rel) || dirs.some((d) => rel.startsWith(d) && (rel.length === d.length || rel.charCodeAt(d.length) === 0x2f));
}

/**
 * The workspace's file set: in a git work tree, what `git ls-files -co --exclude-standard` lists
 * (tracked and untracked-but-not-ignored files that exist); otherwise every regular file and symlink
 * under root; in both cases without tool state (TOOL_STATE_FILES, TOOL_STATE_DIRS, `stateDirs`).
 * Paths are relative, "/"-separated, sorted by UTF-8 bytes; each file is lstat'ed once.
 */
export function listWorkspace(root: string, stateDirs: readonly string[] = []): ListedFile[] {
  return listFiles(root, undefined, false, stateDirs, COARSE_TIMES).files.paths.flatMap((p) => {
    const st = lstatOrUndefined(path.join(root, p));
    return st ? [{ path: p, st }] : [];
  });
}

/**
 * Listed files: their paths and, five numbers a file, what their lstat said (st_mode, size, mtimeMs,
 * ctimeMs, ino). No fs.Stats is kept: tens of thousands of them (four Dates each) would keep the
 * garbage collector busy for longer than the lstat calls take.
 */
class Listed {
  readonly paths: string[] = [];
  stats = new Float64Array(5 * 1024);
  push(p: string, st: fs.Stats): void {
    const s = this.grown();
    const i = this.paths.length;
    this.paths.push(p);
    s[5 * i] = st.mode;
    s[5 * i + 1] = st.size;
    s[5 * i + 2] = st.mtimeMs;
    s[5 * i + 3] = st.ctimeMs;
    s[5 * i + 4] = st.ino;
  }
  /** push, from lstatMany's five numbers at `from[k]`. */
  pushNumbers(p: string, from: Float64Array, k: number): void {
    const s = this.grown();
    const i = 5 * this.paths.length;
    this.paths.push(p);
    for (let f = 0; f < 5; f++) s[i + f] = from[k + f]!;
  }
  /** The stats array, grown when full. */
  private grown(): Float64Array {
    if (5 * this.paths.length + 5 > this.stats.length) {
      const more = new Float64Array(this.stats.length * 2);
      more.set(this.stats);
      this.stats = more;
    }
    return this.stats;
  }
  get length(): number {
    return this.paths.length;
  }
  mode(i: number): number {
    return this.stats[5 * i]!;
  }
  size(i: number): number {
    return this.stats[5 * i + 1]!;
  }
  key(i: number): StatKey {
    const s = this.stats;
    return { mode: s[5 * i]!, size: s[5 * i + 1]!, mtimeMs: s[5 * i + 2]!, ctimeMs: s[5 * i + 3]!, ino: s[5 * i + 4]! };
  }
  /** The same files in UTF-8 byte order of their paths. */
  sorted(): Listed {
    const order = this.paths.map((_, i) => i).sort((a, b) => compareUtf8(this.paths[a]!, this.paths[b]!));
    const out = new Listed();
    out.stats = new Float64Array(Math.max(5, this.stats.length));
    order.forEach((k, i) => {
      out.paths.push(this.paths[k]!);
      out.stats.set(this.stats.subarray(5 * k, 5 * k + 5), 5 * i);
    });
    return out;
  }
}

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const isRegular = (mode: number) => (mode & S_IFMT) === 0o100000;
const isLink = (mode: number) => (mode & S_IFMT) === 0o120000;

/** The paths of listWorkspace. */
export function listWorkspaceFiles(root: string, stateDirs: readonly string[] = []): string[] {
  return listWorkspace(root, stateDirs).map((f) => f.path);
}

// ---------------------------------------------------------------------------------------------------
// The listing cache: git's untracked cache, for the workspace. Listing a git work tree costs git
// processes; a listing is kept with the stat of every directory git would look into (a file added,
// removed or renamed changes its directory's mtime), of every .gitignore in them, and of the files git
// reads its rules and its index from (index, info/exclude, the config files and core.excludesFile).
// While none of those stats changed, and none is racily clean, git would list the same paths, so they
// are lstat'ed without asking git.

/** How a watched path is compared: a directory by lstat, a file by stat (it may be a link), `.git` by its type and inode. */
const WATCH_DIR = 0;
const WATCH_FILE = 1;
const WATCH_GIT = 2;
/** The index, by stat; when that changed, by the digest of its paths (git rewrites it for other reasons: `git status` refreshes it). */
const WATCH_INDEX = 3;

export interface WatchItem {
  readonly kind: number;
  /** Relative to the workspace ("" is the workspace itself), or absolute when it starts with "/". */
  readonly path: string;
  /** Undefined: the path did not exist. */
  readonly stat: StatKey | undefined;
}

/** A git listing that may be reused: the git environment it was made in, what it watched, what it listed. */
export interface ListingCache {
  readonly envDigest: string;
  /** SHA-256 of `git ls-files -c -z`: the paths the index tracked. */
  readonly indexDigest: string;
  readonly watch: readonly WatchItem[];
  /** ls-files' paths, sorted and deduplicated (some may since be missing, or be directories). */
  readonly listed: readonly string[];
}

/** The environment git reads its configuration under: a listing made under another is not reused by a checkpoint. */
export function gitEnvDigest(): string {
  const vars = Object.keys(process.env)
    .filter((k) => k.startsWith('GIT_') || k === 'HOME' || k === 'XDG_CONFIG_HOME')
    .sort()
    .map((k) => `${k}=${process.env[k]}`);
  return sha256Hex(vars.join('\0'));
}

// Watched paths are recorded as written here ("/"-joined names under root, or absolute): joined without
// path.join's normalization, which cost more than the lstat of a directory.
const abs = (root: string, p: string) => (p.startsWith('/') ? p : p === '' ? root : `${root}/${p}`);

function watchStat(root: string, w: { kind: number; path: string }): fs.Stats | undefined {
  const p = abs(root, w.path);
  try {
    return w.kind === WATCH_DIR ? fs.lstatSync(p, { throwIfNoEntry: false }) : fs.statSync(p, { throwIfNoEntry: false });
  } catch {
    // ENOTDIR, a link loop, no permission: not what was recorded.
    return undefined;
  }
}

/** Whether the watched path is as recorded (and the recorded stat not racily clean against `scannedAtMs`). */
function watchClean(root: string, w: WatchItem, scannedAtMs: number, fine: FineTimes): boolean {
  const st = watchStat(root, w);
  if (w.stat === undefined || st === undefined) return w.stat === undefined && st === undefined;
  if (w.kind === WATCH_GIT) return st.ino === w.stat.ino && (st.mode & 0o170000) === (w.stat.mode & 0o170000);
  return keyClean(w.stat, st.mode, st.size, st.mtimeMs, st.ctimeMs, st.ino, scannedAtMs, fine);
}

/**
 * Whether a listing cache still answers: every watched stat unchanged and none racily clean, the index
 * tracking the same paths. `fine`: the tree's timestamps are fine ones from this host (fineTimestamps).
 */
export function listingClean(root: string, lc: ListingCache, scannedAtMs: number, fine = false): boolean {
  return checkedListing(root, lc, scannedAtMs, fine ? FINE_TIMES : COARSE_TIMES) !== undefined;
}

/**
 * listingClean, answered with the listing to keep: lc itself, or, when the index's stat changed but it
 * tracks the same paths, lc with the index's new stat (taken before its paths were asked), so that the
 * next scan need not ask git again. Undefined: the listing does not answer. Given `changedDirs`, a
 * watched directory whose stat changed is pushed there instead of ending the check: the listing then
 * answers for everything outside those directories (relistDirs lists them again).
 */
function checkedListing(root: string, lc: ListingCache, scannedAtMs: number, fine: FineTimes, helpers?: StatHelpers, changedDirs?: string[]): ListingCache | undefined {
  // Most watched paths are directories: their lstat calls go first, all at once (lstatMany).
  const dirs = lc.watch.filter((w) => w.kind === WATCH_DIR);
  const dirStats = lstatMany('', dirs.map((w) => abs(root, w.path)), helpers, 'missing');
  let d = 0;
  let refreshed: WatchItem[] | undefined;
  for (let i = 0; i < lc.watch.length; i++) {
    const w = lc.watch[i]!;
    if (w.kind === WATCH_DIR) {
      if (numbersClean(w.stat, dirStats, STAT_FIELDS * d++, scannedAtMs, fine)) continue;
      if (changedDirs === undefined) return undefined;
      changedDirs.push(w.path);
      continue;
    }
    if (watchClean(root, w, scannedAtMs, fine)) continue;
    const st = w.kind === WATCH_INDEX ? watchStat(root, w) : undefined;
    if (st === undefined) return undefined;
    let digest: string;
    try {
      digest = trackedDigest(root);
    } catch {
      return undefined;
    }
    if (digest !== lc.indexDigest) return undefined;
    (refreshed ??= [...lc.watch])[i] = { kind: w.kind, path: w.path, stat: statKey(st) };
  }
  return refreshed === undefined ? lc : { ...lc, watch: refreshed };
}

/** watchClean of a directory from lstatMany's numbers at s[k] (st_mode 0: it does not exist). */
function numbersClean(c: StatKey | undefined, s: Float64Array, k: number, scannedAtMs: number, fine: FineTimes): boolean {
  if (c === undefined || s[k] === 0) return c === undefined && s[k] === 0;
  return keyClean(c, s[k]!, s[k + 1]!, s[k + 2]!, s[k + 3]!, s[k + 4]!, scannedAtMs, fine);
}

const trackedDigest = (root: string) => sha256Hex(execFileSync('git', ['ls-files', '-c', '-z'], { cwd: root, maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } }));

interface GitRoot {
  readonly gitDir: string;
  readonly index: string;
  readonly exclude: string;
}

// Whether a directory is a work tree's top level (and where its git dir is), asked of git once per
// directory and process: the Stop hook may list the workspace twice.
const gitRoots = new Map<string, GitRoot | null>();

/** Whether root is a git work tree's top level. */
export function isGitWorkTreeRoot(root: string): boolean {
  return gitRoot(root) !== undefined;
}

/**
 * Where root's git dir is when root is a git work tree's top level; undefined when it has no `.git`, or
 * when git takes it as a directory inside another work tree. A `.git` that git cannot be run on, or
 * refuses (not a repository, a repository owned by another user that safe.directory does not allow),
 * fails the scan: listed as a plain directory, the workspace would have another file set (`.git`
 * itself and the ignored files among them) than the work tree it is.
 */
function gitRoot(root: string): GitRoot | undefined {
  if (!lstatOrUndefined(path.join(root, '.git'))) return undefined;
  const known = gitRoots.get(root);
  if (known !== undefined) return known ?? undefined;
  let out: string[];
  try {
    out = execFileSync('git', ['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-path', 'index', '--git-path', 'info/exclude'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
      .toString('utf8')
      .split('\n');
  } catch (e) {
    const { code, stderr } = e as { code?: unknown; stderr?: unknown };
    if (code === 'ENOENT') throw badInput('the workspace has a .git, and git cannot be run (not installed, or not on PATH): its file set is what git lists', 'GIT_UNAVAILABLE');
    const said = String(stderr ?? '').split('\n').find((l) => l.trim() !== '') ?? 'no reason given';
    throw badInput(`the workspace has a .git that git refuses: ${said.trim().slice(0, 300)}`, 'BAD_WORKSPACE');
  }
  let found: GitRoot | null = null;
  if (out.length >= 4 && fs.realpathSync(out[0]!) === fs.realpathSync(root)) {
    found = { gitDir: out[1]!, index: path.resolve(root, out[2]!), exclude: path.resolve(root, out[3]!) };
  }
  gitRoots.set(root, found);
  return found ?? undefined;
}

const gitOut = (root: string, args: readonly string[]) =>
  execFileSync('git', args, { cwd: root, maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } }).toString('utf8');

/** The files git reads its configuration and global rules from (those that exist, and where they would be). */
function gitRuleFiles(root: string, g: GitRoot): string[] {
  const home = process.env.HOME;
  const xdg = process.env.XDG_CONFIG_HOME || (home ? path.join(home, '.config') : undefined);
  const files = new Set<string>([g.index, g.exclude, path.join(g.gitDir, 'config'), path.join(g.gitDir, 'config.worktree'), '/etc/gitconfig']);
  if (home) files.add(path.join(home, '.gitconfig'));
  if (xdg) {
    files.add(path.join(xdg, 'git', 'config'));
    files.add(path.join(xdg, 'git', 'ignore'));
  }
  for (const k of ['GIT_CONFIG_GLOBAL', 'GIT_CONFIG_SYSTEM']) if (process.env[k]) files.add(path.resolve(root, process.env[k]!));
  // Every file a setting came from (includes among them), and core.excludesFile's value.
  const fields = gitOut(root, ['config', '--list', '--show-origin', '-z']).split('\0');
  let excludes: string | undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const origin = fields[i]!;
    if (origin.startsWith('file:')) files.add(path.resolve(root, origin.slice(5)));
    const kv = fields[i + 1]!;
    const nl = kv.indexOf('\n');
    if (nl > 0 && kv.slice(0, nl).toLowerCase() === 'core.excludesfile') excludes = kv.slice(nl + 1);
  }
  if (excludes) files.add(excludes.startsWith('~/') && home ? path.join(home, excludes.slice(2)) : path.resolve(root, excludes));
  return [...files];
}

/** Directories git would look into (all but `.git` and those an ignore rule names), and their .gitignore files. */
function watchDirs(root: string, rel: string, ignoredDirs: ReadonlySet<string>, watch: WatchItem[]): void {
  const st = watchStat(root, { kind: WATCH_DIR, path: rel });
  watch.push({ kind: WATCH_DIR, path: rel, stat: st && statKey(st) });
  if (!st?.isDirectory()) return;
  let ents: fs.Dirent[];
  try {
    ents = fs.readdirSync(abs(root, rel), { withFileTypes: true });
  } catch {
    return;
  }
  for (const d of ents) {
    const p = rel === '' ? d.name : `${rel}/${d.name}`;
    if (d.isDirectory()) {
      if (d.name !== '.git' && !ignoredDirs.has(p)) watchDirs(root, p, ignoredDirs, watch);
    } else if (d.name === '.gitignore') {
      const s = watchStat(root, { kind: WATCH_FILE, path: p });
      watch.push({ kind: WATCH_FILE, path: p, stat: s && statKey(s) });
    }
  }
}

/**
 * Lists a git work tree with git, and makes its listing cache: the watched stats are taken before
 * `git ls-files` runs (a change after them is seen next time), and the rule files are checked again
 * after it (a rule changed meanwhile leaves no cache).
 */
function gitListing(root: string, g: GitRoot): { listed: string[]; cache: ListingCache | undefined } {
  const envDigest = gitEnvDigest();
  const watch: WatchItem[] = [];
  const rules = [
    { kind: WATCH_GIT, path: path.join(root, '.git') },
    { kind: WATCH_INDEX, path: g.index },
    ...gitRuleFiles(root, g)
      .filter((p) => p !== g.index)
      .map((p) => ({ kind: WATCH_FILE, path: p })),
  ];
  for (const w of rules) {
    const s = watchStat(root, w);
    watch.push({ ...w, stat: s && statKey(s) });
  }
  watchDirs(root, '', ignoredDirsOf(root, []), watch);
  // After the index's stat, before the listing: an index changed in between is seen next time.
  const indexDigest = trackedDigest(root);
  const listed = sortedListing(gitListed(root, []));
  return { listed, cache: rulesAsWatched(root, watch) ? { envDigest, indexDigest, watch, listed } : undefined };
}

/** Pathspecs of whole directories, taken literally (a name may hold glob characters). */
const underDirs = (dirs: readonly string[]) => (dirs.length === 0 ? [] : ['--', ...dirs.map((d) => `${d}/`)]);

/** The directories an ignore rule names, in `dirs` (all: the whole tree); git status shows them as "dir/" and does not look inside. */
function ignoredDirsOf(root: string, dirs: readonly string[]): Set<string> {
  const ignoredDirs = new Set<string>();
  const status = gitOut(root, ['--literal-pathspecs', 'status', '--porcelain=v1', '-z', '--ignored=matching', '--untracked-files=all', ...underDirs(dirs)]).split('\0');
  for (let i = 0; i < status.length; i++) {
    const r = status[i]!;
    if (r.startsWith('!! ') && r.endsWith('/')) ignoredDirs.add(r.slice(3, -1));
    else if (r[0] === 'R' || r[0] === 'C') i++;
  }
  return ignoredDirs;
}

/** The paths git lists in `dirs` (all: the whole tree): tracked, and untracked but not ignored. */
const gitListed = (root: string, dirs: readonly string[]) => gitPaths(root, ['--literal-pathspecs', 'ls-files', '-co', '--exclude-standard', '-z', ...underDirs(dirs)]);

/** The NUL-separated paths git prints; refused when one is not UTF-8 (decoded, it would name another path). */
function gitPaths(root: string, args: readonly string[]): string[] {
  const out = execFileSync('git', args, { cwd: root, maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } });
  if (!isUtf8(out)) throw badInput('a path git lists in the workspace is not UTF-8; such a path cannot be recorded', 'BAD_WORKSPACE');
  return out.toString('utf8').split('\0');
}

const sortedListing = (paths: Iterable<string>) => [...new Set(paths)].filter((p) => p !== '').sort(compareUtf8);

/** Whether git's rule files (and `.git`) are still as watched: one changed while git listed leaves no cache. */
function rulesAsWatched(root: string, watch: readonly WatchItem[]): boolean {
  return watch.every((w) => {
    if (w.kind === WATCH_DIR || w.kind === WATCH_INDEX) return true;
    const s = watchStat(root, w);
    return s === undefined || w.stat === undefined ? s === w.stat : statClean(w.stat, s, Number.POSITIVE_INFINITY) || (w.kind === WATCH_GIT && s.ino === w.stat.ino);
  });
}

/** More changed directories than this are listed with the whole tree (one git walk, no long argument list). */
const RELIST_MAX_DIRS = 64;

/**
 * lc's listing with the subtrees of the `changed` directories listed again, as git's untracked cache
 * does. A file added, removed or renamed changes the stat of its own directory and of no other, so
 * while the index tracks the same paths and every rule file and .gitignore is as watched
 * (checkedListing), git lists everything outside those subtrees as before. git is asked about the
 * subtrees only (literal pathspecs), in gitListing's order: their directories' stats, then the
 * listing. Undefined (list the whole tree): the workspace's own directory changed, too many did, or the
 * index tracks other paths by now.
 */
function relistDirs(root: string, lc: ListingCache, changed: readonly string[]): { listed: string[]; cache: ListingCache | undefined } | undefined {
  const set = new Set(changed);
  if (set.has('') || set.size > RELIST_MAX_DIRS) return undefined;
  const inChanged = (p: string) => inSubtrees(set, p);
  const tops = [...set].filter((d) => {
    const up = d.lastIndexOf('/');
    return up === -1 || !inChanged(d.slice(0, up));
  });
  const watch = lc.watch.filter((w) => w.path.startsWith('/') || !inChanged(w.path));
  const ignoredDirs = ignoredDirsOf(root, tops);
  for (const t of tops) watchDirs(root, t, ignoredDirs, watch);
  const indexDigest = trackedDigest(root);
  if (indexDigest !== lc.indexDigest) return undefined;
  const listed = sortedListing([...lc.listed.filter((p) => !inChanged(p)), ...gitListed(root, tops)]);
  return { listed, cache: rulesAsWatched(root, watch) ? { ...lc, indexDigest, watch, listed } : undefined };
}

/** Whether p, or a directory p is in, is one of `dirs`. */
function inSubtrees(dirs: ReadonlySet<string>, p: string): boolean {
  if (dirs.has(p)) return true;
  for (let i = p.indexOf('/'); i !== -1; i = p.indexOf('/', i + 1)) if (dirs.has(p.slice(0, i))) return true;
  return false;
}

/**
 * The directories a checked listing cache vouches for: each was a directory when the listing was made,
 * and checkedListing has just found its lstat unchanged (type, inode and times), outside the subtrees
 * that changed. A directory's ancestors are watched whenever it is (watchDirs goes down from the top
 * through directories only), so a symlink or file put in place of one of them changes a watched stat.
 */
function vouchedDirs(lc: ListingCache, changed: readonly string[]): Set<string> {
  const set = new Set(changed);
  const out = new Set<string>();
  for (const w of lc.watch) {
    if (w.kind !== WATCH_DIR || w.stat === undefined || (w.stat.mode & S_IFMT) !== S_IFDIR || w.path.startsWith('/')) continue;
    if (set.size === 0 || !inSubtrees(set, w.path)) out.add(w.path);
  }
  return out;
}

/**
 * Whether a listed path's leading directories are all directories, as git asks of an index path
 * (has_symlink_leading_path): a path under a symlink or a non-directory is not in the work tree, and is
 * absent however the kernel would resolve it (through a symlinked directory, perhaps out of the tree).
 * Each directory is lstat'ed once, after its parent; those in `vouched` (vouchedDirs) need none.
 */
class LeadingDirs {
  private readonly seen = new Map<string, boolean>([['', true]]);
  constructor(
    private readonly root: string,
    private readonly vouched: ReadonlySet<string>,
  ) {}

  // The directory of the path asked about last, and its answer: a sorted listing asks about each
  // directory's files in a row, which then cost no slice and no lookup.
  private lastDir = '';
  private lastOk = true;

  /** Whether every directory on the way to the file rel is a directory. */
  leadTo(rel: string): boolean {
    const up = rel.lastIndexOf('/');
    if (up === -1) return true;
    if (up === this.lastDir.length && rel.startsWith(this.lastDir)) return this.lastOk;
    this.lastDir = rel.slice(0, up);
    this.lastOk = this.isDir(this.lastDir);
    return this.lastOk;
  }

  private isDir(d: string): boolean {
    const known = this.seen.get(d);
    if (known !== undefined) return known;
    const up = d.lastIndexOf('/');
    const ok = this.isDir(up === -1 ? '' : d.slice(0, up)) && (this.vouched.has(d) || lstatOrUndefined(`${this.root}/${d}`)?.isDirectory() === true);
    this.seen.set(d, ok);
    return ok;
  }
}

/** Stats taken already (CachedStats) of the first `count` of `paths` (in manifest order). */
interface KnownStats extends CachedStats {
  readonly paths: readonly string[];
}

/** lstatMany of paths in manifest order, taking the known stats of those it has (a cursor over them). */
class TakenStats {
  private j = 0;
  constructor(private readonly known: KnownStats) {}

  lstat(prefix: string, paths: readonly string[], helpers: StatHelpers | undefined): Float64Array {
    const { paths: kp, stats: ks, count } = this.known;
    const out = new Float64Array(STAT_FIELDS * paths.length);
    const todo: number[] = [];
    for (let i = 0; i < paths.length; i++) {
      const p = paths[i]!;
      while (this.j < count && kp[this.j] !== p && compareUtf8(kp[this.j]!, p) < 0) this.j++;
      if (this.j < count && kp[this.j] === p) {
        const from = STAT_FIELDS * this.j++;
        const to = STAT_FIELDS * i;
        for (let f = 0; f < STAT_FIELDS; f++) out[to + f] = ks[from + f]!;
      } else todo.push(i);
    }
    if (todo.length > 0) {
      const st = lstatMany(prefix, todo.map((i) => paths[i]!), helpers);
      for (let t = 0; t < todo.length; t++) for (let f = 0; f < STAT_FIELDS; f++) out[STAT_FIELDS * todo[t]! + f] = st[STAT_FIELDS * t + f]!;
    }
    return out;
  }
}

/**
 * lstat's each listed path (lstatMany, with the helper threads if given); missing ones (deleted tracked
 * files, paths under a symlink or a file: LeadingDirs) and directories (submodules) are not content. A
 * listing of more paths than a snapshot may hold files goes in windows of that many, so that it is
 * refused without lstat'ing every path. `known`: stats taken already (firstCachedChange's), not taken again.
 */
function statListed(
  root: string,
  listed: readonly string[],
  excluded: readonly string[],
  helpers: StatHelpers | undefined,
  vouched: ReadonlySet<string> = new Set(),
  known?: KnownStats,
): Listed {
  const paths = listed.filter((p) => !isToolState(p, excluded));
  const leading = new LeadingDirs(root, vouched);
  const out = new Listed();
  const taken = known === undefined ? undefined : new TakenStats(known);
  for (let w = 0; w < paths.length; w += MAX_SNAPSHOT_FILES) {
    const window = (paths.length <= MAX_SNAPSHOT_FILES ? paths : paths.slice(w, w + MAX_SNAPSHOT_FILES)).filter((p) => leading.leadTo(p));
    const st = taken === undefined ? lstatMany(root + '/', window, helpers) : taken.lstat(root + '/', window, helpers);
    for (let i = 0; i < window.length; i++) {
      const mode = st[STAT_FIELDS * i]!;
      if (mode !== 0 && (mode & S_IFMT) !== S_IFDIR) out.pushNumbers(window[i]!, st, STAT_FIELDS * i);
    }
    if (out.length > MAX_SNAPSHOT_FILES) throw badInput(`workspace has more than ${MAX_SNAPSHOT_FILES} files`, 'WORKSPACE_TOO_LARGE');
  }
  return out;
}

/**
 * Lists the workspace, reusing the stat cache's listing when it still answers (a checkpoint only when
 * made in the same git environment; the Stop hook compares with the checkpoint's own file set, so it
 * takes it whatever its environment). `listing` is the cache to keep with the new scan. `from`: a
 * stat cache, or an earlier scan of this tree (its listing, with that scan's start as the racy bound).
 * `fine`: whether the tree's timestamps are fine ones from this host (FineTimes). `known`: stats of
 * files taken already (statListed).
 */
function listFiles(
  root: string,
  from: { readonly listing?: ListingCache | undefined; readonly scannedAtMs: number } | undefined,
  anyGitEnv: boolean,
  stateDirs: readonly string[],
  fine: FineTimes,
  known?: KnownStats,
): { files: Listed; listing: ListingCache | undefined } {
  const st = lstatOrUndefined(root);
  if (!st || !st.isDirectory()) throw badInput(`workspace ${root} is not a directory`, 'BAD_WORKSPACE');
  const excluded = excludedDirsOf(root, stateDirs);
  const lc = from?.listing;
  const reusable = lc !== undefined && (anyGitEnv || lc.envDigest === gitEnvDigest());
  // Helper threads for the lstat calls of a large listing start now, to be running when they come;
  // they stop when the listing is done.
  const knownCount = known?.count ?? 0;
  let helpers = reusable ? StatHelpers.start(lc.listed.length - knownCount + lc.watch.length) : undefined;
  try {
    const changed: string[] = [];
    const kept = reusable ? checkedListing(root, lc, from!.scannedAtMs, fine, helpers, changed) : undefined;
    if (kept !== undefined && changed.length === 0) return { files: statListed(root, kept.listed, excluded, helpers, vouchedDirs(kept, changed), known), listing: kept };
    const g = gitRoot(root);
    if (g !== undefined) {
      const relisted = kept !== undefined ? relistDirs(root, kept, changed) : undefined;
      const { listed, cache: made } = relisted ?? gitListing(root, g);
      helpers ??= StatHelpers.start(listed.length - knownCount);
      // Outside the subtrees listed again, the cache's watched directories still vouch for theirs.
      return { files: statListed(root, listed, excluded, helpers, relisted !== undefined ? vouchedDirs(kept!, changed) : undefined, known), listing: made };
    }
  } finally {
    helpers?.stop();
  }
  const out = new Listed();
  walk(root, '', out, excluded);
  return { files: out.sorted(), listing: undefined };
}

function walk(root: string, rel: string, out: Listed, excluded: readonly string[]): void {
  const dir = path.join(root, rel);
  const entries = fs.readdirSync(dir, { withFileTypes: true });
  // A name that is not UTF-8 comes back with U+FFFD in it, and would be looked up as another name.
  if (entries.some((d) => d.name.includes('\uFFFD')) && fs.readdirSync(dir, { encoding: 'buffer' }).some((b) => !isUtf8(b))) {
    throw badInput(`a file name in workspace directory ${rel === '' ? '.' : rel} is not UTF-8; such a path cannot be recorded`, 'BAD_WORKSPACE');
  }
  for (const d of entries) {
    const p = rel === '' ? d.name : `${rel}/${d.name}`;
    if (isToolState(p, excluded)) continue;
    if (d.isDirectory()) walk(root, p, out, excluded);
    else if (d.isFile() || d.isSymbolicLink()) {
      const s = lstatOrUndefined(path.join(root, p));
      if (s === undefined) throw badInput('a workspace file was removed during the scan; retry', 'WORKSPACE_CHANGED');
      out.push(p, s);
    } else throw badInput(`workspace entry ${p} is not a regular file, directory or symlink`, 'BAD_WORKSPACE');
    if (out.length > MAX_SNAPSHOT_FILES) throw badInput(`workspace has more than ${MAX_SNAPSHOT_FILES} files`, 'WORKSPACE_TOO_LARGE');
  }
}

/** A symlink is kept (as its target text) only when the target stays inside the workspace. */
function checkedLinkTarget(root: string, rel: string): string {
  let raw: Buffer;
  try {
    raw = fs.readlinkSync(path.join(root, rel), { encoding: 'buffer' });
  } catch (e) {
    // The listing found a symlink here: it has been removed or replaced (by a file: EINVAL) since.
    if (replaced(e)) throw badInput(`workspace symlink ${rel} changed while it was read; retry`, 'WORKSPACE_CHANGED');
    throw e;
  }
  // The manifest keeps a target as text: one that is not UTF-8 would be recorded as other bytes.
  if (!isUtf8(raw)) throw badInput(`workspace symlink ${rel} has a target that is not UTF-8 text; refusing it`, 'BAD_WORKSPACE');
  const target = raw.toString('utf8');
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

/**
 * Errors of opening, reading or lstat'ing a path the listing found as a regular file or a symlink that
 * say it has been replaced since: removed (ENOENT), its directory replaced by a file (ENOTDIR), a
 * symlink now (ELOOP, from O_NOFOLLOW), a socket or FIFO (ENXIO), a directory (EISDIR), not a symlink
 * any more (EINVAL, from readlink).
 */
const REPLACED = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'ENXIO', 'EISDIR', 'EINVAL']);

const replaced = (e: unknown) => REPLACED.has((e as NodeJS.ErrnoException).code ?? '');

/** Whether st is the lstat the listing took of file i (mode, size, mtime, ctime, inode). */
function asListed(st: fs.Stats | undefined, files: Listed, i: number): boolean {
  const s = files.stats;
  const k = 5 * i;
  return st !== undefined && st.mode === s[k] && st.size === s[k + 1] && st.mtimeMs === s[k + 2] && st.ctimeMs === s[k + 3] && st.ino === s[k + 4];
}

/**
 * A listed regular file's bytes, read once, and refused (WORKSPACE_CHANGED) unless what was opened is
 * the file the listing took the lstat of, and its lstat after the read is still that one: a file
 * written meanwhile could have been read as a mix of its old and new bytes, which no version of it
 * held. Opened without following a symlink and without blocking (a FIFO put in its place would wait
 * for a writer forever), and read from the descriptor that fstat checked: a directory, FIFO or other
 * file swapped in is never read.
 */
function readListedFile(root: string, rel: string, files: Listed, i: number): Buffer {
  const file = path.join(root, rel);
  const changed = () => badInput(`workspace file ${rel} changed while it was read; retry`, 'WORKSPACE_CHANGED');
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (e) {
    throw replaced(e) ? changed() : e;
  }
  let bytes: Buffer;
  try {
    const size = files.size(i);
    if (!asListed(fs.fstatSync(fd), files, i)) throw changed();
    bytes = Buffer.allocUnsafeSlow(size);
    for (let n = 0; n < size; ) {
      const got = fs.readSync(fd, bytes, n, size - n, n);
      // Shorter than its listed size: cut meanwhile.
      if (got === 0) throw changed();
      n += got;
    }
  } finally {
    fs.closeSync(fd);
  }
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(file, { throwIfNoEntry: false });
  } catch (e) {
    if (!replaced(e)) throw e;
  }
  if (!asListed(st, files, i)) throw changed();
  return bytes;
}

/** Errors of reading a workspace path that are the workspace's, not the local store's: what the user can fix there. */
const UNREADABLE = new Set(['EACCES', 'EPERM', 'ENAMETOOLONG', 'ELOOP']);

/** Errors of a workspace path that say it was replaced by another kind of file since it was listed (REPLACED but a link loop). */
const SWAPPED = new Set(['ENOENT', 'ENOTDIR', 'ENXIO', 'EISDIR', 'EINVAL']);

/**
 * A file system error met while a checkpoint scanned root, as the workspace's: a path under root (not
 * in the data dir) that disappeared or was replaced by another kind of file between listing and
 * reading (the workspace changed meanwhile, WORKSPACE_CHANGED) or that cannot be read (BAD_WORKSPACE,
 * exit 3, not the local store's exit 9).
 */
export function workspaceError(e: unknown, root: string, dataDir: string): unknown {
  // An lstat's FS_ERROR (lstatOrUndefined, lstatMany) keeps the system error, with its path, as its cause.
  const sys = e instanceof AgentscmError && e.code === 'FS_ERROR' && e.cause !== undefined ? e.cause : e;
  const { code, path: p } = (sys ?? {}) as { code?: unknown; path?: unknown };
  if (typeof p !== 'string' || !p.startsWith(`${root}/`) || p === dataDir || p.startsWith(`${dataDir}/`)) return e;
  if (typeof code === 'string' && SWAPPED.has(code)) return badInput(`a workspace file was removed or replaced during the checkpoint (${code}); retry`, 'WORKSPACE_CHANGED');
  if (typeof code === 'string' && UNREADABLE.has(code)) return badInput(`workspace path ${p.slice(root.length + 1)} cannot be read (${code})`, 'BAD_WORKSPACE');
  return e;
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

/**
 * A decoded stat cache: the snapshot its entries belong to, when the scan that took them began, and
 * its entries as they are encoded (one buffer, read where needed: no object per entry).
 */
export interface StatCache {
  readonly revision: string;
  readonly scannedAtMs: number;
  /** How many manifest entries the snapshot has (symlinks included). */
  readonly manifestEntries: number;
  /** Regular files only, in manifest order (symlinks are read again on every scan: their check needs the tree). */
  readonly paths: readonly string[];
  /** The encoded bytes (without the checksum), and where each entry's record and its fixed part (st_mode on) begin. */
  readonly bytes: Buffer;
  readonly starts: Int32Array;
  readonly fixed: Int32Array;
  /** The listing it was made with, when that may be reused (a git work tree), and where its section begins (0: none). */
  readonly listing: ListingCache | undefined;
  readonly listingAt: number;
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
 * The margin for a file whose times have sub-second parts in a tree on a local Linux file system with
 * nothing mounted beneath it (fineTimestamps, ../fs/timestamps.ts): there a timestamp tick is the
 * kernel's coarse clock tick (at most 10 ms, at HZ=100), and this is five of them. A file written
 * and then checkpointed at once (a script, a test) is then trusted by the next scan, instead of being
 * hashed again (and its directory listed again) on every scan until the next checkpoint.
 */
export const RACY_FINE_MARGIN_MS = 50;

/**
 * Whether a cached entry still describes the file: the same size, mtime, ctime, inode and mode, and
 * not racily clean against the cache's scan start (`fine`: with RACY_FINE_MARGIN_MS where its times
 * allow it).
 */
export const statClean = (c: StatKey, st: fs.Stats, scannedAtMs: number, fine = false): boolean =>
  keyClean(c, st.mode, st.size, st.mtimeMs, st.ctimeMs, st.ino, scannedAtMs, fine ? FINE_TIMES : COARSE_TIMES);

/**
 * Whether the tree's timestamps are fine ones from this host (fineTimestamps): asked only about a stat
 * within RACY_MARGIN_MS of the scan start, so that a scan whose files are all older never asks (the
 * answer reads the mount table).
 */
type FineTimes = () => boolean;
const COARSE_TIMES: FineTimes = () => false;
const FINE_TIMES: FineTimes = () => true;

/** statClean of a stat given as its five numbers. */
function keyClean(c: StatKey, mode: number, size: number, mtimeMs: number, ctimeMs: number, ino: number, scannedAtMs: number, fine: FineTimes): boolean {
  return c.mode === mode && c.size === size && c.mtimeMs === mtimeMs && c.ctimeMs === ctimeMs && c.ino === ino && notRacy(mtimeMs, ctimeMs, scannedAtMs, fine);
}

/**
 * Whether a stat with these times may be trusted by a cache whose scan began at scannedAtMs:
 * RACY_MARGIN_MS before it, or RACY_FINE_MARGIN_MS in a tree with fine timestamps (`fine`) for a file
 * whose times show them.
 */
function notRacy(mtimeMs: number, ctimeMs: number, scannedAtMs: number, fine: FineTimes): boolean {
  const newest = Math.max(mtimeMs, ctimeMs);
  return newest < scannedAtMs - RACY_MARGIN_MS || (newest < scannedAtMs - RACY_FINE_MARGIN_MS && subSecondTimes(mtimeMs, ctimeMs) && fine());
}

/** statClean against entry i of a decoded cache, read from its bytes: the five numbers of a stat at s[k]. */
function entryClean(c: StatCache, i: number, s: Float64Array, k: number, fine: FineTimes): boolean {
  const b = c.bytes;
  const o = c.fixed[i]!;
  return (
    b.readUInt32LE(o) === s[k] &&
    b.readDoubleLE(o + 4) === s[k + 1] &&
    b.readDoubleLE(o + 12) === s[k + 2] &&
    b.readDoubleLE(o + 20) === s[k + 3] &&
    b.readDoubleLE(o + 28) === s[k + 4] &&
    notRacy(s[k + 2]!, s[k + 3]!, c.scannedAtMs, fine)
  );
}

/** Entry i of a decoded cache as a manifest entry. */
function cachedManifestEntry(c: StatCache, i: number): ManifestEntry {
  const b = c.bytes;
  const o = c.fixed[i]!;
  return { path: c.paths[i]!, mode: (b.readUInt32LE(o) & 0o111) !== 0 ? MODE_EXEC : MODE_FILE, size: b.readDoubleLE(o + 4), sha256: b.toString('hex', o + 36, o + 68) };
}

const CACHE_MAGIC_V1 = 0x31435341; // "ASC1", little-endian: entries only
const CACHE_MAGIC_V2 = 0x32435341; // "ASC2": entries, then the listing section
const CACHE_MAGIC = 0x33435341; // "ASC3": as ASC2, then the SHA-256 of all bytes before it
const CHECKSUM = 32;
const ENTRY_FIXED = 4 + 4 + 8 * 4 + 32;
const WATCH_FIXED = 1 + 4 + 4 + 8 * 4;
/** In the listing section, a path length that means "the next cache entry's path". */
const NEXT_ENTRY = 0xffffffff;

/** Writes the parts of an encoding into one buffer. */
class Writer {
  private readonly parts: Buffer[] = [];
  private cur = Buffer.allocUnsafe(1 << 16);
  private at = 0;
  private room(n: number): void {
    if (this.at + n <= this.cur.length) return;
    this.parts.push(this.cur.subarray(0, this.at));
    this.cur = Buffer.allocUnsafe(Math.max(1 << 16, n));
    this.at = 0;
  }
  u8(v: number): void {
    this.room(1);
    this.at = this.cur.writeUInt8(v, this.at);
  }
  u32(v: number): void {
    this.room(4);
    this.at = this.cur.writeUInt32LE(v >>> 0, this.at);
  }
  f64(v: number): void {
    this.room(8);
    this.at = this.cur.writeDoubleLE(v, this.at);
  }
  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.cur.set(b, this.at);
    this.at += b.length;
  }
  str(s: string): void {
    const n = Buffer.byteLength(s, 'utf8');
    this.u32(n);
    this.room(n);
    this.at += this.cur.write(s, this.at, 'utf8');
  }
  hex32(h: string): void {
    this.room(32);
    this.at += this.cur.write(h, this.at, 32, 'hex');
  }
  stat(s: StatKey | undefined): void {
    this.u32(s?.mode ?? 0);
    this.f64(s?.size ?? 0);
    this.f64(s?.mtimeMs ?? 0);
    this.f64(s?.ctimeMs ?? 0);
    this.f64(s?.ino ?? 0);
  }
  done(): Buffer {
    this.parts.push(this.cur.subarray(0, this.at));
    return Buffer.concat(this.parts);
  }
}

/** One entry of a new cache: taken over from an old cache (by index), or read now. */
type NewEntry = { readonly from: StatCache; readonly i: number } | CachedEntry;

function encodeCache(entries: readonly NewEntry[], manifestEntries: number, listing: ListingCache | undefined): Buffer {
  const body = encodeCacheBody(entries, manifestEntries, listing);
  return Buffer.concat([body, Buffer.from(sha256Hex(body), 'hex')]);
}

/** The bytes of an encoding before its checksum. */
function encodeCacheBody(entries: readonly NewEntry[], manifestEntries: number, listing: ListingCache | undefined): Buffer {
  const w = new Writer();
  w.u32(CACHE_MAGIC);
  w.u32(manifestEntries);
  w.u32(entries.length);
  const paths: string[] = new Array(entries.length);
  // Entries taken over from one cache in a row are one range of its bytes, copied at once.
  let sameAsOld: StatCache | undefined = entries.length > 0 && 'from' in entries[0]! ? entries[0].from : undefined;
  for (let k = 0; k < entries.length; ) {
    const e = entries[k]!;
    if ('from' in e) {
      let end = k + 1;
      while (end < entries.length) {
        const x = entries[end]!;
        if (!('from' in x) || x.from !== e.from || x.i !== e.i + (end - k)) break;
        end++;
      }
      const last = e.i + (end - k) - 1;
      w.bytes(e.from.bytes.subarray(e.from.starts[e.i]!, e.from.fixed[last]! + ENTRY_FIXED - 4));
      for (let x = k; x < end; x++) paths[x] = e.from.paths[e.i + (x - k)]!;
      k = end;
      continue;
    }
    w.str(e.path);
    w.stat(e.stat);
    w.hex32(e.sha256);
    paths[k] = e.path;
    k++;
  }
  if (listing === undefined) {
    w.u8(0);
    return w.done();
  }
  // The listing an old cache had, with the same regular-file paths: its section is the same bytes.
  if (sameAsOld !== undefined && (sameAsOld.listing !== listing || sameAsOld.paths.length !== paths.length || !paths.every((p, i) => p === sameAsOld!.paths[i]))) sameAsOld = undefined;
  if (sameAsOld !== undefined && sameAsOld.listingAt > 0) {
    w.bytes(sameAsOld.bytes.subarray(sameAsOld.listingAt));
    return w.done();
  }
  w.u8(1);
  w.hex32(listing.envDigest);
  w.hex32(listing.indexDigest);
  w.u32(listing.watch.length);
  for (const x of listing.watch) {
    w.u8(x.kind);
    w.str(x.path);
    w.stat(x.stat);
  }
  w.u32(listing.listed.length);
  let next = 0;
  for (const p of listing.listed) {
    if (next < paths.length && paths[next] === p) {
      w.u32(NEXT_ENTRY);
      next++;
    } else w.str(p);
  }
  return w.done();
}

/**
 * Encodes cache entries (little-endian u32 and f64): magic, the snapshot's manifest entry count, the
 * cache's entry count, then per entry path length, path, st_mode, size, mtime, ctime, inode, digest;
 * then a listing section (a u8 0, or 1 and the listing cache: the git environment's digest, the
 * watched paths with kind and stat, the listed paths, a cache entry's path written as NEXT_ENTRY);
 * last the SHA-256 of every byte before it (as git's index ends with its checksum), so that a cache
 * whose bytes changed on disk is refused rather than trusted.
 */
export function encodeStatCache(entries: readonly CachedEntry[], manifestEntries: number, listing?: ListingCache): Buffer {
  return encodeCache(entries, manifestEntries, listing);
}

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Decodes encodeStatCache's bytes (and those of before: without a checksum, or also without a listing);
 * STORE_CORRUPT when they are not such bytes or not those their checksum was taken of.
 */
export function decodeStatCache(revision: string, scannedAtMs: number, encoded: Buffer): StatCache {
  const corrupt = () => localState('workspace stat cache is malformed', 'STORE_CORRUPT');
  if (encoded.length < 12) throw corrupt();
  const magic = encoded.readUInt32LE(0);
  if (magic !== CACHE_MAGIC && magic !== CACHE_MAGIC_V2 && magic !== CACHE_MAGIC_V1) throw corrupt();
  // The entries and the listing: the bytes before the checksum (offsets below are into them).
  const b = magic === CACHE_MAGIC ? encoded.subarray(0, encoded.length - CHECKSUM) : encoded;
  if (magic === CACHE_MAGIC && (b.length < 12 || sha256Hex(b) !== encoded.toString('hex', b.length))) throw corrupt();
  const manifestEntries = b.readUInt32LE(4);
  const count = b.readUInt32LE(8);
  if (count > manifestEntries || manifestEntries > MAX_SNAPSHOT_FILES) throw corrupt();
  const paths: string[] = new Array(count);
  const starts = new Int32Array(count);
  const fixed = new Int32Array(count);
  let o = 12;
  // The whole buffer as one one-byte string: an ASCII path is a slice of it (no decoding, no copy),
  // only a path with other bytes is decoded from UTF-8 on its own.
  const text = b.toString('latin1');
  const str = (): string => {
    if (o + 4 > b.length) throw corrupt();
    const n = b.readUInt32LE(o);
    if (o + 4 + n > b.length) throw corrupt();
    let s = text.slice(o + 4, o + 4 + n);
    if (NON_ASCII.test(s)) s = b.toString('utf8', o + 4, o + 4 + n);
    o += 4 + n;
    return s;
  };
  // The order is not checked again here (a cache out of order only finds fewer entries clean: the
  // scan then reads those files).
  for (let i = 0; i < count; i++) {
    starts[i] = o;
    const p = str();
    if (o + ENTRY_FIXED - 4 > b.length) throw corrupt();
    paths[i] = p;
    fixed[i] = o;
    o += ENTRY_FIXED - 4;
  }
  let listing: ListingCache | undefined;
  const listingAt = o;
  if (magic !== CACHE_MAGIC_V1) {
    if (o + 1 > b.length) throw corrupt();
    const flag = b.readUInt8(o++);
    if (flag > 1) throw corrupt();
    if (flag === 1) {
      if (o + 68 > b.length) throw corrupt();
      const envDigest = b.toString('hex', o, o + 32);
      const indexDigest = b.toString('hex', o + 32, o + 64);
      o += 64;
      const nw = b.readUInt32LE(o);
      o += 4;
      if (nw > 4 * MAX_SNAPSHOT_FILES + 64) throw corrupt();
      const watch: WatchItem[] = [];
      for (let i = 0; i < nw; i++) {
        if (o + 1 > b.length) throw corrupt();
        const kind = b.readUInt8(o++);
        if (kind > WATCH_INDEX) throw corrupt();
        const p = str();
        if (o + WATCH_FIXED - 5 > b.length) throw corrupt();
        const mode = b.readUInt32LE(o);
        const stat = mode === 0 ? undefined : { mode, size: b.readDoubleLE(o + 4), mtimeMs: b.readDoubleLE(o + 12), ctimeMs: b.readDoubleLE(o + 20), ino: b.readDoubleLE(o + 28) };
        o += WATCH_FIXED - 5;
        watch.push({ kind, path: p, stat });
      }
      if (o + 4 > b.length) throw corrupt();
      const nl = b.readUInt32LE(o);
      o += 4;
      if (nl > 2 * MAX_SNAPSHOT_FILES) throw corrupt();
      const listed: string[] = new Array(nl);
      let next = 0;
      for (let i = 0; i < nl; i++) {
        if (o + 4 > b.length) throw corrupt();
        if (b.readUInt32LE(o) === NEXT_ENTRY) {
          if (next >= count) throw corrupt();
          o += 4;
          listed[i] = paths[next++]!;
        } else listed[i] = str();
      }
      if (next !== count) throw corrupt();
      listing = { envDigest, indexDigest, watch, listed };
    }
  }
  if (o !== b.length) throw corrupt();
  return { revision, scannedAtMs, manifestEntries, paths, bytes: b, starts, fixed, listing, listingAt: listing === undefined ? 0 : listingAt };
}

// ---------------------------------------------------------------------------------------------------
// Scanning: the workspace's manifest now, reading only what the stat cache cannot vouch for.

/** One scanned file: its manifest entry and, for a regular file, the stat its digest goes with. */
interface Scanned extends ManifestEntry {
  readonly stat?: StatKey;
}

/** What a scan found: the entries, and whether each came unchanged from the cache (no file read). */
export interface WorkspaceScan {
  /** The manifest (made on first use: the Stop hook needs only the revision). */
  readonly manifest: Manifest;
  readonly revision: string;
  readonly fileCount: number;
  /** When the scan began (Date.now()): the racy-entry bound of a cache made from it. */
  readonly scannedAtMs: number;
  /** How many files were read (the others came from the stat cache). */
  readonly read: number;
  /** The stat cache of this scan (its regular files, and its listing when that may be reused). */
  statCache(): Buffer;
  /** manifestBytes(manifest). */
  manifestBytes(): Buffer;
}

const statKey = (st: fs.Stats): StatKey => ({ size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, mode: st.mode });

const BAD_PATH = /[\x00-\x1f\x7f]/;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const HEX_CODES = new Uint16Array(256).map((_, i) => HEX[i]!.charCodeAt(0) | (HEX[i]!.charCodeAt(1) << 8));

/** One manifest entry as its canonical JSON (keys in canonical order; a path string as JSON writes it). */
const entryJson = (e: ManifestEntry): string => `{"path":${JSON.stringify(e.path)},"mode":${e.mode},"size":${e.size},"sha256":"${e.sha256}"}`;

/**
 * manifestBytes for entries given one at a time: the same bytes (a test holds them equal), written
 * straight into one buffer. An entry from the stat cache is copied from its encoding (path bytes,
 * digest bytes as hex) without a string or an object of its own.
 */
function manifestBytesOf(n: number, entry: (i: number) => ManifestEntry | undefined, cached?: { cache: StatCache; at: Int32Array }): Buffer {
  let out = Buffer.allocUnsafe(64 + n * 160);
  let o = 0;
  const room = (k: number) => {
    if (o + k <= out.length) return;
    const more = Buffer.allocUnsafe(Math.max(out.length * 2, o + k));
    out.copy(more, 0, 0, o);
    out = more;
  };
  const ascii = (t: string) => {
    room(t.length);
    o += out.write(t, o, 'latin1');
  };
  ascii('{"version":1,"entries":[');
  for (let i = 0; i < n; i++) {
    if (i > 0) ascii(',');
    const k = cached ? cached.at[i]! : -1;
    if (k >= 0) {
      const c = cached!.cache;
      const b = c.bytes;
      const f = c.fixed[k]!;
      const p0 = c.starts[k]! + 4;
      let plain = true;
      for (let x = p0; x < f; x++) if (b[x] === 0x22 || b[x] === 0x5c) plain = false;
      if (plain) {
        room(f - p0 + 10);
        o += out.write('{"path":"', o, 'latin1');
        o += b.copy(out, o, p0, f);
        out[o++] = 0x22;
      } else {
        const t = `{"path":${JSON.stringify(c.paths[k]!)}`;
        room(Buffer.byteLength(t));
        o += out.write(t, o, 'utf8');
      }
      ascii(`,"mode":${(b.readUInt32LE(f) & 0o111) !== 0 ? MODE_EXEC : MODE_FILE},"size":${b.readDoubleLE(f + 4)},"sha256":"`);
      room(66);
      for (let x = f + 36; x < f + 68; x++) {
        const h = HEX_CODES[b[x]!]!;
        out[o++] = h & 0xff;
        out[o++] = h >> 8;
      }
      out[o++] = 0x22;
      out[o++] = 0x7d;
      continue;
    }
    const t = entryJson(entry(i)!);
    room(Buffer.byteLength(t));
    o += out.write(t, o, 'utf8');
  }
  ascii(']}');
  return out.subarray(0, o);
}

const MANIFEST_HEAD = Buffer.from('{"version":1,"entries":[', 'latin1');
const MANIFEST_TAIL = Buffer.from(']}', 'latin1');
const COMMA = Buffer.from(',', 'latin1');
/** Between two entries of canonical manifest bytes, and nowhere else (a quote inside a path string is escaped, and this one follows a brace). */
const ENTRY_SEAM = Buffer.from('"},{"', 'latin1');

/**
 * manifestBytesOf by the base snapshot's own manifest bytes: the entries taken from the stat cache are
 * the base's entries (one for one when the base has no symlinks), so each run of them is one range of
 * the base's bytes, copied as it is; only the entries read now are written. `base` gives the bytes of
 * the cache's snapshot, checked here against its revision. Undefined when that cannot be done (the
 * bytes missing, not the revision's, the base with symlinks): the caller writes every entry.
 */
function splicedManifestBytes(
  n: number,
  readEntries: readonly (ManifestEntry | undefined)[],
  cache: StatCache,
  at: Int32Array,
  base: (revision: string) => Buffer | undefined,
): Buffer | undefined {
  const count = cache.paths.length;
  if (count !== cache.manifestEntries || count === 0) return undefined;
  let b: Buffer | undefined;
  try {
    b = base(cache.revision);
  } catch {
    return undefined;
  }
  if (b === undefined || b.length < MANIFEST_HEAD.length + MANIFEST_TAIL.length + 2) return undefined;
  if (!b.subarray(0, MANIFEST_HEAD.length).equals(MANIFEST_HEAD) || !b.subarray(b.length - MANIFEST_TAIL.length).equals(MANIFEST_TAIL)) return undefined;
  if (domainDigest(DOMAINS.snapshot, b) !== cache.revision) return undefined;
  // Where the base's entries begin, found as far as they are needed: pos[k] is entry k's "{".
  const pos = new Int32Array(count + 1).fill(-1);
  pos[0] = MANIFEST_HEAD.length;
  // One past the last entry's "}" (the comma before entry `count`, or the closing bracket).
  pos[count] = b.length - MANIFEST_TAIL.length + 1;
  let known = 0;
  const start = (k: number): number => {
    while (known < k) {
      const seam = b!.indexOf(ENTRY_SEAM, pos[known]!);
      if (seam < 0 || seam >= pos[count]!) throw new RangeError('manifest entries');
      pos[++known] = seam + 3;
    }
    return pos[k]!;
  };
  const parts: Buffer[] = [MANIFEST_HEAD];
  try {
    for (let i = 0; i < n; ) {
      if (i > 0) parts.push(COMMA);
      const k = at[i]!;
      if (k < 0) {
        parts.push(Buffer.from(entryJson(readEntries[i]!), 'utf8'));
        i++;
        continue;
      }
      let end = i + 1;
      while (end < n && at[end] === k + (end - i)) end++;
      const last = k + (end - i) - 1;
      const from = start(k);
      // The run's last entry ends before the next one's "{" (or the closing bracket), its comma excluded.
      const to = last + 1 === count ? pos[count]! - 1 : start(last + 1) - 1;
      // The first path of each run is the cache's: the base is the snapshot the cache describes.
      const p0 = cache.starts[k]! + 4;
      const plen = cache.fixed[k]! - p0;
      if (b[from + 9 + plen] !== 0x22 || b.compare(cache.bytes, p0, cache.fixed[k]!, from + 9, from + 9 + plen) !== 0) return undefined;
      parts.push(b.subarray(from, to));
      i = end;
    }
  } catch (e) {
    if (e instanceof RangeError) return undefined;
    throw e;
  }
  parts.push(MANIFEST_TAIL);
  return Buffer.concat(parts);
}

export function fastManifestBytes(m: Manifest): Buffer {
  return manifestBytesOf(m.entries.length, (i) => m.entries[i]!);
}

/**
 * Scans the workspace: lists it, and for each regular file whose lstat matches its cache entry takes
 * the entry's digest; every other file (changed, new, racily clean, a symlink) is read once and hashed,
 * and handed to `onRead` with its bytes. Writes nothing. `anyGitEnv`: reuse the cache's listing
 * whatever the git environment (the Stop hook's comparison with the checkpoint's file set).
 */
export function scanWorkspace(
  root: string,
  cache?: StatCache,
  onRead?: (entry: ManifestEntry, bytes: Buffer) => void,
  opts: { anyGitEnv?: boolean; previous?: WorkspaceScan; stateDirs?: readonly string[]; baseManifest?: (revision: string) => Buffer | undefined; seen?: CachedStats } = {},
): WorkspaceScan {
  const scannedAtMs = Date.now();
  // An earlier scan of this tree with the same cache (the Stop hook's first read) made a listing whose
  // stats are as that scan found them. It answers for this scan instead of the cache's while they are
  // unchanged, so directories that scan had listed again are not listed again here. Its entries are
  // clean against that scan's start (those it kept from the cache's listing, against an earlier one),
  // so that start is their racy bound.
  const p = opts.previous === undefined ? undefined : scans.get(opts.previous);
  const prior = p !== undefined && p.root === root && p.cache === cache && p.listing !== undefined ? { listing: p.listing, scannedAtMs: opts.previous!.scannedAtMs } : undefined;
  const fine = () => fineTimestamps(root);
  const known = opts.seen !== undefined && cache !== undefined ? { ...opts.seen, paths: cache.paths } : undefined;
  const { files, listing } = listFiles(root, prior ?? cache, opts.anyGitEnv === true, opts.stateDirs ?? [], fine, known);
  const n = files.length;
  const fromCache = new Int32Array(n).fill(-1);
  const cp = cache?.paths;
  const cn = cp?.length ?? 0;
  let total = 0;
  let j = 0;
  for (let i = 0; i < n; i++) {
    const rel = files.paths[i]!;
    const mode = files.mode(i);
    // Both in manifest order: the cache entry of this path, if any, is at or after j.
    let hit = -1;
    if (cp !== undefined) {
      while (j < cn && cp[j] !== rel && compareUtf8(cp[j]!, rel) < 0) j++;
      if (j < cn && cp[j] === rel) hit = j++;
    }
    // A path in the cache was checked when it was recorded.
    if (hit < 0 && (rel.split('/').some((s) => s === '' || s === '.' || s === '..') || BAD_PATH.test(rel))) {
      throw badInput(`workspace path ${JSON.stringify(rel)} cannot be recorded`, 'BAD_WORKSPACE');
    }
    if (isRegular(mode)) total += files.size(i);
    else if (!isLink(mode)) throw badInput(`workspace entry ${rel} is not a regular file`, 'BAD_WORKSPACE');
    if (total > MAX_SNAPSHOT_BYTES) throw badInput('workspace is larger than the snapshot limit', 'WORKSPACE_TOO_LARGE');
    if (hit >= 0 && isRegular(mode) && entryClean(cache!, hit, files.stats, STAT_FIELDS * i, fine)) fromCache[i] = hit;
  }
  const readEntries: (Scanned | undefined)[] = new Array(n);
  let read = 0;
  for (let i = 0; i < n; i++) {
    if (fromCache[i]! >= 0) continue;
    const rel = files.paths[i]!;
    const mode = files.mode(i);
    read++;
    if (isLink(mode)) {
      const bytes = Buffer.from(checkedLinkTarget(root, rel), 'utf8');
      const e: Scanned = { path: rel, mode: MODE_SYMLINK, size: bytes.length, sha256: sha256Hex(bytes) };
      readEntries[i] = e;
      onRead?.(e, bytes);
      continue;
    }
    const bytes = readListedFile(root, rel, files, i);
    const e: CachedEntry = { path: rel, mode: (mode & 0o111) !== 0 ? MODE_EXEC : MODE_FILE, size: bytes.length, sha256: sha256Hex(bytes), stat: files.key(i) };
    readEntries[i] = e;
    onRead?.(e, bytes);
  }
  const entryAt = (i: number): ManifestEntry => {
    const e = readEntries[i];
    if (e !== undefined) return e;
    return cachedManifestEntry(cache!, fromCache[i]!);
  };
  // As many entries as the cached snapshot, each one of its entries unchanged: the manifest is that
  // snapshot's, and so is the revision (not computed again over every entry).
  let mbytes: Buffer | undefined;
  const bytesOfManifest = () =>
    (mbytes ??=
      (cache !== undefined && opts.baseManifest !== undefined ? splicedManifestBytes(n, readEntries, cache, fromCache, opts.baseManifest) : undefined) ??
      manifestBytesOf(n, (i) => readEntries[i], cache === undefined ? undefined : { cache, at: fromCache }));
  const revision =
    read === 0 && cache !== undefined && n === cache.manifestEntries
      ? cache.revision
      : sameAsPrevious(opts.previous, cache, fromCache, readEntries) ?? domainDigest(DOMAINS.snapshot, bytesOfManifest());
  let manifest: Manifest | undefined;
  const scan: WorkspaceScan = {
    manifestBytes: bytesOfManifest,
    get manifest(): Manifest {
      if (manifest === undefined) {
        const entries: ManifestEntry[] = new Array(n);
        for (let i = 0; i < n; i++) {
          const { path: p, mode, size, sha256 } = entryAt(i);
          entries[i] = { path: p, mode, size, sha256 };
        }
        manifest = { version: 1, entries };
      }
      return manifest;
    },
    revision,
    fileCount: n,
    scannedAtMs,
    read,
    statCache: () => {
      const entries: NewEntry[] = [];
      for (let i = 0; i < n; i++) {
        const k = fromCache[i]!;
        if (k >= 0) entries.push({ from: cache!, i: k });
        else {
          const e = readEntries[i]!;
          if (e.stat !== undefined) entries.push(e as CachedEntry);
        }
      }
      return encodeCache(entries, n, listing);
    },
  };
  scans.set(scan, { root, cache, fromCache, readEntries, listing });
  return scan;
}

interface ScanParts {
  readonly root: string;
  readonly cache: StatCache | undefined;
  /** The listing this scan made or reused (undefined: none that may be reused). */
  readonly listing: ListingCache | undefined;
  readonly fromCache: Int32Array;
  readonly readEntries: readonly (Scanned | undefined)[];
}
const scans = new WeakMap<WorkspaceScan, ScanParts>();

/**
 * The revision of an earlier scan by the same cache whose entries were the same: the same entries from
 * the cache, and the same path, mode, size and digest for each file read (so the same manifest).
 */
function sameAsPrevious(previous: WorkspaceScan | undefined, cache: StatCache | undefined, fromCache: Int32Array, readEntries: readonly (Scanned | undefined)[]): string | undefined {
  const p = previous === undefined ? undefined : scans.get(previous);
  if (p === undefined || p.cache !== cache || p.fromCache.length !== fromCache.length) return undefined;
  for (let i = 0; i < fromCache.length; i++) {
    if (p.fromCache[i] !== fromCache[i]) return undefined;
    const a = p.readEntries[i];
    const b = readEntries[i];
    if (a === undefined || b === undefined) {
      if (a !== b) return undefined;
      continue;
    }
    if (a.path !== b.path || a.mode !== b.mode || a.size !== b.size || a.sha256 !== b.sha256) return undefined;
  }
  return previous!.revision;
}

/** The stats firstCachedChange took of the first `count` files of a stat cache (`paths`), lstatMany's five numbers a file. */
export interface CachedStats {
  readonly stats: Float64Array;
  readonly count: number;
}

/** Files firstCachedChange looks at in its first step; each step takes twice as many, up to LOOK_MOST. */
const LOOK_FIRST = 1024;
const LOOK_MOST = 16384;

/**
 * The first file of a stat cache's snapshot, in manifest order, that the workspace no longer has as it
 * was: gone, or a regular file of another size, exec bit or bytes (read only when its stat changed and
 * its size did not). It stops there: the Stop hook blocks on any change, so one edited file of a large
 * tree costs the lstat calls of the files before it, not a scan of the tree (as `git diff --quiet`
 * stops at its first difference). Finding none does not make the tree clean (a file added, a symlink,
 * a rule changed): `seen` then holds the stats taken, for the full scan (readWorkspaceLater) to use
 * instead of an lstat of each file again. Whatever this cannot tell (an lstat or a read that fails, a
 * file of another kind) ends the look there, for the scan to answer as it always has.
 */
export function firstCachedChange(root: string, cache: StatCache): { changed: string } | { changed: undefined; seen: CachedStats } {
  const paths = cache.paths;
  const n = paths.length;
  const stats = new Float64Array(STAT_FIELDS * n);
  const fine = () => fineTimestamps(root);
  const unknown = (count: number) => ({ changed: undefined, seen: { stats, count } });
  let leading: LeadingDirs | undefined;
  const helpers = StatHelpers.start(n);
  try {
    for (let at = 0, step = LOOK_FIRST; at < n; at += step, step = Math.min(2 * step, LOOK_MOST)) {
      const end = Math.min(n, at + step);
      let st: Float64Array;
      try {
        st = lstatMany(root + '/', paths.slice(at, end), helpers);
      } catch {
        return unknown(at);
      }
      for (let i = at; i < end; i++) {
        const k = STAT_FIELDS * (i - at);
        const mode = st[k]!;
        const rel = paths[i]!;
        if (mode === 0) return { changed: rel };
        if (!isRegular(mode)) return unknown(i);
        for (let f = 0; f < STAT_FIELDS; f++) stats[STAT_FIELDS * i + f] = st[k + f]!;
        if (entryClean(cache, i, st, k, fine)) continue;
        const was = cachedManifestEntry(cache, i);
        if (st[k + 1] !== was.size || ((mode & 0o111) !== 0 ? MODE_EXEC : MODE_FILE) !== was.mode) return { changed: rel };
        // The same size and another stat: its bytes tell. A path under a directory that became a
        // symlink or a file is not the snapshot's file (LeadingDirs), and is not read.
        leading ??= new LeadingDirs(root, new Set());
        if (!leading.leadTo(rel)) return { changed: rel };
        let bytes: Buffer;
        try {
          const one = new Listed();
          one.pushNumbers(rel, st, k);
          bytes = readListedFile(root, rel, one, 0);
        } catch {
          return unknown(i);
        }
        if (sha256Hex(bytes) !== was.sha256) return { changed: rel };
      }
    }
    return unknown(n);
  } finally {
    helpers?.stop();
  }
}

/**
 * Reads the workspace now, read-only: scanned() gives the manifest and revision of the bytes as they
 * were read (the Stop hook's dirty check). With a stat cache, only the files whose stat changed are
 * read, and its listing is reused while it answers (whatever the git environment: the check compares
 * with the checkpoint's file set). `dataDir`: the store of the cache's snapshot, whose manifest bytes the
 * new manifest copies its unchanged entries from (only read). `seen`: the stats firstCachedChange took
 * of the cache's files, not taken again.
 */
export function readWorkspaceLater(
  root: string,
  cache?: StatCache,
  previous?: WorkspaceScan,
  stateDirs: readonly string[] = [],
  dataDir?: string,
  seen?: CachedStats,
): { scanned(): WorkspaceScan } {
  const store = dataDir === undefined ? undefined : new SnapshotStore(dataDir);
  const scan = scanWorkspace(root, cache, undefined, {
    anyGitEnv: true,
    stateDirs,
    ...(previous !== undefined ? { previous } : {}),
    ...(seen !== undefined ? { seen } : {}),
    ...(store !== undefined ? { baseManifest: (revision: string) => store.manifestBytes(revision) } : {}),
  });
  return { scanned: () => scan };
}

/**
 * The mode of a blob written now: read-only for everyone, inside owner-private directories. Stores made
 * before kept blobs at 0o400; a collector copies those instead of linking them.
 */
export const BLOB_MODE = 0o444;

/** What a checkpoint recorded: the snapshot, and the stat cache of its regular files. */
export interface RecordedSnapshot {
  readonly revision: string;
  readonly fileCount: number;
  readonly manifest: Manifest;
  readonly statCache: { readonly scannedAtMs: number; readonly entries: Buffer };
}

export class SnapshotStore {
  readonly root: string;
  /** The packs' indexes, loaded on the first read that needs them. */
  private readonly packs: PackSet;
  /** Blob directories this store has made or checked (materializeBlob checks each once). */
  private readonly blobDirs = new Set<string>();
  constructor(readonly dataDir: string) {
    this.root = path.join(dataDir, 'snapshots');
    this.packs = new PackSet(path.join(this.root, 'packs'));
  }

  /**
   * Rewrites the store's packs as one (repackPacks): each checkpoint adds a pack, and a reader loads
   * every pack's index. The data dir must be the owner's private directory, its packs directory no symlink.
   */
  repack(): RepackResult {
    assertPrivateDir(this.dataDir, 'data dir');
    const dir = path.join(this.root, 'packs');
    for (const d of [this.root, dir]) {
      const st = lstatOrUndefined(d);
      if (st && (st.isSymbolicLink() || !st.isDirectory())) throw localState(`${d} is not a directory of the snapshot store; refusing it`, 'STORE_CORRUPT');
    }
    return repackPacks(dir);
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
   * Files whose stat matches `cache` are neither read nor written: their blobs are in the packs of the
   * completed checkpoints before. Every other file is read once and its bytes go to this checkpoint's
   * pack, which is fsynced once before the manifest is published create-only (fsynced too). No loose
   * blob is written: a collector writes the ones it links (materializeBlob). An existing snapshot is
   * never rewritten, and a crash leaves at most an unnamed temporary pack.
   */
  record(workspace: string, cache?: StatCache): RecordedSnapshot {
    const root = fs.realpathSync(workspace);
    // The store's own directory too: a symlinked snapshots/ would publish packs elsewhere.
    ensurePrivateDir(this.root, 'snapshot store');
    ensurePrivateDir(path.join(this.root, 'manifests'), 'snapshot store');
    ensurePrivateDir(path.join(this.root, 'packs'), 'snapshot store');
    const pack = new PackWriter(path.join(this.root, 'packs'));
    let scan: WorkspaceScan;
    try {
      try {
        scan = scanWorkspace(root, cache, (e, bytes) => pack.add(e.sha256, bytes), {
          stateDirs: [this.dataDir],
          baseManifest: (revision) => this.manifestBytes(revision),
        });
      } catch (e) {
        throw workspaceError(e, root, this.dataDir);
      }
      pack.publish();
    } catch (e) {
      pack.discard();
      throw e;
    }
    const bytes = scan.manifestBytes();
    const revision = domainDigest(DOMAINS.snapshot, bytes);
    // An existing manifest (the same snapshot recorded before, perhaps by a writer still syncing it)
    // gets the directory fsync that publishing it would have given.
    if (!publishCreateOnly(this.manifestPath(revision), bytes, 0o400)) fsyncDir(path.join(this.root, 'manifests'));
    return { revision, fileCount: scan.fileCount, get manifest() { return scan.manifest; }, statCache: { scannedAtMs: scan.scannedAtMs, entries: scan.statCache() } };
  }

  /**
   * Writes a loose blob of bytes already checked against sha256, unless its name exists, and returns
   * its path: a temporary file linked to the blob's name (a name is never seen half-written), without
   * an fsync (a pack holds the durable copy; a loose blob is what a collector hard-links).
   */
  materializeBlob(sha256: string, bytes: Buffer): string {
    const file = this.blobPath(sha256);
    const dir = path.dirname(file);
    if (!this.blobDirs.has(dir)) {
      ensurePrivateDir(path.join(this.root, 'blobs'), 'snapshot store');
      // Made without a directory fsync: a blob lost with its directory in a crash is in a pack.
      if (!lstatOrUndefined(dir)) {
        try {
          fs.mkdirSync(dir, { mode: 0o700 });
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        }
        fs.chmodSync(dir, 0o700);
      }
      ensurePrivateDir(dir, 'snapshot store');
      this.blobDirs.add(dir);
    }
    if (lstatOrUndefined(file)) return file;
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
    return file;
  }

  /** A manifest's stored bytes, unchecked; undefined when they cannot be read. */
  manifestBytes(revision: string): Buffer | undefined {
    if (!HEX64.test(revision)) return undefined;
    try {
      return fs.readFileSync(this.manifestPath(revision));
    } catch {
      return undefined;
    }
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
   * Reads a blob of at most maxBytes, checked against its SHA-256: from the packs listed so far, else
   * the loose blob (a store made before packs), else a pack published since. A loose blob that is not
   * those bytes (torn by a crash before the system wrote it out) is passed over. Returns 'limit' when
   * over maxBytes, undefined when found nowhere.
   */
  readBlob(sha256: string, maxBytes: number): Buffer | 'limit' | undefined {
    const packed = this.packs.read(sha256, maxBytes, false);
    if (packed !== undefined) return packed;
    const loose = this.readLooseBlob(sha256, maxBytes);
    if (loose === 'limit') return loose;
    if (loose !== undefined && sha256Hex(loose) === sha256) return loose;
    return this.packs.read(sha256, maxBytes);
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
      return readExactly(fd, st.size, 0);
    } finally {
      fs.closeSync(fd);
    }
  }
}
