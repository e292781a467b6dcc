// SHA-256 (FIPS 180-4) without node:crypto, for the short inputs of start-up-critical paths: the
// lifecycle hook hashes a few kilobytes (bridge files, identities, receipt fields), and loading
// node:crypto alone costs a cold process about 6 ms, more than that hashing here. digest.ts chooses:
// inputs up to SMALL_INPUT_BYTES come here, larger ones go to node:crypto (measured ≈ 10x faster in
// bulk, see docs/DESIGN.md). The compression function runs as a small WebAssembly module: in a cold
// process the JavaScript loop runs in V8's interpreter, where a few kilobytes cost milliseconds and
// get the function queued for the optimizing compiler. The JavaScript loop remains for a runtime
// without WebAssembly (node --jitless). All give the same digest; test/unit/digest.test.ts compares them.

export const SMALL_INPUT_BYTES = 64 * 1024;

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/**
 * blocks(p, n): the compression function over n 64-byte blocks at p, on the state H[0..7] at 0..31
 * (native-endian words), with K at 64 and the message schedule at 320; its exported memory is 2 pages.
 * Assembled (wabt) from this text:
 *
 *   (func (export "blocks") (param $p i32) (param $n i32) (local $a..$h i32) (local $t $x $y $t1 $t2 i32)
 *     (block $done (loop $block
 *       (br_if $done (i32.eqz $n))
 *       for $t in 0, 4 .. 60:    W[$t] = bswap(i32.load($p + $t))            ;; stored at 320 + $t
 *       for $t in 64, 68 .. 252: W[$t] = σ1(W[$t-8]) + W[$t-28] + σ0(W[$t-60]) + W[$t-64]
 *                                ;; σ0 = rotr 7 ^ rotr 18 ^ shr 3, σ1 = rotr 17 ^ rotr 19 ^ shr 10
 *       $a..$h = H[0..7]
 *       for $t in 0, 4 .. 252:   $t1 = $h + Σ1($e) + (($e & $f) ^ (~$e & $g)) + K[$t] + W[$t]
 *                                $t2 = Σ0($a) + (($a & $b) ^ ($a & $c) ^ ($b & $c))
 *                                $h,$g,$f,$e,$d,$c,$b,$a = $g,$f,$e,$d+$t1,$c,$b,$a,$t1+$t2
 *                                ;; Σ0 = rotr 2 ^ rotr 13 ^ rotr 22, Σ1 = rotr 6 ^ rotr 11 ^ rotr 25
 *       H[0..7] += $a..$h
 *       $p += 64; $n -= 1; (br $block)))
 *
 * each step written out in i32 instructions (i32.rotr, i32.shr_u, i32.xor, i32.and, i32.add, with
 * the byte swap as shifts and masks). The bytes are an array literal rather than a hex string: a cold
 * process decodes hex with Buffer code it has not compiled yet (0.17 ms against 0.03 ms).
 */
