// Project-relative file access for activation. Every path is project-relative and normalized; no
// component may be a symlink; publication is create-only and never replaces or removes an existing
// final entry. publish() writes a temp file, fsyncs it, links it to the final name and fsyncs the
// directory, so the final name never shows partial bytes (managed files hosts read). publishOverlapped()
// (receipts, on the SessionStart hook's path) creates the final name itself and syncs the file and the
// directory together while other work runs: a reader that races it, or a crash before the syncs, can
// see a partial receipt, which verification rejects like any malformed one (not proof), and the hook
// answers only once both syncs succeeded.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { localState } from '../../errors.js';
import { fsyncDir, writeSyncedTemp } from '../../fs/safe.js';

/** Outcome of one create-only publication. */
export type PublishOutcome =
  /** The final entry did not exist and now holds exactly our bytes, durably. */
  | 'created'
  /** The final entry already existed; it was left untouched. */
  | 'exists'
  /** Published, but syncing a directory failed: durability is indeterminate; nothing is rolled back. */
  | 'indeterminate';

/**
 * Directory sync used after publication. Swappable only so a test can make it fail: a failing
 * fsync(2) on a directory cannot be produced on an ordinary local file system.
 */
let syncDirectory: (dir: string) => void = fsyncDir;
/** The same sync for publishOverlapped, on the thread pool; swapped together with syncDirectory. */
let syncDirectoryLater: (dir: string) => Promise<void> = fsyncDirOnThreadPool;
export function setDirectorySyncForTests(f: ((dir: string) => void) | undefined): void {
  syncDirectory = f ?? fsyncDir;
  // Like the real one, the fake completes later (after the current task), not at once.
  syncDirectoryLater = f
    ? (dir) =>
        new Promise((resolve, reject) =>
          setImmediate(() => {
            try {
              f(dir);
              resolve();
            } catch (e) {
              reject(e);
            }
          }),
        )
    : fsyncDirOnThreadPool;
}

/**
 * fsync(2) of an open descriptor (a written file, or a directory) on libuv's thread pool, so that the
 * caller's thread can go on meanwhile; the descriptor is closed either way.
 */
function fsyncOnThreadPool(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.fsync(fd, (err) => {
      try {
        fs.closeSync(fd);
      } catch {
        /* the sync's own outcome is what counts */
      }
      if (err) reject(err);
      else resolve();
    });
  });
}

function fsyncDirOnThreadPool(dir: string): Promise<void> {
  return fsyncOnThreadPool(fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY));
}

export class ProjectFs {
  constructor(readonly projectRoot: string) {}

  abs(rel: string): string {
    return path.join(this.projectRoot, ...rel.split('/'));
  }

  /** lstat of every component below the project root; throws on a symlink or non-directory parent. */
  private checkParents(rel: string): 'ok' | 'missing' {
    const segs = rel.split('/');
    let cur = this.projectRoot;
    for (let i = 0; i < segs.length - 1; i++) {
      cur = path.join(cur, segs[i]!);
      let st: fs.Stats;
      try {
        st = fs.lstatSync(cur);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
        throw localState(`cannot inspect ${segs.slice(0, i + 1).join('/')}`, 'FS_ERROR');
      }
      if (st.isSymbolicLink()) throw localState(`${segs.slice(0, i + 1).join('/')} is a symlink; refusing it`, 'SYMLINK');
      if (!st.isDirectory()) throw localState(`${segs.slice(0, i + 1).join('/')} is not a directory`, 'NOT_A_DIRECTORY');
    }
    return 'ok';
  }

  /** Bytes of a regular, non-symlink project file, or undefined when it is absent. */
  read(rel: string, maxBytes = 1 << 20): Buffer | undefined {
    if (this.checkParents(rel) === 'missing') return undefined;
    const file = this.abs(rel);
    let fd: number;
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return undefined;
      if (code === 'ELOOP') throw localState(`${rel} is a symlink; refusing it`, 'SYMLINK');
      throw localState(`cannot open ${rel}: ${code ?? 'error'}`, 'FS_ERROR');
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) throw localState(`${rel} is not a regular file`, 'NOT_A_FILE');
      if (st.size > maxBytes) throw localState(`${rel} is larger than ${maxBytes} bytes`, 'TOO_LARGE');
      return fs.readFileSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Kind of the final entry without following it. */
  kind(rel: string): 'absent' | 'file' | 'dir' | 'symlink' | 'other' {
    if (this.checkParents(rel) === 'missing') return 'absent';
    try {
      const st = fs.lstatSync(this.abs(rel));
      if (st.isSymbolicLink()) return 'symlink';
      if (st.isFile()) return 'file';
      if (st.isDirectory()) return 'dir';
      return 'other';
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
      throw e;
    }
  }

