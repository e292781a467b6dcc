// Materializing the exact immutable snapshot for a collector run, in two steps: stage it into a fresh
// owner-private directory, then move it to the attempt's own directory once the run is known to be
// fresh. Collect stages while it waits for the Hub and the engine, in a worker thread (stage-worker.ts)
// so that the copy of a large snapshot uses the machine's other core instead of delaying the main
// thread's own work (loading the answer schemas, checking the descriptor, reserving). The worker is
// started by stager.ts; this module is what it runs, and what collect's body bundles.
//
// Layout: STATE/snapshots/<S> is the attempt's directory (S: one digest component over the revision and
// the attempt); STATE/snapshots/<S>.staging-<random> is a staging directory.

import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { canonicalJsonBytes } from '../core/canonical/json.js';
import { DOMAINS, domainDigest } from '../core/crypto/digest.js';
import { localState, type ErrorKind } from '../core/errors.js';
import { ensurePrivateDir, lstatOrUndefined, writeNewFile } from '../core/fs/safe.js';
import { BLOB_MODE, MODE_EXEC, MODE_SYMLINK, SnapshotStore } from '../core/native/snapshot.js';

export interface StageRequest {
  readonly stateDir: string;
  readonly dataDir: string;
  readonly revision: string;
  readonly attemptId: string;
}

export function snapshotDirOf(stateDir: string, revision: string, attemptId: string): string {
  return path.join(stateDir, 'snapshots', domainDigest(DOMAINS.snapshot, canonicalJsonBytes({ revision, attempt_id: attemptId })));
}

/** Modes of materialized files: read-only, like the mount that shows them to the container. */
export const STAGED_FILE_MODE = BLOB_MODE;
export const STAGED_EXEC_MODE = 0o555;

/** link(2) failures that mean "copy instead": another file system, a refusing one, too many links. */
const COPY_INSTEAD = new Set(['EXDEV', 'EPERM', 'EMLINK', 'EACCES', 'ENOTSUP', 'EOPNOTSUPP']);

/** Regular files linked to their blobs whose bytes are still to be checked (verifyLinked). */
export interface LinkedUnverified {
  readonly dataDir: string;
  readonly entries: readonly { readonly path: string; readonly sha256: string }[];
}

/**
 * Writes the snapshot into a fresh owner-private staging directory next to its final place and returns
 * the staging path, with the check of the hard-linked files' bytes left to the caller (verifyLinked):
 * collect's worker hands the tree over at once, so that the container is created while the linked bytes
 * are read and hashed, and the container starts only once they matched. Only placeSnapshot touches the
 * attempt's own directory, which a container started by a crashed collector may still have mounted.
 *
 * A regular file whose blob is already what it must be (read-only for all, BLOB_MODE, owned by this
 * user) is hard-linked to it without reading it: creating a thousand new files costs far more than
 * linking them on some disks (about 0.4 ms each against 0.02 ms here, at times), and the blob is
 * immutable. A blob with no loose copy yet (a checkpoint writes packs only) is read from its pack,
 * checked, written as a loose blob once (SnapshotStore.materializeBlob) and linked, so that later runs
 * of the snapshots that share it only link. Every other entry (executables, symlinks, blobs of older
 * stores, a data dir on another file system) is read once, checked against its SHA-256 and written with O_EXCL|O_NOFOLLOW in the
 * mode a link would show, so the tree is the same either way: regular files 0o444, executables 0o555.
 * Every directory is made exactly once (EEXIST is corruption, not something to step over). Nothing is
 * fsynced: the snapshot is derived data, and a run that crashes before its container started finds no
 * container and stages again.
 */
