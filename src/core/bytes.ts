// Big-endian integers and lowercase hex on plain byte arrays, for the hook paths. Buffer's own
// readUInt32BE, writeUInt32BE, writeBigUInt64BE and toString('hex') are node:buffer JavaScript that a
// cold process compiles on first use; these few lines travel in the hooks' code cache instead. Same
// bytes, same numbers (tests compare them with Buffer's).

export function u16be(b: Uint8Array, off: number): number {
  return (b[off]! << 8) | b[off + 1]!;
}

export function u32be(b: Uint8Array, off: number): number {
  return ((b[off]! << 24) | (b[off + 1]! << 16) | (b[off + 2]! << 8) | b[off + 3]!) >>> 0;
}

/** A signed big-endian integer of 1 to 6 bytes (SQLite's record integers up to 48 bits). */
export function intBE(b: Uint8Array, off: number, n: number): number {
  let v = b[off]! >= 0x80 ? b[off]! - 0x100 : b[off]!;
  for (let i = 1; i < n; i++) v = v * 256 + b[off + i]!;
  return v;
}

/** Writes n (0 <= n < 2^53) as a u64 big-endian at off. */
export function putU64be(b: Uint8Array, off: number, n: number): void {
  const hi = Math.floor(n / 0x1_0000_0000);
  const lo = n >>> 0;
  b[off] = hi >>> 24;
  b[off + 1] = (hi >>> 16) & 0xff;
  b[off + 2] = (hi >>> 8) & 0xff;
  b[off + 3] = hi & 0xff;
  b[off + 4] = lo >>> 24;
  b[off + 5] = (lo >>> 16) & 0xff;
  b[off + 6] = (lo >>> 8) & 0xff;
  b[off + 7] = lo & 0xff;
}

const HEX = '0123456789abcdef';

export function hexOf(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i++) s += HEX[b[i]! >> 4]! + HEX[b[i]! & 15]!;
  return s;
}

/** Buffer#compare(target, 0, target.length, start, end) of src: the range against target, byte-wise. */
export function compareRange(src: Uint8Array, start: number, end: number, target: Uint8Array): number {
  const len = end - start;
  const n = Math.min(len, target.length);
  for (let i = 0; i < n; i++) {
    const d = src[start + i]! - target[i]!;
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return len === target.length ? 0 : len < target.length ? -1 : 1;
}