  /** Creates missing parent directories one by one (never through a symlink), syncing each parent. */
  private ensureParents(rel: string, dirMode: number): boolean {
    const segs = rel.split('/');
    let cur = this.projectRoot;
    let durable = true;
    for (let i = 0; i < segs.length - 1; i++) {
      const next = path.join(cur, segs[i]!);
      let st: fs.Stats | undefined;
      try {
        st = fs.lstatSync(next);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
      if (!st) {
        try {
          fs.mkdirSync(next, { mode: dirMode });
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        }
        try {
          syncDirectory(cur);
        } catch {
          durable = false;
        }
        st = fs.lstatSync(next);
      }
      if (st.isSymbolicLink()) throw localState(`${segs.slice(0, i + 1).join('/')} is a symlink; refusing it`, 'SYMLINK');
      if (!st.isDirectory()) throw localState(`${segs.slice(0, i + 1).join('/')} is not a directory`, 'NOT_A_DIRECTORY');
      cur = next;
    }
    return durable;
  }

  /** Create-only durable publication of bytes at rel. */
  publish(rel: string, bytes: string | Uint8Array, mode = 0o644, dirMode = 0o755): PublishOutcome {
    const linked = this.linkSynced(rel, bytes, mode, dirMode);
    if (linked === 'exists') return 'exists';
    try {
      syncDirectory(linked.dir);
    } catch {
      return 'indeterminate';
    }
    return linked.parentsDurable ? 'created' : 'indeterminate';
  }

  /**
   * Replaces a shared file (a host hook file another tool also writes) when it still holds `expected`,
   * keeping its mode: 'exists' when it changed meanwhile (left as it is), 'created' once replaced.
   */
  replaceIfUnchanged(rel: string, expected: Buffer, bytes: string): PublishOutcome {
    const current = this.read(rel);
    if (current === undefined || !current.equals(expected)) return 'exists';
    const file = this.abs(rel);
    const dir = path.dirname(file);
    const tmp = writeSyncedTemp(dir, file, bytes, fs.lstatSync(file).mode & 0o777);
    fs.renameSync(tmp, file);
    try {
      syncDirectory(dir);
    } catch {
      return 'indeterminate';
    }
    return 'created';
  }

  /**
   * Create-only publication of a small file whose readers verify it (a receipt): the final name is
   * created (O_EXCL, never through a symlink) and written, then the file's and the directory's fsyncs
   * run together on the thread pool while `meanwhile` runs on this thread. It resolves only once all
   * are done, so a caller reports nothing before the entry is durable; 'indeterminate' when a sync
   * failed. If meanwhile throws, the syncs are still awaited before the error propagates. A write that
   * fails removes the file it created.
   */
  async publishOverlapped<T>(
    rel: string,
    bytes: string | Uint8Array,
    mode: number,
    dirMode: number,
    meanwhile: () => T,
  ): Promise<{ outcome: 'exists' } | { outcome: 'created' | 'indeterminate'; value: T }> {
    const parentsDurable = this.ensureParents(rel, dirMode);
    const file = this.abs(rel);
    let fd: number;
    try {
      fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, mode);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return { outcome: 'exists' };
      throw e;
    }
    try {
      const b = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
      for (let off = 0; off < b.length; ) off += fs.writeSync(fd, b, off, b.length - off);
      fs.fchmodSync(fd, mode);
    } catch (e) {
      fs.closeSync(fd);
      fs.rmSync(file, { force: true });
      throw e;
    }
    const settled = (p: Promise<void>): Promise<boolean> =>
      p.then(
        () => true,
        () => false,
      );
    let synced: Promise<boolean>;
    try {
      const both = [settled(fsyncOnThreadPool(fd)), settled(syncDirectoryLater(path.dirname(file)))];
      synced = Promise.all(both).then(([f, d]) => f! && d!);
    } catch {
      synced = Promise.resolve(false);
    }
    let value: T;
    try {
      value = meanwhile();
    } catch (e) {
      await synced;
      throw e;
    }
    const durable = (await synced) && parentsDurable;
    return { outcome: durable ? 'created' : 'indeterminate', value };
  }

  /** The synced temp file linked to its final name (create-only), the temp name removed; the directory not yet synced. */
  private linkSynced(rel: string, bytes: string | Uint8Array, mode: number, dirMode: number): 'exists' | { dir: string; parentsDurable: boolean } {
    const parentsDurable = this.ensureParents(rel, dirMode);
    const file = this.abs(rel);
    const dir = path.dirname(file);
    const tmp = writeSyncedTemp(dir, file, bytes, mode);
    try {
      fs.linkSync(tmp, file);
    } catch (e) {
      fs.unlinkSync(tmp);
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return 'exists';
      throw e;
    }
    fs.unlinkSync(tmp);
    return { dir, parentsDurable };
  }
}
