// Whether the files under a directory carry fine timestamps from this host's own clock: the condition
// under which the stat cache may trust a file's stat soon after it was written (RACY_FINE_MARGIN_MS in
// ../native/snapshot.ts) instead of only two seconds after.
//
// A stat cache entry is "racily clean" when the file could have been written again, after the scan read
// it, without its stat changing: the new mtime and ctime fell in the same timestamp tick as the old
// ones. How long that window is depends on the file system: whole seconds (ext4 with 128-byte inodes,
// HFS+), two seconds (FAT), or the kernel's coarse clock, which lags the process's clock by at most one
// scheduler tick (10 ms at HZ=100), on the local Linux file systems that keep nanoseconds. A network or
// FUSE file system stamps files with another host's (or process's) clock, which may be seconds apart
// from this one. So the short window is taken only on Linux, for a directory on one of the local file
// systems below with no other file system mounted anywhere beneath it (so every file under it is on
// that one), and, per file, only when its own times show sub-second parts (a file system that keeps
// whole seconds never writes those).

import * as fs from 'node:fs';

/** statfs f_type of the local Linux file systems whose timestamps come from this kernel's clock. */
const LOCAL_FILE_SYSTEMS: ReadonlySet<number> = new Set([
  0xef53, // ext2, ext3, ext4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x01021994, // tmpfs
  0x858458f6, // ramfs
  0xf2f52010, // f2fs
  0x2fc12fc1, // zfs
  0xca451a4e, // bcachefs
  // overlayfs: written files live in its upper layer, which must be a local file system (NFS cannot be one).
  0x794c7630,
]);

/** The mount points of a /proc/self/mountinfo text (the fifth field of each line, its octal escapes decoded). */
export function mountPoints(mountinfo: string): string[] {
  const out: string[] = [];
  for (const line of mountinfo.split('\n')) {
    const field = line.split(' ')[4];
    if (field !== undefined && field !== '') out.push(field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
  }
  return out;
}

/** Whether a mount point lies strictly below dir (an absolute real path). */
export function mountedBelow(dir: string, points: readonly string[]): boolean {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  return points.some((p) => p.startsWith(prefix) && p.length > prefix.length);
}

const known = new Map<string, boolean>();

/**
 * Whether the files under dir get fine timestamps from this host's clock (see the top of this file).
 * False whenever that cannot be shown: another platform, an unknown file system, a mount beneath dir,
 * no /proc. Asked once per directory in a process.
 */
export function fineTimestamps(dir: string): boolean {
  let fine = known.get(dir);
  if (fine === undefined) {
    fine = false;
    if (process.platform === 'linux') {
      try {
        const real = fs.realpathSync.native(dir);
        fine = LOCAL_FILE_SYSTEMS.has(fs.statfsSync(real).type >>> 0) && !mountedBelow(real, mountPoints(fs.readFileSync('/proc/self/mountinfo', 'utf8')));
      } catch {
        fine = false;
      }
    }
    known.set(dir, fine);
  }
  return fine;
}

/** Whether a stat's times have sub-second parts: its file system keeps finer than whole seconds. */
export const subSecondTimes = (mtimeMs: number, ctimeMs: number): boolean => mtimeMs % 1000 !== 0 || ctimeMs % 1000 !== 0;
