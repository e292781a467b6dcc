// Snapshot packs: the durable copy of every blob a checkpoint read, one pack file per checkpoint.
//
//   agentscm-pack-v2\n                      17 bytes
//   per blob:  sha256 (32 raw bytes) | length (u64be) | bytes
//   index:     per blob, sorted by sha256:  sha256 (32) | offset of its bytes (u64be) | length (u64be)
//   trailer:   offset of the index (u64be) | blob count (u64be) | "agentscm-pack-ix"  (32 bytes)
//
// A pack is written under a temporary name, fsynced once and linked to its name (its directory fsynced),
// so a reader sees it whole or not at all. Packs of stores made before (agentscm-pack-v1\n: records
// only) are read by walking their records, as is a v2 pack whose index does not check out. Every blob
// read from a pack is checked against its SHA-256 by the caller.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { sha256Hex } from '../crypto/digest.js';
import { randomBytes } from '../crypto/random.js';
import { localState } from '../errors.js';
import { fsyncDir, readExactly } from '../fs/safe.js';

const MAGIC_V1 = Buffer.from('agentscm-pack-v1\n', 'latin1');
const MAGIC = Buffer.from('agentscm-pack-v2\n', 'latin1');
const RECORD_HEAD = 40;
const INDEX_ENTRY = 48;
const TRAILER_TAG = Buffer.from('agentscm-pack-ix', 'latin1');
const TRAILER = 16 + TRAILER_TAG.length;
/** Records are gathered into writes of about this size; a larger blob is written on its own. */
const WRITE_CHUNK = 1 << 20;

/**
 * One checkpoint's pack: each distinct blob it read, appended as read, then its index. Until published
 * it has a temporary name that no reader looks at.
 */
export class PackWriter {
  private fd: number | undefined;
  private readonly tmp: string;
  private offset = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Raw SHA-256 (hex key) to the offset of the blob's bytes and its length. */
  private readonly index = new Map<string, { raw: Buffer; at: number; length: number }>();

  constructor(private readonly dir: string) {
    this.tmp = path.join(dir, `.${process.pid}.${randomBytes(8).toString('hex')}.pack.tmp`);
  }

  add(sha256: string, bytes: Buffer): void {
    if (this.index.has(sha256)) return;
    if (this.fd === undefined) {
      this.fd = fs.openSync(this.tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o400);
      this.queue(MAGIC);
    }
    const head = Buffer.alloc(RECORD_HEAD);
    head.write(sha256, 0, 32, 'hex');
    head.writeBigUInt64BE(BigInt(bytes.length), 32);
    this.queue(head);
    this.index.set(sha256, { raw: head.subarray(0, 32), at: this.offset + this.pendingBytes, length: bytes.length });
    this.queue(bytes);
  }

  private queue(b: Buffer): void {
    this.pending.push(b);
    this.pendingBytes += b.length;
    if (this.pendingBytes >= WRITE_CHUNK) this.flush();
  }

  private flush(): void {
    if (this.pendingBytes === 0) return;
    const b = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    let off = 0;
    while (off < b.length) off += fs.writeSync(this.fd!, b, off, b.length - off, this.offset + off);
    this.offset += b.length;
    this.pending = [];
    this.pendingBytes = 0;
  }

