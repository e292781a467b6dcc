// The page layer of the read-only SQLite reader: one consistent snapshot of a WAL-mode database file
// as a committed reader sees it, built without SQLite and without writing anything (no -shm, no -wal,
// no lock). The Stop hooks read the authority and the workspace state on every stop; loading a native
// SQLite binding costs them more than their whole budget, and SQLite's own read-only open may create
// the -shm/-wal sidecars.
//
// Format: https://www.sqlite.org/fileformat2.html ("The Database Header", "The WAL File Format").
// Committed WAL frames (valid salts and cumulative checksums, up to the last commit frame) replace
// database pages. Without the wal-index (-shm) and its locks, a concurrent checkpoint could copy newer
// pages into the database file while we read it: the snapshot is therefore checked afterwards (the
// database file unchanged, the WAL header unchanged, no new WAL appeared) and read again if it moved.
// Anything the reader cannot prove consistent — an unknown format, a hot rollback journal, a checksum
// break followed by frames of the current WAL generation — throws; the caller blocks on it.

import * as fs from 'node:fs';
import { u16be, u32be } from '../bytes.js';
import { localState, type AgentscmError } from '../errors.js';

/** Bound on the WAL the reader accepts: a larger one means checkpoints are starved; refuse, do not guess. */
export const MAX_WAL_BYTES = 256 * 1024 * 1024;
const HEADER_BYTES = 100;
const WAL_HEADER_BYTES = 32;
const WAL_FRAME_HEADER_BYTES = 24;
const MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
const WAL_MAGIC_LE = 0x377f0682;
const WAL_MAGIC_BE = 0x377f0683;
const WAL_VERSION = 3007000;

export const unreadable = (why: string): AgentscmError => localState(`SQLite store unreadable: ${why}`, 'STORE_UNREADABLE');

