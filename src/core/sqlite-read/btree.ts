// The B-tree layer of the read-only SQLite reader: records (serial types), table and index B-tree
// pages, overflow chains, and the schema table. Only what a keyed read of a rowid table needs:
// sqlite_schema lookup, an equality seek on an index, a rowid lookup. Every structural surprise throws
// (the caller blocks); nothing is repaired or guessed.

import { compareRange, intBE, u16be, u32be } from '../bytes.js';
import { unreadable, type PageSource } from './file.js';

export type SqlValue = null | number | bigint | string | Buffer;

const LEAF_TABLE = 0x0d;
const INTERIOR_TABLE = 0x05;
const LEAF_INDEX = 0x0a;
const INTERIOR_INDEX = 0x02;
/** Deeper than any real B-tree (a depth of 20 holds more rows than a file can): a cycle in a damaged file. */
const MAX_DEPTH = 40;

/** A varint at off: its value (a bigint when beyond 2^53) and its length. */
function varint(b: Buffer, off: number): [number | bigint, number] {
  let v = 0;
  for (let i = 0; i < 8; i++) {
    const c = b[off + i];
    if (c === undefined) throw unreadable('varint past the page end');
    if (v >= 2 ** 46) return bigVarint(b, off);
    v = v * 128 + (c & 0x7f);
    if ((c & 0x80) === 0) return [v, i + 1];
  }
  return bigVarint(b, off);
}

function bigVarint(b: Buffer, off: number): [bigint, number] {
  let v = 0n;
  for (let i = 0; i < 8; i++) {
    const c = b[off + i];
    if (c === undefined) throw unreadable('varint past the page end');
    v = (v << 7n) | BigInt(c & 0x7f);
    if ((c & 0x80) === 0) return [v, i + 1];
  }
  const last = b[off + 8];
  if (last === undefined) throw unreadable('varint past the page end');
  v = (v << 8n) | BigInt(last);
  return [v, 9];
}

function smallVarint(b: Buffer, off: number): [number, number] {
  const [v, n] = varint(b, off);
  if (typeof v !== 'number') throw unreadable('size out of range');
  return [v, n];
}

/** A rowid: a signed 64-bit varint. */
function rowidVarint(b: Buffer, off: number): [number | bigint, number] {
  const [v, n] = varint(b, off);
  if (typeof v === 'number') return [v, n];
  return [narrow(BigInt.asIntN(64, v)), n];
}