  /** Appends the index, makes the pack durable under its final name (none when nothing was added). */
  publish(): void {
    if (this.fd === undefined) return;
    this.flush();
    const entries = [...this.index.values()].sort((a, b) => Buffer.compare(a.raw, b.raw));
    const index = Buffer.alloc(entries.length * INDEX_ENTRY + TRAILER);
    entries.forEach((e, i) => {
      const at = i * INDEX_ENTRY;
      e.raw.copy(index, at);
      index.writeBigUInt64BE(BigInt(e.at), at + 32);
      index.writeBigUInt64BE(BigInt(e.length), at + 40);
    });
    const t = entries.length * INDEX_ENTRY;
    index.writeBigUInt64BE(BigInt(this.offset), t);
    index.writeBigUInt64BE(BigInt(entries.length), t + 8);
    TRAILER_TAG.copy(index, t + 16);
    this.queue(index);
    this.flush();
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

/** A pack's index as read: entries sorted by SHA-256, and where each first byte's run starts. */
interface LoadedPack {
  readonly file: string;
  readonly entries: Buffer;
  /** fan[b] is the first entry whose SHA-256 starts with a byte >= b; fan[256] is the count. */
  readonly fan: Uint32Array;
  /**
   * The pack is not as written: a v2 pack whose own index does not check out (cut short, say), or records
   * that stop before the pack's end (the last one cut off). Its readable records are in entries.
   */
  readonly damaged: boolean;
}

/**
 * The packs of a store, their indexes loaded once and kept (48 bytes a blob): a reader that misses
 * looks for packs published since.
 */
export class PackSet {
  private readonly loaded = new Map<string, LoadedPack>();
  /**
   * The loaded packs in the order they are searched: the one that held the last blob found comes first.
   * A snapshot's blobs are mostly in the one pack of the checkpoint that first read them, so a reader
   * finds nearly every blob in the first pack it tries, however many packs later checkpoints added.
   */
  private readonly order: LoadedPack[] = [];
  private listed = false;

  constructor(private readonly dir: string) {}

  /**
   * A blob's bytes from the packs, checked against its SHA-256: 'limit' when it is over maxBytes,
   * undefined when no pack holds it. The packs are listed on the first read; `lookAgain` lists them
   * again when the loaded ones miss, for packs published since.
   */
  read(sha256: string, maxBytes: number, lookAgain = true): Buffer | 'limit' | undefined {
    const want = Buffer.from(sha256, 'hex');
    if (!this.listed) this.loadNew();
    const first = this.readFrom(this.order, want, sha256, maxBytes);
    if (first !== undefined || !lookAgain) return first;
    return this.readFrom(this.loadNew(), want, sha256, maxBytes);
  }

  private readFrom(packs: readonly LoadedPack[], want: Buffer, sha256: string, maxBytes: number): Buffer | 'limit' | undefined {
    for (const p of packs) {
      const at = find(p, want);
      if (at < 0) continue;
      const offset = Number(p.entries.readBigUInt64BE(at + 32));
      const length = Number(p.entries.readBigUInt64BE(at + 40));
      if (length > maxBytes) return 'limit';
      const bytes = withPack(p.file, (fd) => readExactly(fd, length, offset));
      if (bytes !== undefined && sha256Hex(bytes) === sha256) {
        this.toFront(p);
        return bytes;
      }
    }
    return undefined;
  }

  private toFront(p: LoadedPack): void {
    const i = this.order.indexOf(p);
    if (i <= 0) return;
    this.order.copyWithin(1, 0, i);
    this.order[0] = p;
  }

  /** Loads the packs not loaded yet (in name order) and returns them. */
  private loadNew(): LoadedPack[] {
    this.listed = true;
    const names = packNames(this.dir);
    const fresh: LoadedPack[] = [];
    for (const name of names) {
      if (this.loaded.has(name)) continue;
      const p = loadPack(path.join(this.dir, name));
      if (p === undefined) continue;
      this.loaded.set(name, p);
      this.order.push(p);
      fresh.push(p);
    }
    return fresh;
  }
}

/** The published packs of dir (never a temporary one), in name order; none when dir is missing. */
export function packNames(dir: string): string[] {
  try {
    return fs.readdirSync(dir).filter((n) => n.endsWith('.pack') && !n.startsWith('.')).sort();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw localState('snapshot store unreadable', 'STORE_UNAVAILABLE');
  }
}

export interface RepackResult {
  /** Packs found, packs left after (the new one and any kept). */
  readonly packs_before: number;
  readonly packs_after: number;
  /** Distinct blobs in the new pack, and their bytes. */
  readonly blobs: number;
  readonly bytes: number;
  /**
   * Packs left as they were: one with a record that could not be read or is not its digest, or one that
   * is not whole (a record or its index cut short).
   */
  readonly kept: readonly string[];
  /** Temporary packs that a checkpoint or repack killed before it published left behind, removed. */
  readonly removed_temporary: readonly string[];
}

/** A PackWriter's temporary name: the writing process's pid, then a random part. */
const TEMPORARY = /^\.([0-9]{1,10})\.[0-9a-f]{16}\.pack\.tmp$/;
/** A temporary pack untouched this long, of a process that is gone, is a leftover. */
const TEMPORARY_STALE_MS = 60 * 60 * 1000;

/** Whether the process is running here (a pid of another pid namespace reads as gone: hence also the age). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Removes the temporary packs of writers that died before publishing (kill -9, a crash, power loss):
 * a name of PackWriter's whose process is not running and that nothing has written to for an hour.
 * Nothing reads a temporary pack, so removing one loses nothing.
 */
function removeStaleTemporaries(dir: string, now = Date.now()): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return removed;
    throw localState('snapshot store unreadable', 'STORE_UNAVAILABLE');
  }
  for (const name of names) {
    const m = TEMPORARY.exec(name);
    if (m === null || running(Number(m[1]))) continue;
    const file = path.join(dir, name);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(file);
    } catch {
      continue;
    }
    if (!st.isFile() || now - st.mtimeMs < TEMPORARY_STALE_MS) continue;
    fs.rmSync(file, { force: true });
    removed.push(name);
  }
  return removed.sort();
}