export function stageLinkedSync(r: StageRequest): { dir: string; unverified: LinkedUnverified } {
  const parent = path.join(r.stateDir, 'snapshots');
  ensurePrivateDir(parent, 'collector snapshot parent');
  const snapshots = new SnapshotStore(r.dataDir);
  const manifest = snapshots.manifest(r.revision);
  if (!manifest) throw localState(`snapshot ${r.revision} is not in the local data dir`, 'SNAPSHOT_MISSING');
  const dir = `${snapshotDirOf(r.stateDir, r.revision, r.attemptId)}.staging-${randomBytes(8).toString('hex')}`;
  fs.mkdirSync(dir, { mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
  const linked: { path: string; sha256: string }[] = [];
  let linking = true;
  try {
    const made = new Set<string>();
    const mkdirOnce = (rel: string): void => {
      if (made.has(rel)) return;
      const slash = rel.lastIndexOf('/');
      if (slash > 0) mkdirOnce(rel.slice(0, slash));
      try {
        fs.mkdirSync(path.join(dir, rel), { mode: 0o755 });
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EEXIST' || code === 'ENOTDIR') throw localState(`snapshot path ${rel} crosses a non-directory`, 'SNAPSHOT_CORRUPT');
        throw e;
      }
      made.add(rel);
    };
    for (const e of manifest.entries) {
      const slash = e.path.lastIndexOf('/');
      if (slash > 0) mkdirOnce(e.path.slice(0, slash));
      const target = path.join(dir, e.path);
      if (linking && e.mode !== MODE_EXEC && e.mode !== MODE_SYMLINK) {
        let blob = snapshots.blobPath(e.sha256);
        let st = fs.lstatSync(blob, { throwIfNoEntry: false });
        // A checkpoint writes packs only: the first collector to link a blob writes it from its pack.
        if (st === undefined) {
          blob = snapshots.materializeBlob(e.sha256, checkedBlob(snapshots, e));
          st = fs.lstatSync(blob, { throwIfNoEntry: false });
        }
        // A blob of another size is not the entry's (after a crash a loose blob may be torn; the
        // copy below reads its bytes from the store's packs).
        if (st?.isFile() && st.size === e.size && (st.mode & 0o7777) === STAGED_FILE_MODE && st.uid === uid) {
          try {
            fs.linkSync(blob, target);
            linked.push({ path: e.path, sha256: e.sha256 });
            continue;
          } catch (err) {
            const code = (err as NodeJS.ErrnoException).code ?? '';
            if (!COPY_INSTEAD.has(code)) throw err;
            // EMLINK concerns this blob only; the others mean no link will work here.
            if (code !== 'EMLINK') linking = false;
          }
        }
      }
      const body = checkedBlob(snapshots, e);
      if (e.mode === MODE_SYMLINK) {
        fs.symlinkSync(body.toString('utf8'), target);
        continue;
      }
      // Exclusive and never through a link planted in the fresh tree; the mode whatever the umask.
      writeNewFile(target, body, e.mode === MODE_EXEC ? STAGED_EXEC_MODE : STAGED_FILE_MODE);
    }
  } catch (e) {
    discardStaged(dir);
    throw e;
  }
  return { dir, unverified: { dataDir: r.dataDir, entries: linked } };
}

/**
 * Reads every hard-linked file's blob and checks it against the manifest's SHA-256 (the staged file is
 * the same inode); throws SNAPSHOT_CORRUPT on the first that does not match or is gone.
 */
export function verifyLinked(u: LinkedUnverified): void {
  const snapshots = new SnapshotStore(u.dataDir);
  // The loose blob file itself: it is the inode the staged tree links.
  for (const e of u.entries) checkedBlob(snapshots, e, true);
}

/**
 * An entry's blob, read once and checked against its SHA-256; SNAPSHOT_CORRUPT when gone or different.
 * The store's readBlob (loose blob, else a pack), or only the loose blob file.
 */
function checkedBlob(snapshots: SnapshotStore, e: { readonly path: string; readonly sha256: string }, looseOnly = false): Buffer {
  const body = looseOnly ? snapshots.readLooseBlob(e.sha256, Number.MAX_SAFE_INTEGER) : snapshots.readBlob(e.sha256, Number.MAX_SAFE_INTEGER);
  if (body === undefined || body === 'limit' || createHash('sha256').update(body).digest('hex') !== e.sha256) throw localState(`snapshot blob of ${e.path} is missing or corrupt`, 'SNAPSHOT_CORRUPT');
  return body;
}

/** What a failed staging sends back from the worker: enough to rebuild the same error. */
export interface StageFailure {
  readonly kind?: ErrorKind;
  readonly code?: string;
  readonly message: string;
}

/**
 * Moves a staged snapshot to the attempt's directory and returns that path. Leftovers of crashed runs
 * of the same attempt (derived data; no container of this attempt exists when this is called) are
 * removed: an old attempt directory first, other staging directories after.
 */
export function placeSnapshot(stateDir: string, staged: string, revision: string, attemptId: string): string {
  const dir = snapshotDirOf(stateDir, revision, attemptId);
  if (path.dirname(staged) !== path.dirname(dir) || !path.basename(staged).startsWith(`${path.basename(dir)}.staging-`)) {
    throw localState('the staged snapshot is not this attempt\'s', 'SNAPSHOT_CORRUPT');
  }
  if (lstatOrUndefined(dir)) fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(staged, dir);
  // Staging directories of this attempt left by collectors that died while staging: derived data.
  const prefix = `${path.basename(dir)}.staging-`;
  for (const name of fs.readdirSync(path.dirname(dir))) {
    if (name.startsWith(prefix)) discardStaged(path.join(path.dirname(dir), name));
  }
  return dir;
}

/** Removes a staged snapshot that was not needed (a resumed or recovered run, or a refusal). */
export function discardStaged(staged: string): void {
  fs.rmSync(staged, { recursive: true, force: true });
}
