// One `agent-task collect` per attempt at a time, across processes, surviving the owner's crash.
//
// Two runs of the same attempt at once would each stage and place STATE/snapshots/<S> and race over the
// reservation: one replaces <S> under the other's running container, or removes the copy the other is
// about to mount. The lock is STATE/locks/<L>.lock (L: one digest component over the attempt id, which
// collect knows before it asks the Hub anything, so the lock comes before anything is staged, reserved
// or placed; the execution's own directory is named by the descriptor, which comes later).
//
// The file holds its owner's pid, the owner's start time (from /proc/PID/stat, so that a recycled pid is
// not taken for the owner) and a random nonce that makes each holding a distinct generation. It is
// written to a temp name and linked into place, so nobody ever reads a lock half written. A lock whose
// owner is gone (SIGKILL, crash, reboot) is taken over; only the holder of that generation's takeover
// guard (the same kind of lock, named after the stale content) may remove it, and only after reading it
// again under the guard, so two runs that both find a dead owner never both end up holding the lock.
// Nothing is fsynced: a lock never needs to outlive its owner.

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { canonicalJson, canonicalJsonBytes, parseStrictJson } from '../core/canonical/json.js';
import { DOMAINS, domainDigest } from '../core/crypto/digest.js';
import { conflict, localState } from '../core/errors.js';
import { ensurePrivateDir } from '../core/fs/safe.js';

export interface LockOwner {
  readonly pid: number;
  /** Clock ticks after boot (field 22 of /proc/PID/stat); null where /proc cannot be read. */
  readonly start: number | null;
  readonly nonce: string;
}

export interface CollectLock {
  readonly file: string;
  /** Removes the lock if it is still this holding (idempotent). */
  release(): void;
}

const LOCK_MAX_BYTES = 512;
/** Takeover guards nest only when a taker itself died inside its takeover; more than this is stuck. */
const MAX_GUARD_DEPTH = 4;

export function collectLockFile(stateDir: string, attemptId: string): string {
  return path.join(stateDir, 'locks', `${domainDigest(DOMAINS.collectLock, canonicalJsonBytes({ attempt_id: attemptId }))}.lock`);
}

/**
 * Takes the attempt's collect lock, or throws CONFLICT COLLECT_IN_PROGRESS (exit 7) when a live process
 * holds it. Creates the state dir and its locks dir (owner-private) if they are missing.
 */
export function acquireCollectLock(stateDir: string, attemptId: string): CollectLock {
  ensurePrivateDir(stateDir, 'collector state dir');
  ensurePrivateDir(path.join(stateDir, 'locks'), 'collector lock dir');
  const file = collectLockFile(stateDir, attemptId);
  const got = acquire(file, 0);
  if (got.busy) {
    throw conflict(
      `another agentscm agent-task collect (pid ${got.busy.pid}) is collecting attempt ${attemptId}; nothing was changed (run collect again once it has ended)`,
      'COLLECT_IN_PROGRESS',
      { pid: got.busy.pid },
    );
  }
  const mine = got.content;
  let held = true;
  return {
    file,
    release() {
      if (!held) return;
      held = false;
      // Ours until we remove it: a taker only removes a lock whose owner is dead.
      if (readLock(file)?.equals(mine)) unlinkQuiet(file);
    },
  };
}

function acquire(file: string, depth: number): { busy: LockOwner; content?: undefined } | { busy?: undefined; content: Buffer } {
  const me: LockOwner = { pid: process.pid, start: startTimeOf(process.pid), nonce: randomBytes(16).toString('hex') };
  const content = Buffer.from(canonicalJson({ pid: me.pid, start: me.start, nonce: me.nonce }) + '\n');
  // Each pass either takes the lock, finds a live owner, or removes one dead generation; the bound only
  // stops a pathological loop.
  for (let pass = 0; pass < 64; pass++) {
    if (linkNew(file, content)) return { content };
    const seen = readLock(file);
    if (seen === undefined) continue; // released meanwhile
    const owner = parseOwner(seen);
    if (owner && alive(owner)) return { busy: owner };
    // A dead owner (or a file no live process can have written: empty or garbled after a power loss).
    if (depth >= MAX_GUARD_DEPTH) throw localState(`the collect lock ${file} cannot be taken over (its takeover guards are stale too); remove ${file}* by hand once no collect runs`, 'LOCK_STUCK');
    const guard = `${file}.takeover-${domainDigest(DOMAINS.collectLock, seen).slice(0, 32)}`;
    const g = acquire(guard, depth + 1);
    if (g.busy) return { busy: g.busy }; // a live process is taking it over right now
    try {
      if (readLock(file)?.equals(seen)) unlinkQuiet(file);
    } finally {
      if (readLock(guard)?.equals(g.content)) unlinkQuiet(guard);
    }
  }
  throw localState(`the collect lock ${file} keeps changing hands; try again`, 'LOCK_STUCK');
}

/** Links a fully written temp file to `file`; false when `file` exists. */
function linkNew(file: string, content: Buffer): boolean {
  const tmp = `${file}.tmp-${randomBytes(8).toString('hex')}`;
  const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
  try {
    fs.writeSync(fd, content);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(tmp, file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    unlinkQuiet(tmp);
  }
}

function readLock(file: string): Buffer | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw localState(`the collect lock ${file} is a symlink; refusing it`, 'SYMLINK');
    throw e;
  }
  try {
    const buf = Buffer.alloc(LOCK_MAX_BYTES + 1);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

function parseOwner(bytes: Buffer): LockOwner | undefined {
  if (bytes.length > LOCK_MAX_BYTES) return undefined;
  try {
    const o = parseStrictJson(bytes, { maxBytes: LOCK_MAX_BYTES, what: 'collect lock' }) as Partial<LockOwner>;
    if (!Number.isSafeInteger(o.pid) || (o.pid as number) <= 0) return undefined;
    if (o.start !== null && !Number.isSafeInteger(o.start)) return undefined;
    if (typeof o.nonce !== 'string') return undefined;
    return { pid: o.pid as number, start: o.start as number | null, nonce: o.nonce };
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/PID/stat (start time in clock ticks), undefined when there is no such live process. */
function procStart(pid: number): number | null | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ESRCH') return fs.existsSync('/proc/self/stat') ? undefined : null;
    return null;
  }
  // The command name (field 2) is in parentheses and may contain spaces or parentheses itself.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  if (state === 'Z' || state === 'X' || state === 'x') return undefined; // exited, not yet reaped
  const start = Number(fields[19]);
  return Number.isSafeInteger(start) ? start : null;
}

function startTimeOf(pid: number): number | null {
  return procStart(pid) ?? null;
}

function alive(o: LockOwner): boolean {
  const start = procStart(o.pid);
  if (start === undefined) return false;
  if (start !== null && o.start !== null) return start === o.start;
  // No /proc: the pid alone decides (a recycled pid then looks alive, which only makes a run wait).
  try {
    process.kill(o.pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function unlinkQuiet(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}