const BLOCKS_WASM = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x02, 0x7f, 0x7f, 0x00, 0x03, 0x02, 0x01, 0x00, 0x05, 0x03, 0x01, 0x00,
  0x02, 0x07, 0x13, 0x02, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x00, 0x06, 0x62, 0x6c, 0x6f, 0x63, 0x6b, 0x73, 0x00, 0x00, 0x0a, 0x8f,
  0x04, 0x01, 0x8c, 0x04, 0x01, 0x0d, 0x7f, 0x02, 0x40, 0x03, 0x40, 0x20, 0x01, 0x45, 0x0d, 0x01, 0x41, 0x00, 0x21, 0x0a, 0x03, 0x40, 0x20, 0x00,
  0x20, 0x0a, 0x6a, 0x28, 0x02, 0x00, 0x21, 0x0b, 0x41, 0xc0, 0x02, 0x20, 0x0a, 0x6a, 0x20, 0x0b, 0x41, 0x18, 0x74, 0x20, 0x0b, 0x41, 0x80, 0xfe,
  0x03, 0x71, 0x41, 0x08, 0x74, 0x72, 0x20, 0x0b, 0x41, 0x08, 0x76, 0x41, 0x80, 0xfe, 0x03, 0x71, 0x20, 0x0b, 0x41, 0x18, 0x76, 0x72, 0x72, 0x36,
  0x02, 0x00, 0x20, 0x0a, 0x41, 0x04, 0x6a, 0x21, 0x0a, 0x20, 0x0a, 0x41, 0xc0, 0x00, 0x49, 0x0d, 0x00, 0x0b, 0x03, 0x40, 0x41, 0xb8, 0x02, 0x20,
  0x0a, 0x6a, 0x28, 0x02, 0x00, 0x21, 0x0b, 0x41, 0x84, 0x02, 0x20, 0x0a, 0x6a, 0x28, 0x02, 0x00, 0x21, 0x0c, 0x41, 0xc0, 0x02, 0x20, 0x0a, 0x6a,
  0x20, 0x0b, 0x41, 0x11, 0x78, 0x20, 0x0b, 0x41, 0x13, 0x78, 0x73, 0x20, 0x0b, 0x41, 0x0a, 0x76, 0x73, 0x41, 0xa4, 0x02, 0x20, 0x0a, 0x6a, 0x28,
  0x02, 0x00, 0x6a, 0x20, 0x0c, 0x41, 0x07, 0x78, 0x20, 0x0c, 0x41, 0x12, 0x78, 0x73, 0x20, 0x0c, 0x41, 0x03, 0x76, 0x73, 0x41, 0x80, 0x02, 0x20,
  0x0a, 0x6a, 0x28, 0x02, 0x00, 0x6a, 0x6a, 0x36, 0x02, 0x00, 0x20, 0x0a, 0x41, 0x04, 0x6a, 0x21, 0x0a, 0x20, 0x0a, 0x41, 0x80, 0x02, 0x49, 0x0d,
  0x00, 0x0b, 0x41, 0x00, 0x28, 0x02, 0x00, 0x21, 0x02, 0x41, 0x04, 0x28, 0x02, 0x00, 0x21, 0x03, 0x41, 0x08, 0x28, 0x02, 0x00, 0x21, 0x04, 0x41,
  0x0c, 0x28, 0x02, 0x00, 0x21, 0x05, 0x41, 0x10, 0x28, 0x02, 0x00, 0x21, 0x06, 0x41, 0x14, 0x28, 0x02, 0x00, 0x21, 0x07, 0x41, 0x18, 0x28, 0x02,
  0x00, 0x21, 0x08, 0x41, 0x1c, 0x28, 0x02, 0x00, 0x21, 0x09, 0x41, 0x00, 0x21, 0x0a, 0x03, 0x40, 0x20, 0x09, 0x20, 0x06, 0x41, 0x06, 0x78, 0x20,
  0x06, 0x41, 0x0b, 0x78, 0x73, 0x20, 0x06, 0x41, 0x19, 0x78, 0x73, 0x6a, 0x20, 0x06, 0x20, 0x07, 0x71, 0x20, 0x06, 0x41, 0x7f, 0x73, 0x20, 0x08,
  0x71, 0x73, 0x6a, 0x41, 0xc0, 0x00, 0x20, 0x0a, 0x6a, 0x28, 0x02, 0x00, 0x41, 0xc0, 0x02, 0x20, 0x0a, 0x6a, 0x28, 0x02, 0x00, 0x6a, 0x6a, 0x21,
  0x0d, 0x20, 0x02, 0x41, 0x02, 0x78, 0x20, 0x02, 0x41, 0x0d, 0x78, 0x73, 0x20, 0x02, 0x41, 0x16, 0x78, 0x73, 0x20, 0x02, 0x20, 0x03, 0x71, 0x20,
  0x02, 0x20, 0x04, 0x71, 0x73, 0x20, 0x03, 0x20, 0x04, 0x71, 0x73, 0x6a, 0x21, 0x0e, 0x20, 0x08, 0x21, 0x09, 0x20, 0x07, 0x21, 0x08, 0x20, 0x06,
  0x21, 0x07, 0x20, 0x05, 0x20, 0x0d, 0x6a, 0x21, 0x06, 0x20, 0x04, 0x21, 0x05, 0x20, 0x03, 0x21, 0x04, 0x20, 0x02, 0x21, 0x03, 0x20, 0x0d, 0x20,
  0x0e, 0x6a, 0x21, 0x02, 0x20, 0x0a, 0x41, 0x04, 0x6a, 0x21, 0x0a, 0x20, 0x0a, 0x41, 0x80, 0x02, 0x49, 0x0d, 0x00, 0x0b, 0x41, 0x00, 0x41, 0x00,
  0x28, 0x02, 0x00, 0x20, 0x02, 0x6a, 0x36, 0x02, 0x00, 0x41, 0x04, 0x41, 0x04, 0x28, 0x02, 0x00, 0x20, 0x03, 0x6a, 0x36, 0x02, 0x00, 0x41, 0x08,
  0x41, 0x08, 0x28, 0x02, 0x00, 0x20, 0x04, 0x6a, 0x36, 0x02, 0x00, 0x41, 0x0c, 0x41, 0x0c, 0x28, 0x02, 0x00, 0x20, 0x05, 0x6a, 0x36, 0x02, 0x00,
  0x41, 0x10, 0x41, 0x10, 0x28, 0x02, 0x00, 0x20, 0x06, 0x6a, 0x36, 0x02, 0x00, 0x41, 0x14, 0x41, 0x14, 0x28, 0x02, 0x00, 0x20, 0x07, 0x6a, 0x36,
  0x02, 0x00, 0x41, 0x18, 0x41, 0x18, 0x28, 0x02, 0x00, 0x20, 0x08, 0x6a, 0x36, 0x02, 0x00, 0x41, 0x1c, 0x41, 0x1c, 0x28, 0x02, 0x00, 0x20, 0x09,
  0x6a, 0x36, 0x02, 0x00, 0x20, 0x00, 0x41, 0xc0, 0x00, 0x6a, 0x21, 0x00, 0x20, 0x01, 0x41, 0x01, 0x6b, 0x21, 0x01, 0x0c, 0x00, 0x0b, 0x0b, 0x0b,
]);