/**
 * Writes every blob of dir's packs once into one new pack and removes the packs it copied whole (and
 * first the temporary packs that writers killed before publishing left, removeStaleTemporaries). The
 * new pack is durable under its name (as a checkpoint's is) before any pack goes, so every blob is in a
 * published pack at every moment: a reader that had loaded a removed pack finds the new one when it
 * looks again (PackSet.read), a checkpoint that publishes meanwhile keeps its pack (it is not listed
 * here), and a crash leaves at most both copies. Each blob is checked against its SHA-256 as it is
 * copied; a pack with a record that is not readable or not its digest stays where it is.
 */
export function repackPacks(dir: string): RepackResult {
  const names = packNames(dir);
  const removed_temporary = removeStaleTemporaries(dir);
  if (removed_temporary.length > 0) fsyncDir(dir);
  if (names.length <= 1) return { packs_before: names.length, packs_after: names.length, blobs: 0, bytes: 0, kept: [], removed_temporary };
  const writer = new PackWriter(dir);
  const seen = new Set<string>();
  const copied: string[] = [];
  const kept: string[] = [];
  let bytes = 0;
  try {
    for (const name of names) {
      const file = path.join(dir, name);
      const whole = withPack(file, (fd) => {
        const p = loadPackFrom(fd, file);
        if (p === undefined) return false;
        // A damaged pack's readable records are copied, and the pack stays (named in kept).
        let all = !p.damaged;
        for (let at = 0; at < p.entries.length; at += INDEX_ENTRY) {
          const sha256 = p.entries.toString('hex', at, at + 32);
          if (seen.has(sha256)) continue;
          const blob = readExactly(fd, Number(p.entries.readBigUInt64BE(at + 40)), Number(p.entries.readBigUInt64BE(at + 32)));
          if (blob === undefined || sha256Hex(blob) !== sha256) {
            all = false;
            continue;
          }
          writer.add(sha256, blob);
          seen.add(sha256);
          bytes += blob.length;
        }
        return all;
      });
      (whole === true ? copied : kept).push(name);
    }
    writer.publish();
  } catch (e) {
    writer.discard();
    throw e;
  }
  for (const name of copied) fs.rmSync(path.join(dir, name), { force: true });
  fsyncDir(dir);
  return { packs_before: names.length, packs_after: packNames(dir).length, blobs: seen.size, bytes, kept, removed_temporary };
}

/** The byte offset of want's entry in p.entries, or -1. */
function find(p: LoadedPack, want: Buffer): number {
  let lo = p.fan[want[0]!]!;
  let hi = p.fan[want[0]! + 1]!;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = want.compare(p.entries, mid * INDEX_ENTRY, mid * INDEX_ENTRY + 32);
    if (c === 0) return mid * INDEX_ENTRY;
    if (c < 0) hi = mid;
    else lo = mid + 1;
  }
  return -1;
}

