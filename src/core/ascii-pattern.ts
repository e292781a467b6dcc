// Stand-ins for short regular expressions, kept only for the modules that still import them: the Hub's
// HTTP/1.1 server (src/hub/http.ts), the Stop hooks' one-request client (src/core/hub-client/http1.ts) and
// the workspace scan (src/core/native/snapshot.ts). Everything else uses RegExps and string methods
// (docs/DEVELOPING.md, "Rules"); this module and test/unit/ascii-pattern.test.ts go with the last of those
// imports. A stand-in answers test() exactly as its RegExp would and names that RegExp's source (source);
// test/unit/ascii-pattern.test.ts checks each against its RegExp on generated strings.

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

/** What `/[\u0000-\u001f\u007f]/.test(s)` answers: s holds a C0 control character or DEL. */
export function hasAsciiControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** An HTTP field name or method (RFC 9110 token): /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/. */
export const HTTP_TOKEN = new AsciiRun("!#$%&'*+.^_`|~0-9A-Za-z-", 1, Infinity);

/** A Content-Length as both ends of the Hub's HTTP accept it: /^[0-9]{1,15}$/. */
export const HTTP_CONTENT_LENGTH = new AsciiRun('0-9', 1, 15);