/** Where the message goes in the module's memory, after the state, K and the schedule. */
const MESSAGE_AT = 1024;
const IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** The part of the WebAssembly API used here (the compiler's libraries here do not declare it). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}

/**
 * V8 runs a WebAssembly function first from its baseline compiler and, once the function has run a
 * certain amount of code (here after about 25 to 40 blocks), compiles it again with its optimizing
 * compiler on a background thread, which a process waits for before it exits. A Stop hook hashes about
 * 70 blocks in all and is done long before optimized code could pay for that compile (about 1.5 ms of
 * CPU and 127 fresh pages): the module therefore holds COPIES copies of the function, each with its own
 * count, and a digest runs on the first copy whose count stays under COPY_BLOCKS with it. Once every copy
 * is used, the last one takes the rest and is optimized as usual (long inputs, big workspaces).
 */
const COPIES = 8;
const COPY_BLOCKS = 24;

/** BLOCKS_WASM with its function in COPIES copies, exported as b0, b1, …, and its memory. */
function copiesModule(): Uint8Array {
  const sections = new Map<number, Uint8Array>();
  for (let off = 8; off < BLOCKS_WASM.length; ) {
    const id = BLOCKS_WASM[off]!;
    let size = 0;
    let p = off + 1;
    for (let shift = 0; ; shift += 7) {
      const x = BLOCKS_WASM[p++]!;
      size |= (x & 0x7f) << shift;
      if (x < 0x80) break;
    }
    sections.set(id, BLOCKS_WASM.subarray(p, p + size));
    off = p + size;
  }
  // The code section holds one entry (count 1): the function's body with its size in front.
  const entry = sections.get(10)!.subarray(1);
  const names: number[] = [];
  for (let i = 0; i < COPIES; i++) names.push(2, 0x62, 0x30 + i, 0, i);
  const code = new Uint8Array(1 + COPIES * entry.length);
  code[0] = COPIES;
  for (let i = 0; i < COPIES; i++) code.set(entry, 1 + i * entry.length);
  /** A section: its id, its size as unsigned LEB128, its payload. */
  const section = (id: number, payload: ArrayLike<number>): ArrayLike<number>[] => {
    const head = [id];
    let n = payload.length;
    do {
      head.push(n > 0x7f ? (n & 0x7f) | 0x80 : n);
      n >>>= 7;
    } while (n > 0);
    return [head, payload];
  };
  const parts: ArrayLike<number>[] = [
    BLOCKS_WASM.subarray(0, 8),
    ...section(1, sections.get(1)!),
    ...section(3, [COPIES, ...new Array<number>(COPIES).fill(0)]),
    ...section(5, sections.get(5)!),
    ...section(7, [COPIES + 1, 6, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 2, 0, ...names]),
    ...section(10, code),
  ];
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return bytes;
}

interface WasmSha {
  readonly memory: Uint8Array;
  readonly view: DataView;
  readonly state: Uint32Array;
  readonly blocks: readonly ((p: number, n: number) => void)[];
  /** Blocks each copy has run. */
  readonly used: number[];
}

/** The module, instantiated on first use; null when this runtime has no WebAssembly. */
let wasmSha: WasmSha | null | undefined;

function wasm(): WasmSha | null {
  if (wasmSha !== undefined) return wasmSha;
  wasmSha = null;
  const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (!api) return null;
  try {
    const { exports } = new api.Instance(new api.Module(copiesModule()), {});
    const buffer = (exports.memory as { buffer: ArrayBuffer }).buffer;
    new Uint32Array(buffer, 64, 64).set(K);
    const blocks: ((p: number, n: number) => void)[] = [];
    for (let i = 0; i < COPIES; i++) blocks.push(exports[`b${i}`] as (p: number, n: number) => void);
    wasmSha = { memory: new Uint8Array(buffer), view: new DataView(buffer), state: new Uint32Array(buffer, 0, 8), blocks, used: new Array<number>(COPIES).fill(0) };
  } catch {
    // A runtime that refuses the module: the JavaScript loop serves.
  }
  return wasmSha;
}

/** SHA-256 of the concatenation of the parts. */
export function sha256(...parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.byteLength;
  const padded = (length + 9 + 63) & ~63;
  const w = wasm();
  if (!w || MESSAGE_AT + padded > w.memory.length) return sha256Js(...parts);
  // Message, 0x80, zero padding, 64-bit big-endian bit length, in place in the module's memory.
  let off = MESSAGE_AT;
  for (const p of parts) {
    w.memory.set(p, off);
    off += p.byteLength;
  }
  w.memory.fill(0, off, MESSAGE_AT + padded);
  w.memory[off] = 0x80;
  w.view.setUint32(MESSAGE_AT + padded - 8, Math.floor(length / 0x20000000));
  w.view.setUint32(MESSAGE_AT + padded - 4, (length * 8) >>> 0);
  w.state.set(IV);
  const n = padded / 64;
  let copy = 0;
  while (copy < COPIES - 1 && w.used[copy]! + n > COPY_BLOCKS) copy++;
  w.used[copy]! += n;
  w.blocks[copy]!(MESSAGE_AT, n);
  const out = new Uint8Array(32);
  const ov = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) ov.setUint32(i * 4, w.state[i]!);
  return out;
}