/** Runs fn on the pack file opened for reading (never through a symlink); undefined when it cannot be opened. */
function withPack<T>(file: string, fn: (fd: number) => T | undefined): T | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    return fn(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** A pack's index: its own when it checks out, else one made by walking its records; undefined when unreadable. */
function loadPack(file: string): LoadedPack | undefined {
  return withPack(file, (fd) => loadPackFrom(fd, file));
}

/** loadPack on the pack already open as fd. */
function loadPackFrom(fd: number, file: string): LoadedPack | undefined {
  const size = fs.fstatSync(fd).size;
  const magic = Buffer.alloc(MAGIC.length);
  if (fs.readSync(fd, magic, 0, magic.length, 0) !== magic.length) return undefined;
  let end = size;
  // A v1 pack is records only; a v2 pack that must be walked has lost its index.
  let damaged = false;
  if (magic.equals(MAGIC)) {
    damaged = true;
    const trailer = readTrailer(fd, size);
    if (trailer) {
      const own = ownIndex(fd, size, trailer);
      if (own !== undefined) return { file, entries: own, fan: fanOf(own), damaged: false };
      // The records end where the trailer says the index starts, when that is plausible.
      const at = Number(trailer.readBigUInt64BE(0));
      if (at >= MAGIC.length && at <= size) end = at;
    }
  } else if (!magic.equals(MAGIC_V1)) return undefined;
  const walked = walkRecords(fd, end);
  return { file, entries: walked.entries, fan: fanOf(walked.entries), damaged: damaged || walked.stoppedAt !== end };
}

/** A v2 pack's trailer, when it ends with the tag. */
function readTrailer(fd: number, size: number): Buffer | undefined {
  if (size < MAGIC.length + TRAILER) return undefined;
  const trailer = Buffer.alloc(TRAILER);
  if (fs.readSync(fd, trailer, 0, TRAILER, size - TRAILER) !== TRAILER || !trailer.subarray(16).equals(TRAILER_TAG)) return undefined;
  return trailer;
}

/** The index a v2 pack carries, when its trailer, bounds and order check out. */
function ownIndex(fd: number, size: number, trailer: Buffer): Buffer | undefined {
  const at = Number(trailer.readBigUInt64BE(0));
  const count = Number(trailer.readBigUInt64BE(8));
  if (at < MAGIC.length || at + count * INDEX_ENTRY + TRAILER !== size) return undefined;
  const entries = Buffer.alloc(count * INDEX_ENTRY);
  if (count > 0 && fs.readSync(fd, entries, 0, entries.length, at) !== entries.length) return undefined;
  for (let i = 0; i < count; i++) {
    const offset = Number(entries.readBigUInt64BE(i * INDEX_ENTRY + 32));
    const length = Number(entries.readBigUInt64BE(i * INDEX_ENTRY + 40));
    if (offset < MAGIC.length + RECORD_HEAD || offset + length > at) return undefined;
    // Strictly ascending: entry i against entry i - 1.
    if (i > 0 && entries.compare(entries, (i - 1) * INDEX_ENTRY, (i - 1) * INDEX_ENTRY + 32, i * INDEX_ENTRY, i * INDEX_ENTRY + 32) <= 0) return undefined;
  }
  return entries;
}

/**
 * An index made by walking a pack's records up to end (the first that does not fit ends the walk), and
 * where the walk stopped: end itself when every byte up to it was a whole record.
 */
function walkRecords(fd: number, end: number): { entries: Buffer; stoppedAt: number } {
  const found = new Map<string, Buffer>();
  const head = Buffer.alloc(RECORD_HEAD);
  let at = MAGIC.length;
  while (at + RECORD_HEAD <= end) {
    if (fs.readSync(fd, head, 0, RECORD_HEAD, at) !== RECORD_HEAD) break;
    const length = Number(head.readBigUInt64BE(32));
    const body = at + RECORD_HEAD;
    if (body + length > end) break;
    const key = head.toString('hex', 0, 32);
    if (!found.has(key)) {
      const e = Buffer.alloc(INDEX_ENTRY);
      head.copy(e, 0, 0, 32);
      e.writeBigUInt64BE(BigInt(body), 32);
      e.writeBigUInt64BE(BigInt(length), 40);
      found.set(key, e);
    }
    at = body + length;
  }
  return { entries: Buffer.concat([...found.values()].sort((a, b) => a.compare(b, 0, 32, 0, 32))), stoppedAt: at };
}

function fanOf(entries: Buffer): Uint32Array {
  const fan = new Uint32Array(257);
  const count = entries.length / INDEX_ENTRY;
  for (let i = 0; i < count; i++) {
    const b = entries[i * INDEX_ENTRY]! + 1;
    fan[b] = fan[b]! + 1;
  }
  for (let b = 1; b <= 256; b++) fan[b] = fan[b]! + fan[b - 1]!;
  return fan;
}