function statKey(st: fs.BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

interface Wal {
  readonly fd: number;
  readonly bytes: Uint8Array;
  readonly header: Buffer;
  /** Page number -> byte offset of its newest committed frame's page image. */
  readonly pages: Map<number, number>;
  /** Database size in pages after the last valid commit; 0 when the WAL holds no commit. */
  readonly dbPages: number;
}

/** Reads one full range from a descriptor; a short read is an error (the file is shorter than claimed). */
function preadFull(fd: number, into: Uint8Array, offset: number): void {
  let done = 0;
  while (done < into.length) {
    const n = fs.readSync(fd, into, done, into.length - done, offset + done);
    if (n === 0) throw unreadable('file shorter than its pages');
    done += n;
  }
}

/**
 * One WAL frame's cumulative checksum over native (little-endian) words, as a 148-byte WebAssembly
 * function: frame(header, page, pageEnd, state) continues (s0, s1), kept at state and state+4, over the
 * frame header's first 8 bytes and the page. Every read checksums the whole committed WAL (up to
 * thousands of pages), and a fresh process runs that loop in JavaScript's interpreter many times
 * slower. Hand-assembled from:
 *
 *   (func (export "frame") (param $h i32) (param $p i32) (param $end i32) (param $st i32) (local $s0 i32) (local $s1 i32)
 *     (local.set $s0 (i32.load (local.get $st)))
 *     (local.set $s1 (i32.load offset=4 (local.get $st)))
 *     (local.set $s0 (i32.add (i32.add (local.get $s0) (i32.load (local.get $h))) (local.get $s1)))
 *     (local.set $s1 (i32.add (i32.add (local.get $s1) (i32.load offset=4 (local.get $h))) (local.get $s0)))
 *     (loop (local.set $s0 (i32.add (i32.add (local.get $s0) (i32.load (local.get $p))) (local.get $s1)))
 *           (local.set $s1 (i32.add (i32.add (local.get $s1) (i32.load offset=4 (local.get $p))) (local.get $s0)))
 *           (br_if 0 (i32.lt_u (local.tee $p (i32.add (local.get $p) (i32.const 8))) (local.get $end))))
 *     (i32.store (local.get $st) (local.get $s0))
 *     (i32.store offset=4 (local.get $st) (local.get $s1)))
 *
 * with the memory imported as m.mem. Without WebAssembly (node --jitless) the JavaScript loop runs.
 */
const FRAME_WASM =
  '0061736d0100000001080160047f7f7f7f00020a01016d036d656d02000103020100070901056672616d6500000a65016301' +
  '027f2003280200210420032802042105200420002802006a20056a2104200520002802046a20046a21050340200420012802' +
  '006a20056a2104200520012802046a20046a2105200141086a22012002490d000b20032004360200200320053602040b';

type FrameSum = (header: number, page: number, pageEnd: number, state: number) => void;

/** The part of the WebAssembly API used here (the compiler's libraries here do not declare it). */
interface WasmApi {
  Memory: new (d: { initial: number }) => { buffer: ArrayBuffer };
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}

/**
 * A buffer of size bytes in WebAssembly memory, with the frame checksum over it and its 8-byte state
 * right after the bytes, when WebAssembly is available.
 */
function wasmBuffer(size: number): { bytes: Uint8Array; frame: FrameSum; state: number; sums: Uint32Array } | undefined {
  const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (!wasm) return undefined;
  try {
    const state = Math.ceil(size / 8) * 8;
    const mem = new wasm.Memory({ initial: Math.ceil((state + 8) / 65536) });
    const instance = new wasm.Instance(new wasm.Module(Buffer.from(FRAME_WASM, 'hex')), { m: { mem } });
    return { bytes: new Uint8Array(mem.buffer, 0, size), frame: instance.exports.frame as FrameSum, state, sums: new Uint32Array(mem.buffer, state, 2) };
  } catch {
    return undefined;
  }
}

/** SQLite's WAL checksum over 8-byte units, continuing from (s0, s1). */
function walChecksum(b: Uint8Array, off: number, len: number, littleEndian: boolean, s: [number, number]): void {
  let s0 = s[0];
  let s1 = s[1];
  if (littleEndian && (b.byteOffset + off) % 4 === 0) {
    const w = new Uint32Array(b.buffer, b.byteOffset + off, len / 4);
    for (let i = 0; i < w.length; i += 2) {
      s0 = (s0 + w[i]! + s1) >>> 0;
      s1 = (s1 + w[i + 1]! + s0) >>> 0;
    }
  } else {
    const v = new DataView(b.buffer, b.byteOffset + off, len);
    for (let i = 0; i < len; i += 8) {
      s0 = (s0 + v.getUint32(i, littleEndian) + s1) >>> 0;
      s1 = (s1 + v.getUint32(i + 4, littleEndian) + s0) >>> 0;
    }
  }
  s[0] = s0;
  s[1] = s1;
}

/**
 * Decodes the WAL: its header, then frames while they carry the header's salts and a matching
 * cumulative checksum. Frames after the last commit frame are an uncommitted (or torn) tail and are
 * ignored, as SQLite's recovery does. A checksum break followed by a frame of the same generation
 * (same salts) is not a torn tail: the file is damaged, and the reader refuses it.
 */
function decodeWal(fd: number, pageSize: number): Wal | undefined {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return undefined; // truncated by a checkpoint: the database file alone is the state
  if (size < WAL_HEADER_BYTES) throw unreadable('WAL shorter than its header');
  if (size > MAX_WAL_BYTES) throw unreadable('WAL larger than the reader accepts');
  // Read straight into WebAssembly memory when the checksum can run there; else a fresh ArrayBuffer,
  // word-aligned, so that checksums can run over a Uint32Array view.
  const wasm = wasmBuffer(size);
  const bytes = wasm?.bytes ?? new Uint8Array(size);
  preadFull(fd, bytes, 0);
  const h = Buffer.from(bytes.buffer, 0, WAL_HEADER_BYTES);
  const magic = u32be(h, 0);
  if (magic !== WAL_MAGIC_LE && magic !== WAL_MAGIC_BE) throw unreadable('unknown WAL format');
  const le = magic === WAL_MAGIC_LE;
  if (u32be(h, 4) !== WAL_VERSION) throw unreadable('unknown WAL version');
  const walPageSize = u32be(h, 8);
  if (walPageSize !== pageSize) throw unreadable('WAL page size differs from the database');
  const salt1 = u32be(h, 16);
  const salt2 = u32be(h, 20);
  const sum: [number, number] = [0, 0];
  walChecksum(bytes, 0, 24, le, sum);
  if (sum[0] !== u32be(h, 24) || sum[1] !== u32be(h, 28)) throw unreadable('WAL header checksum mismatch');

  const frameBytes = WAL_FRAME_HEADER_BYTES + pageSize;
  const pending = new Map<number, number>();
  const pages = new Map<number, number>();
  let dbPages = 0;
  // DataView, not Buffer: its readers are built-ins, fast even before this loop is optimized.
  const view = new DataView(bytes.buffer, 0, size);
  // Little-endian checksums (the WAL of a little-endian writer) read as native words: every frame
  // starts at a multiple of 8 in this fresh, aligned buffer.
  const words = le ? new Uint32Array(bytes.buffer, 0, size >>> 2) : undefined;
  for (let off = WAL_HEADER_BYTES; off + frameBytes <= size; off += frameBytes) {
    const pgno = view.getUint32(off);
    const commit = view.getUint32(off + 4);
    if (view.getUint32(off + 8) !== salt1 || view.getUint32(off + 12) !== salt2) break; // an older generation
    // The cumulative checksum over the frame header's first 8 bytes and the page, inline in this loop
    // (a WAL holds up to thousands of frames: the optimizing compiler takes over this loop early).
    let s0 = sum[0];
    let s1 = sum[1];
    if (le && wasm) {
      wasm.sums[0] = s0;
      wasm.sums[1] = s1;
      wasm.frame(off, off + WAL_FRAME_HEADER_BYTES, off + WAL_FRAME_HEADER_BYTES + pageSize, wasm.state);
      s0 = wasm.sums[0]!;
      s1 = wasm.sums[1]!;
    } else if (words) {
      s0 = (s0 + words[off >>> 2]! + s1) >>> 0;
      s1 = (s1 + words[(off >>> 2) + 1]! + s0) >>> 0;
      for (let i = (off + WAL_FRAME_HEADER_BYTES) >>> 2, end = i + (pageSize >>> 2); i < end; i += 2) {
        s0 = (s0 + words[i]! + s1) >>> 0;
        s1 = (s1 + words[i + 1]! + s0) >>> 0;
      }
    } else {
      const s: [number, number] = [s0, s1];
      walChecksum(bytes, off, 8, le, s);
      walChecksum(bytes, off + WAL_FRAME_HEADER_BYTES, pageSize, le, s);
      s0 = s[0];
      s1 = s[1];
    }
    if (pgno === 0 || s0 !== view.getUint32(off + 16) || s1 !== view.getUint32(off + 20)) {
      // The end of the valid log: a torn or in-progress write, or the leftovers of a rolled-back
      // transaction (never committed, so they hold no commit frame). A commit frame of this generation
      // after the break means committed data behind a damaged frame: not provable, refuse.
      for (let o = off + frameBytes; o + frameBytes <= size; o += frameBytes) {
        if (view.getUint32(o + 8) !== salt1 || view.getUint32(o + 12) !== salt2) break;
        if (view.getUint32(o + 4) !== 0) throw unreadable('WAL checksum break before a commit');
      }
      break;
    }
    sum[0] = s0;
    sum[1] = s1;
    pending.set(pgno, off + WAL_FRAME_HEADER_BYTES);
    if (commit !== 0) {
      for (const [p, o] of pending) pages.set(p, o);
      pending.clear();
      dbPages = commit;
    }
  }
  return { fd, bytes, header: Buffer.from(bytes.slice(0, WAL_HEADER_BYTES)), pages, dbPages };
}

/** One consistent view of a database's pages (the committed state at the time it was taken). */
export class PageSource {
  readonly pageSize: number;
  /** Usable bytes per page (page size minus the reserved tail). */
  readonly usable: number;
  readonly pageCount: number;
  private readonly cache = new Map<number, Buffer>();

  constructor(
    private readonly dbFd: number,
    private readonly dbSize: number,
    header: Buffer,
    private readonly wal: Wal | undefined,
  ) {
    this.pageSize = pageSizeOf(header);
    this.usable = this.pageSize - header[20]!;
    if (wal && wal.dbPages > 0) {
      this.pageCount = wal.dbPages;
    } else {
      const inHeader = u32be(header, 28);
      const valid = inHeader !== 0 && u32be(header, 24) === u32be(header, 92);
      this.pageCount = valid ? inHeader : Math.floor(dbSize / this.pageSize);
    }
    if (this.pageCount < 1) throw unreadable('empty database');
  }

  page(n: number): Buffer {
    const hit = this.cache.get(n);
    if (hit) return hit;
    if (!Number.isInteger(n) || n < 1 || n > this.pageCount) throw unreadable('page number out of range');
    let p: Buffer;
    const inWal = this.wal?.pages.get(n);
    if (inWal !== undefined) {
      p = Buffer.from(this.wal!.bytes.buffer, inWal, this.pageSize);
    } else {
      if (n * this.pageSize > this.dbSize) throw unreadable('page beyond the end of the database file');
      p = Buffer.allocUnsafe(this.pageSize);
      preadFull(this.dbFd, p, (n - 1) * this.pageSize);
    }
    this.cache.set(n, p);
    return p;
  }
}

function pageSizeOf(header: Buffer): number {
  const raw = u16be(header, 16);
  return raw === 1 ? 65536 : raw;
}

/** Checks the database header: format, WAL mode, page size, the fixed payload fractions. */
function checkHeader(h: Buffer): void {
  if (!h.subarray(0, 16).equals(MAGIC)) throw unreadable('not an SQLite 3 database');
  const ps = pageSizeOf(h);
  if (ps < 512 || ps > 65536 || (ps & (ps - 1)) !== 0) throw unreadable('invalid page size');
  // 2/2: WAL mode. The stores are always WAL; a rollback-mode file could be mid-write under a lock we cannot see.
  if (h[18] !== 2 || h[19] !== 2) throw unreadable('not a WAL-mode database');
  if (h[21] !== 64 || h[22] !== 32 || h[23] !== 32) throw unreadable('unknown payload fractions');
  if (ps - h[20]! < 480) throw unreadable('invalid reserved space');
}

function tryOpen(file: string): number | undefined {
  try {
    return fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unreadable('cannot open');
  }
}

function pathKey(file: string): string | undefined {
  const st = fs.statSync(file, { bigint: true, throwIfNoEntry: false });
  return st ? statKey(st) : undefined;
}

/**
 * Runs read(pages) against one consistent committed snapshot of the database file and returns its
 * result. Opens everything read-only and creates nothing. If the files moved while reading (a
 * checkpoint copied pages, the WAL was restarted or created), the read is repeated; after a few tries
 * it gives up with an error.
 */
export function withSnapshot<T>(file: string, read: (pages: PageSource) => T): T {
  for (let attempt = 0; attempt < 4; attempt++) {
    const result = trySnapshot(file, read);
    if (result.stable) return result.value;
  }
  throw unreadable('the database kept changing while being read');
}

function trySnapshot<T>(file: string, read: (pages: PageSource) => T): { stable: true; value: T } | { stable: false } {
  // A rollback journal next to a WAL database only exists mid-way through a mode change: not provable.
  if (fs.statSync(`${file}-journal`, { throwIfNoEntry: false })) throw unreadable('a rollback journal is present');
  const dbFd = tryOpen(file);
  if (dbFd === undefined) throw unreadable('missing database file');
  let walFd: number | undefined;
  try {
    const st = fs.fstatSync(dbFd, { bigint: true });
    if (!st.isFile()) throw unreadable('not a regular file');
    const before = statKey(st);
    const header = Buffer.alloc(HEADER_BYTES);
    if (st.size < BigInt(HEADER_BYTES)) throw unreadable('file shorter than the header');
    preadFull(dbFd, header, 0);
    checkHeader(header);
    walFd = tryOpen(`${file}-wal`);
    const walBefore = walFd === undefined ? undefined : statKey(fs.fstatSync(walFd, { bigint: true }));
    const wal = walFd === undefined ? undefined : decodeWal(walFd, pageSizeOf(header));
    const pages = new PageSource(dbFd, Number(st.size), header, wal);
    const value = read(pages);

    // Stable: the database file was not written, and the WAL is the same file with the same header
    // (a restart changes the salts). Appends after our last commit do not matter.
    if (statKey(fs.fstatSync(dbFd, { bigint: true })) !== before) return { stable: false };
    const walNow = pathKey(`${file}-wal`);
    if (walFd === undefined) {
      if (walNow !== undefined) return { stable: false };
    } else {
      const fdNow = statKey(fs.fstatSync(walFd, { bigint: true }));
      if (walNow === undefined || walNow.split(':').slice(0, 2).join(':') !== fdNow.split(':').slice(0, 2).join(':')) return { stable: false };
      if (wal) {
        const h = Buffer.alloc(WAL_HEADER_BYTES);
        if (fs.readSync(walFd, h, 0, WAL_HEADER_BYTES, 0) !== WAL_HEADER_BYTES || !h.equals(wal.header)) return { stable: false };
      } else if (fdNow !== walBefore) {
        return { stable: false };
      }
    }
    return { stable: true, value };
  } finally {
    fs.closeSync(dbFd);
    if (walFd !== undefined) fs.closeSync(walFd);
  }
}