/** SHA-256 of the concatenation of the parts, in JavaScript alone. */
export function sha256Js(...parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.byteLength;
  // Message, 0x80, zero padding, 64-bit big-endian bit length: a whole number of 64-byte blocks.
  const padded = new Uint8Array((length + 9 + 63) & ~63);
  let off = 0;
  for (const p of parts) {
    padded.set(p, off);
    off += p.byteLength;
  }
  padded[length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(length / 0x20000000));
  view.setUint32(padded.length - 4, (length * 8) >>> 0);

  const h = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const w = new Uint32Array(64);
  for (let block = 0; block < padded.length; block += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(block + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!;
      const b = w[i - 2]!;
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    let a = h[0]!, b = h[1]!, c = h[2]!, d = h[3]!, e = h[4]!, f = h[5]!, g = h[6]!, hh = h[7]!;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (hh + S1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0] = (h[0]! + a) | 0;
    h[1] = (h[1]! + b) | 0;
    h[2] = (h[2]! + c) | 0;
    h[3] = (h[3]! + d) | 0;
    h[4] = (h[4]! + e) | 0;
    h[5] = (h[5]! + f) | 0;
    h[6] = (h[6]! + g) | 0;
    h[7] = (h[7]! + hh) | 0;
  }
  const out = new Uint8Array(32);
  const ov = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) ov.setUint32(i * 4, h[i]!);
  return out;
}