function narrow(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

const u32 = u32be;
const u16 = u16be;

interface BtreePage {
  readonly data: Buffer;
  readonly type: number;
  /** Start of the page header (100 on page 1, after the database header). */
  readonly base: number;
  readonly cells: number;
  readonly rightChild: number;
}

function btreePage(src: PageSource, n: number): BtreePage {
  const data = src.page(n);
  const base = n === 1 ? 100 : 0;
  const type = data[base]!;
  if (type !== LEAF_TABLE && type !== INTERIOR_TABLE && type !== LEAF_INDEX && type !== INTERIOR_INDEX) throw unreadable('not a B-tree page');
  const cells = u16(data, base + 3);
  const interior = type === INTERIOR_TABLE || type === INTERIOR_INDEX;
  const headerLen = interior ? 12 : 8;
  if (base + headerLen + 2 * cells > src.usable) throw unreadable('cell count beyond the page');
  return { data, type, base, cells, rightChild: interior ? u32(data, base + 8) : 0 };
}

function cellOffset(src: PageSource, p: BtreePage, i: number): number {
  const interior = p.type === INTERIOR_TABLE || p.type === INTERIOR_INDEX;
  const off = u16(p.data, p.base + (interior ? 12 : 8) + 2 * i);
  if (off < p.base || off >= src.usable) throw unreadable('cell pointer beyond the page');
  return off;
}

/**
 * The full payload of a cell whose payload (of size total) starts at off: the local part, then the
 * overflow chain (fileformat2 "Cell Payload Overflow Pages").
 */
function payload(src: PageSource, p: BtreePage, off: number, total: number): Buffer {
  const u = src.usable;
  const x = p.type === LEAF_TABLE ? u - 35 : Math.floor(((u - 12) * 64) / 255) - 23;
  if (total <= x) {
    if (off + total > u) throw unreadable('cell beyond the page');
    return p.data.subarray(off, off + total);
  }
  const m = Math.floor(((u - 12) * 32) / 255) - 23;
  const k = m + ((total - m) % (u - 4));
  const local = k <= x ? k : m;
  if (off + local + 4 > u) throw unreadable('cell beyond the page');
  const out = Buffer.allocUnsafe(total);
  out.set(p.data.subarray(off, off + local), 0);
  let filled = local;
  let next = u32(p.data, off + local);
  let hops = 0;
  while (filled < total) {
    if (next === 0 || ++hops > src.pageCount) throw unreadable('broken overflow chain');
    const ov = src.page(next);
    const n = Math.min(u - 4, total - filled);
    out.set(ov.subarray(4, 4 + n), filled);
    filled += n;
    next = u32(ov, 0);
  }
  return out;
}

/** A record's header: the serial type and body offset of each field (fileformat2 "Record Format"). */
function recordHeader(r: Buffer): { types: number[]; offsets: number[] } {
  const [headerLen, hn] = smallVarint(r, 0);
  if (headerLen < hn || headerLen > r.length) throw unreadable('bad record header');
  const types: number[] = [];
  const offsets: number[] = [];
  let body = headerLen;
  for (let off = hn; off < headerLen; ) {
    const [t, n] = varint(r, off);
    if (typeof t !== 'number' || t === 10 || t === 11) throw unreadable('bad serial type');
    types.push(t);
    offsets.push(body);
    body += serialLength(t);
    off += n;
    if (off > headerLen) throw unreadable('bad record header');
  }
  if (body > r.length) throw unreadable('record shorter than its header');
  return { types, offsets };
}

function serialLength(t: number): number {
  if (t >= 12) return (t - 12) >> 1;
  return [0, 1, 2, 3, 4, 6, 8, 8, 0, 0][t]!;
}

function fieldValue(r: Buffer, t: number, off: number): SqlValue {
  if (t === 0) return null;
  if (t <= 5) return intBE(r, off, serialLength(t));
  if (t === 6) return narrow(new DataView(r.buffer, r.byteOffset, r.byteLength).getBigInt64(off));
  if (t === 7) return new DataView(r.buffer, r.byteOffset, r.byteLength).getFloat64(off);
  if (t === 8 || t === 9) return t - 8;
  const len = (t - 12) >> 1;
  // Text is decoded as UTF-8: the reader refuses databases in another encoding.
  return t % 2 === 0 ? Buffer.from(r.subarray(off, off + len)) : r.toString('utf8', off, off + len);
}

/** Decodes every field of a record. */
export function decodeRecord(r: Buffer): SqlValue[] {
  const { types, offsets } = recordHeader(r);
  return types.map((t, i) => fieldValue(r, t, offsets[i]!));
}

/** Decodes the first count fields of a record (fewer when it has fewer). */
export function decodeFields(r: Buffer, count: number): SqlValue[] {
  const { types, offsets } = recordHeader(r);
  const out: SqlValue[] = [];
  for (let i = 0; i < count && i < types.length; i++) out.push(fieldValue(r, types[i]!, offsets[i]!));
  return out;
}

/** A key to compare index entries with: integers, or text as its UTF-8 bytes. */
export type KeyPart = number | Buffer;

/**
 * Compares the first key.length fields of an index record with key, in SQLite's order (NULL <
 * numbers < text < blob; text by bytes, i.e. BINARY), without decoding the other fields.
 */
function comparePrefix(r: Buffer, key: readonly KeyPart[]): number {
  const { types, offsets } = recordHeader(r);
  if (types.length < key.length) throw unreadable('index entry shorter than its key');
  for (let i = 0; i < key.length; i++) {
    const t = types[i]!;
    const k = key[i]!;
    const off = offsets[i]!;
    let c: number;
    if (t === 0) c = -1;
    else if (t <= 9) {
      if (typeof k !== 'number') c = -1;
      else {
        const v = fieldValue(r, t, off) as number | bigint;
        c = typeof v === 'bigint' ? (v < BigInt(k) ? -1 : 1) : v < k ? -1 : v > k ? 1 : 0;
      }
    } else if (t % 2 === 1) {
      c = typeof k === 'number' ? 1 : compareRange(r, off, off + ((t - 13) >> 1), k);
    } else c = 1;
    if (c !== 0) return c;
  }
  return 0;
}

function compareRowids(a: number | bigint, b: number | bigint): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Every index entry (in order, decoded) whose first key.length fields equal key. */
export function indexSeek(src: PageSource, root: number, key: readonly KeyPart[]): SqlValue[][] {
  const out: SqlValue[][] = [];
  const walk = (n: number, depth: number): boolean => {
    // Returns false once an entry past the key was seen (the callers stop there).
    if (depth > MAX_DEPTH) throw unreadable('B-tree too deep');
    const p = btreePage(src, n);
    if (p.type !== LEAF_INDEX && p.type !== INTERIOR_INDEX) throw unreadable('expected an index page');
    const interior = p.type === INTERIOR_INDEX;
    const cell = (i: number): { child: number; rec: Buffer } => {
      let off = cellOffset(src, p, i);
      const child = interior ? u32(p.data, off) : 0;
      if (interior) off += 4;
      const [size, n1] = smallVarint(p.data, off);
      return { child, rec: payload(src, p, off + n1, size) };
    };
    // The first cell not below the key (cells are in key order).
    let lo = 0;
    let hi = p.cells;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (comparePrefix(cell(mid).rec, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < p.cells; i++) {
      const { child, rec } = cell(i);
      // Entries in the left child sort before this cell: they may equal the key when this cell is >= key.
      if (interior && !walk(child, depth + 1)) return false;
      if (comparePrefix(rec, key) > 0) return false;
      out.push(decodeRecord(rec));
    }
    return interior ? walk(p.rightChild, depth + 1) : true;
  };
  walk(root, 0);
  return out;
}

/** The record of the row with this rowid, or undefined. */
export function tableRow(src: PageSource, root: number, rowid: number | bigint): SqlValue[] | undefined {
  let n = root;
  for (let depth = 0; ; depth++) {
    if (depth > MAX_DEPTH) throw unreadable('B-tree too deep');
    const p = btreePage(src, n);
    if (p.type === INTERIOR_TABLE) {
      let next = p.rightChild;
      for (let i = 0; i < p.cells; i++) {
        const off = cellOffset(src, p, i);
        const [key] = rowidVarint(p.data, off + 4);
        if (compareRowids(rowid, key) <= 0) {
          next = u32(p.data, off);
          break;
        }
      }
      n = next;
      continue;
    }
    if (p.type !== LEAF_TABLE) throw unreadable('expected a table page');
    for (let i = 0; i < p.cells; i++) {
      const off = cellOffset(src, p, i);
      const [size, n1] = smallVarint(p.data, off);
      const [key, n2] = rowidVarint(p.data, off + n1);
      if (compareRowids(key, rowid) === 0) return decodeRecord(payload(src, p, off + n1 + n2, size));
    }
    return undefined;
  }
}

/** Every row of a table B-tree in rowid order, as [rowid, undecoded record]. */
export function tableRecords(src: PageSource, root: number): [number | bigint, Buffer][] {
  const out: [number | bigint, Buffer][] = [];
  const walk = (n: number, depth: number): void => {
    if (depth > MAX_DEPTH) throw unreadable('B-tree too deep');
    const p = btreePage(src, n);
    if (p.type === INTERIOR_TABLE) {
      for (let i = 0; i < p.cells; i++) walk(u32(p.data, cellOffset(src, p, i)), depth + 1);
      walk(p.rightChild, depth + 1);
      return;
    }
    if (p.type !== LEAF_TABLE) throw unreadable('expected a table page');
    for (let i = 0; i < p.cells; i++) {
      const off = cellOffset(src, p, i);
      const [size, n1] = smallVarint(p.data, off);
      const [key, n2] = rowidVarint(p.data, off + n1);
      out.push([key, payload(src, p, off + n1 + n2, size)]);
    }
  };
  walk(root, 0);
  return out;
}
