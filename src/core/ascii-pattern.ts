// Hand-written stand-ins for the short regular expressions on the hooks' paths. A fresh process pays
// for every RegExp it runs, twice: V8 compiles it to bytecode on its first use (about 30 µs here) and
// to machine code on its second (about 45 µs more). The Stop hook ran 10 of them, the SessionStart hook
// 24. A loop over a few dozen characters costs less in a cold process; over thousands (a hundred
// receipt names, every summary of a brief) the interpreter is slower than the RegExp's machine code,
// so those places keep their RegExps.
//
// A stand-in answers test() exactly as its RegExp would and names that RegExp's source (source): the
// RegExp literals stay where schemas use them, and test/unit/ascii-pattern.test.ts checks every
// stand-in against its RegExp on generated strings.

/**
 * An ASCII character class as 128 flags, from the body of a RegExp class: single characters and ranges
 * `a-z`; a `-` first or last is the character itself. Nothing else (no escapes, no negation).
 */
export function asciiClass(spec: string): Uint8Array {
  const set = new Uint8Array(128);
  for (let i = 0; i < spec.length; i++) {
    const c = spec.charCodeAt(i);
    if (c >= 128 || c === 0x5c || c === 0x5d || (i === 0 && c === 0x5e)) throw new Error(`asciiClass: unsupported character in ${spec}`);
    if (i + 2 < spec.length && spec[i + 1] === '-') {
      const end = spec.charCodeAt(i + 2);
      if (end >= 128 || end < c) throw new Error(`asciiClass: bad range in ${spec}`);
      for (let k = c; k <= end; k++) set[k] = 1;
      i += 2;
    } else {
      set[c] = 1;
    }
  }
  return set;
}

/** Whether s[from, to) holds only characters of the class. */
export function allIn(s: string, set: Uint8Array, from = 0, to = s.length): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || set[c] === 0) return false;
  }
  return true;
}

/**
 * `^[first][rest]{min-1,max-1}$` (with `first`) or `^[rest]{min,max}$`: a whole string of length
 * min..max (max may be Infinity) of one ASCII class, the first character optionally of another.
 */
export class AsciiRun {
  private readonly restSet: Uint8Array;
  private readonly firstSet: Uint8Array | undefined;
  /** The equivalent RegExp's source. */
  readonly source: string;

  constructor(
    rest: string,
    private readonly min: number,
    private readonly max: number,
    first?: string,
  ) {
    this.restSet = asciiClass(rest);
    this.firstSet = first === undefined ? undefined : asciiClass(first);
    if (first !== undefined && min < 1) throw new Error('AsciiRun: a first class needs min >= 1');
    const lo = first === undefined ? min : min - 1;
    const hi = first === undefined ? max : max - 1;
    const count = hi === Infinity ? (lo === 0 ? '*' : lo === 1 ? '+' : `{${lo},}`) : lo === hi ? `{${lo}}` : `{${lo},${hi}}`;
    this.source = `^${first === undefined ? '' : `[${first}]`}[${rest}]${count}$`;
  }

  test(s: string): boolean {
    const n = s.length;
    if (n < this.min || n > this.max) return false;
    if (this.firstSet === undefined) return allIn(s, this.restSet);
    const c = s.charCodeAt(0);
    return c < 128 && this.firstSet[c] === 1 && allIn(s, this.restSet, 1);
  }
}

/** `^[0-9a-f]{64}$`: a lowercase hex SHA-256 digest. */
export const HEX64_LOWER = new AsciiRun('0-9a-f', 64, 64);

/** What `/[\u0000-\u001f\u007f]/.test(s)` answers: s holds a C0 control character or DEL. */
export function hasAsciiControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** What `/[^\x00-\x7f]/.test(s)` answers: s holds a character beyond ASCII. */
export function hasNonAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 128) return true;
  return false;
}

/**
 * ASCII letters lowercased, every other character kept (as Rust's to_ascii_lowercase): what a
 * case-insensitive (non-Unicode) regular expression of ASCII letters sees, since such a pattern folds no
 * other character onto an ASCII letter. Testing a lowercase pattern against this text is the /i test;
 * compiling /i patterns costs a cold process about a millisecond for their case tables.
 */
export function asciiLowercase(s: string): string {
  return hasNonAscii(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s.toLowerCase();
}

/** s without the characters outside the ASCII class: `s.replace(/[^X]/g, '')`. */
export function keepOnly(s: string, set: Uint8Array): string {
  let out = '';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 128 && set[c] === 1) continue;
    out += s.slice(start, i);
    start = i + 1;
  }
  return start === 0 ? s : out + s.slice(start);
}
