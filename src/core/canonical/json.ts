// Strict JSON decoding and serde_json-compatible compact encoding.
//
// Decoding is stricter than JSON.parse: duplicate keys, lone surrogates, invalid UTF-8, excessive depth
// and oversized input are errors, and integer literals are kept exact (bigint beyond 2^53 - 1), so a u64
// such as 18446744073709551615 survives a round trip. Encoding follows serde_json::to_vec: no
// whitespace, object keys in insertion order (callers build contract structs in declared field order),
// integers as plain digits, strings escaped exactly as serde_json does.

import { isUtf8 } from 'node:buffer';
import { badInput } from '../errors.js';

export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue };

export interface ParseOptions {
  /** Upper bound on the UTF-8 size of the document, checked before any parsing. */
  maxBytes: number;
  /** Maximum nesting depth of arrays and objects. */
  maxDepth?: number;
  /** Names the document in error messages, e.g. "assertion file" or "Hub answer". */
  what?: string;
  /**
   * Refuse every number written with a fraction, an exponent or as -0. The v1 contract has integer
   * fields only, and serde_json refuses `1.0`, `1e0` and `-0` for them; once parsed, JS cannot tell
   * `1.0` from `1`, so the distinction has to be made here. Contract decoding sets it.
   */
  integersOnly?: boolean;
}

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

/**
 * Strict UTF-8 decoding: node:buffer's isUtf8 (one native pass) accepts exactly the well-formed UTF-8
 * that a fatal decoder accepts (no overlong form, no surrogate, nothing beyond U+10FFFF, nothing cut
 * short). Where it is missing: Buffer's decoder replaces every invalid sequence with U+FFFD, so the text
 * is the input exactly when it encodes back to the same bytes. (A fatal TextDecoder says the same, but
 * creating one costs a cold process more than the hooks' whole parse.) A BOM is kept, for the caller.
 */
function decodeUtf8Strict(input: Uint8Array): string | undefined {
  const bytes = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  if (typeof isUtf8 === 'function') return isUtf8(bytes) ? bytes.toString('utf8') : undefined;
  const text = bytes.toString('utf8');
  return Buffer.byteLength(text, 'utf8') === bytes.length && Buffer.from(text, 'utf8').equals(bytes) ? text : undefined;
}

/** Decodes bytes as strict UTF-8 (no BOM, no invalid sequences) and parses them strictly. */
export function parseStrictJson(input: Uint8Array | string, options: ParseOptions): JsonValue {
  const what = options.what ?? 'JSON document';
  const size = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.byteLength;
  if (size > options.maxBytes) {
    throw badInput(`${what} is ${size} bytes, over the ${options.maxBytes}-byte limit`, 'TOO_LARGE');
  }
  let text: string;
  if (typeof input === 'string') {
    text = input;
  } else {
    const decoded = decodeUtf8Strict(input);
    if (decoded === undefined) throw badInput(`${what} is not valid UTF-8`, 'INVALID_UTF8');
    text = decoded;
  }
  if (text.charCodeAt(0) === 0xfeff) throw badInput(`${what} starts with a byte-order mark`, 'INVALID_JSON');
  const fast = parseSimple(text, options.maxDepth ?? 64, options.integersOnly ?? false);
  if (fast !== undefined) return fast;
  try {
    return new Parser(text, options.maxDepth ?? 64, options.integersOnly ?? false).parseDocument();
  } catch (e) {
    if (e instanceof JsonSyntaxError) throw badInput(`${what} is not valid JSON: ${e.message} at offset ${e.offset}`, e.message.startsWith('duplicate key') ? 'DUPLICATE_KEY' : 'INVALID_JSON');
    throw e;
  }
}

/**
 * JSON.parse for the common document on which it provably agrees with Parser, else undefined (then
 * Parser decides, and words any error). The text must hold no backslash (so no escape sequence, which
 * Parser judges itself: lone surrogates) and must be exactly what JSON.stringify writes for the value
 * JSON.parse read, compact or indented by two spaces (as this project's documents are written), with at
 * most one newline after it. That excludes what Parser refuses and JSON.parse lets through: a duplicate
 * key (JSON.parse keeps the last, so the text re-encodes shorter), a lone surrogate (re-encoded as an
 * escape), -0 (re-encoded as 0) and numbers written in any other form. On the value: no nesting deeper
 * than maxDepth, and every integer safe (Parser gives a bigint beyond), every number an integer when
 * only integers are allowed. JSON.parse defines "__proto__" as a plain data member, as Parser does.
 * Everything here runs natively but the walk over the values: a cold process's interpreter is slow
 * over every character of a document.
 */
export function parseSimple(text: string, maxDepth: number, integersOnly: boolean): JsonValue | undefined {
  if (text.indexOf('\\') >= 0) return undefined;
  let v: JsonValue;
  try {
    v = JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
  const walk = (x: JsonValue, depth: number): boolean => {
    if (typeof x === 'number') return Number.isInteger(x) ? Number.isSafeInteger(x) : !integersOnly;
    if (x === null || typeof x !== 'object') return true;
    if (depth > maxDepth) return false;
    if (Array.isArray(x)) {
      for (const e of x) if (!walk(e, depth + 1)) return false;
      return true;
    }
    for (const k of Object.keys(x)) if (!walk(x[k]!, depth + 1)) return false;
    return true;
  };
  if (!walk(v, 1)) return undefined;
  const body = text.charCodeAt(text.length - 1) === 0x0a ? text.slice(0, -1) : text;
  return JSON.stringify(v, null, body.indexOf('\n') >= 0 ? 2 : undefined) === body ? v : undefined;
}

/** The strict parser alone, without parseSimple's shortcut (tests hold the two against each other). */
export function parseStrictText(text: string, maxDepth = 64, integersOnly = false): JsonValue {
  return new Parser(text, maxDepth, integersOnly).parseDocument();
}

class Parser {
  private pos = 0;
  constructor(
    private readonly s: string,
    private readonly maxDepth: number,
    private readonly integersOnly: boolean,
  ) {}

  parseDocument(): JsonValue {
    this.ws();
    const v = this.value(0);
    this.ws();
    if (this.pos !== this.s.length) this.fail('trailing characters');
    return v;
  }

  private fail(message: string): never {
    throw new JsonSyntaxError(message, this.pos);
  }

  private ws(): void {
    const s = this.s;
    while (this.pos < s.length) {
      const c = s.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.pos++;
      else break;
    }
  }

  private value(depth: number): JsonValue {
    const c = this.s[this.pos];
    switch (c) {
      case '{':
        return this.object(depth + 1);
      case '[':
        return this.array(depth + 1);
      case '"':
        return this.string();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
        return this.fail(c === undefined ? 'unexpected end of input' : `unexpected character ${JSON.stringify(c)}`);
    }
  }

  private literal<T extends JsonValue>(word: string, v: T): T {
    if (this.s.startsWith(word, this.pos)) {
      this.pos += word.length;
      return v;
    }
    return this.fail('invalid literal');
  }

  private object(depth: number): JsonValue {
    if (depth > this.maxDepth) this.fail('nesting too deep');
    this.pos++;
    const out: Record<string, JsonValue> = {};
    const seen = new Set<string>();
    this.ws();
    if (this.s[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s[this.pos] !== '"') this.fail('expected a string key');
      const keyAt = this.pos;
      const key = this.string();
      if (seen.has(key)) {
        this.pos = keyAt;
        this.fail(`duplicate key ${JSON.stringify(key)}`);
      }
      seen.add(key);
      this.ws();
      if (this.s[this.pos] !== ':') this.fail('expected ":"');
      this.pos++;
      this.ws();
      const v = this.value(depth);
      // defineProperty so that a "__proto__" key is data, never a prototype change.
      Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      this.ws();
      const c = this.s[this.pos];
      if (c === ',') {
        this.pos++;
        continue;
      }
      if (c === '}') {
        this.pos++;
        return out;
      }
      this.fail('expected "," or "}"');
    }
  }

  private array(depth: number): JsonValue {
    if (depth > this.maxDepth) this.fail('nesting too deep');
    this.pos++;
    const out: JsonValue[] = [];
    this.ws();
    if (this.s[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.ws();
      out.push(this.value(depth));
      this.ws();
      const c = this.s[this.pos];
      if (c === ',') {
        this.pos++;
        continue;
      }
      if (c === ']') {
        this.pos++;
        return out;
      }
      this.fail('expected "," or "]"');
    }
  }

  private string(): string {
    const s = this.s;
    this.pos++; // opening quote
    let out = '';
    let chunkStart = this.pos;
    for (;;) {
      if (this.pos >= s.length) this.fail('unterminated string');
      const c = s.charCodeAt(this.pos);
      if (c === 0x22) {
        out += s.slice(chunkStart, this.pos);
        this.pos++;
        break;
      }
      if (c < 0x20) this.fail('control character in string');
      if (c === 0x5c) {
        out += s.slice(chunkStart, this.pos);
        this.pos++;
        const e = s[this.pos];
        this.pos++;
        switch (e) {
          case '"':
            out += '"';
            break;
          case '\\':
            out += '\\';
            break;
          case '/':
            out += '/';
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          case 'n':
            out += '\n';
            break;
          case 'r':
            out += '\r';
            break;
          case 't':
            out += '\t';
            break;
          case 'u': {
            const hex = s.slice(this.pos, this.pos + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('invalid \\u escape');
            this.pos += 4;
            out += String.fromCharCode(parseInt(hex, 16));
            break;
          }
          default:
            this.pos--;
            this.fail('invalid escape');
        }
        chunkStart = this.pos;
        continue;
      }
      this.pos++;
    }
    // Rust strings are UTF-8: a lone surrogate (raw or escaped) cannot be represented.
    if (!out.isWellFormed()) this.fail('lone surrogate in string');
    return out;
  }

  private number(): number | bigint {
    const s = this.s;
    const start = this.pos;
    if (s[this.pos] === '-') this.pos++;
    if (s[this.pos] === '0') {
      this.pos++;
    } else if (s[this.pos] !== undefined && s[this.pos]! >= '1' && s[this.pos]! <= '9') {
      while (this.pos < s.length && s[this.pos]! >= '0' && s[this.pos]! <= '9') this.pos++;
    } else {
      this.fail('invalid number');
    }
    let integer = true;
    if (s[this.pos] === '.') {
      integer = false;
      this.pos++;
      const d = this.pos;
      while (this.pos < s.length && s[this.pos]! >= '0' && s[this.pos]! <= '9') this.pos++;
      if (this.pos === d) this.fail('invalid number');
    }
    if (s[this.pos] === 'e' || s[this.pos] === 'E') {
      integer = false;
      this.pos++;
      if (s[this.pos] === '+' || s[this.pos] === '-') this.pos++;
      const d = this.pos;
      while (this.pos < s.length && s[this.pos]! >= '0' && s[this.pos]! <= '9') this.pos++;
      if (this.pos === d) this.fail('invalid number');
    }
    const text = s.slice(start, this.pos);
    if (this.integersOnly && (!integer || text === '-0')) {
      this.pos = start;
      this.fail('expected an integer (no fraction, exponent or -0)');
    }
    if (!integer) {
      const n = Number(text);
      if (!Number.isFinite(n)) this.fail('number out of range');
      return n;
    }
    const n = Number(text);
    if (Number.isSafeInteger(n)) return n;
    return BigInt(text);
  }
}

/**
 * serde_json-compatible compact encoding. Objects are written in their insertion order; integers
 * (number or bigint) as exact digits; non-integer numbers, undefined, functions and symbols are refused,
 * because no contract struct carries them.
 */
export function canonicalJson(value: JsonValue): string {
  return encode(value, true);
}

/** The UTF-8 bytes of canonicalJson(value). */
export function canonicalJsonBytes(value: JsonValue): Buffer {
  return Buffer.from(canonicalJson(value), 'utf8');
}

/**
 * Output encoding for --json documents: the same as canonicalJson, but finite non-integer numbers are
 * allowed (tree-ring scores) and undefined object members are omitted.
 */
export function outputJson(value: unknown): string {
  return encode(value as JsonValue, false);
}

const ARRAY_INDEX = /^(?:0|[1-9][0-9]{0,9})$/;
/** A key JSON.stringify writes as itself between quotes, never an array index, ASCII only. */
const SIMPLE_KEY = /^[a-z_][a-z0-9_]*$/;

/**
 * canonicalJson of a deep copy of value whose object keys are in UTF-8 byte order (compareUtf8), in one
 * pass and without the copy. Anything the single pass is unsure of (integer-like keys, lone
 * surrogates, numbers that are not safe integers, undefined members) takes the copy-then-encode path,
 * which encodes or refuses it exactly as before.
 */
export function canonicalSortedJson(value: JsonValue): string {
  const out = sortedPlain(value);
  return out !== undefined ? out : canonicalJson(sortedCopy(value));
}

function sortedPlain(v: JsonValue): string | undefined {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString(10);
    case 'number':
      return Number.isSafeInteger(v) ? String(v) : undefined;
    case 'string':
      return v.isWellFormed() ? JSON.stringify(v) : undefined;
    case 'object': {
      if (Array.isArray(v)) {
        let out = '[';
        for (let i = 0; i < v.length; i++) {
          const e = sortedPlain(v[i]!);
          if (e === undefined) return undefined;
          out += i > 0 ? ',' + e : e;
        }
        return out + ']';
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) return undefined;
      const keys = Object.keys(v);
      // The contract's own keys (snake_case ASCII) need neither escaping nor compareUtf8: for ASCII,
      // the default sort's UTF-16 order is byte order. An object with any other key takes the checks.
      let simple = true;
      for (let i = 0; i < keys.length; i++) {
        if (!SIMPLE_KEY.test(keys[i]!) || keys[i] === '__proto__') {
          simple = false;
          break;
        }
      }
      if (simple) keys.sort();
      else keys.sort(compareUtf8);
      let out = '{';
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]!;
        // A "__proto__" member is data here but not in the copy: the copy path decides.
        if (!simple && (ARRAY_INDEX.test(k) || k === '__proto__' || !k.isWellFormed())) return undefined;
        const member = v[k];
        if (member === undefined) return undefined;
        const e = sortedPlain(member);
        if (e === undefined) return undefined;
        out += (i > 0 ? ',' : '') + (simple ? '"' + k + '"' : JSON.stringify(k)) + ':' + e;
      }
      return out + '}';
    }
    default:
      return undefined;
  }
}

/** Deep copy with object keys in UTF-8 byte order. */
export function sortedCopy(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(sortedCopy);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const k of Object.keys(v).sort(compareUtf8)) out[k] = sortedCopy(v[k]!);
    return out;
  }
  return v;
}

function encode(v: JsonValue | undefined, strict: boolean): string {
  // Most documents hold nothing JSON.stringify writes differently from serde_json (no bigint, no
  // integer-like key, no lone surrogate, no number it would round): one check, then one native call.
  return plain(v, strict) ? JSON.stringify(v) : encodeSlow(v, strict);
}

/** Whether JSON.stringify(v) is exactly encodeSlow(v, strict) (false also for everything encodeSlow refuses). */
function plain(v: unknown, strict: boolean): boolean {
  if (v === null) return true;
  switch (typeof v) {
    case 'boolean':
      return true;
    case 'string':
      return v.isWellFormed();
    case 'number':
      return Number.isSafeInteger(v) || (!strict && Number.isFinite(v));
    case 'object': {
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (!plain(v[i], strict)) return false;
        return true;
      }
      // Only plain data: a prototype could bring a toJSON that JSON.stringify would call.
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) return false;
      const o = v as Record<string, unknown>;
      for (const key of Object.keys(o)) {
        const c = key.charCodeAt(0);
        if (c >= 0x30 && c <= 0x39 && strict && ARRAY_INDEX.test(key)) return false;
        if (!key.isWellFormed()) return false;
        const member = o[key];
        if (member === undefined) {
          if (strict) return false;
          continue;
        }
        if (!plain(member, strict)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

function encodeSlow(v: JsonValue | undefined, strict: boolean): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString(10);
    case 'number':
      if (Number.isSafeInteger(v)) return String(v);
      if (!strict && Number.isFinite(v)) return JSON.stringify(v);
      throw new TypeError(`cannot encode number ${v} canonically`);
    case 'string':
      return quote(v);
    case 'object': {
      if (Array.isArray(v)) {
        let out = '[';
        for (let i = 0; i < v.length; i++) {
          if (i > 0) out += ',';
          out += encodeSlow(v[i], strict);
        }
        return out + ']';
      }
      let out = '{';
      let first = true;
      for (const key of Object.keys(v)) {
        // JS enumerates integer-like keys first, in numeric order, whatever the insertion order: such an
        // object cannot carry a declared field order or a byte-sorted map order, so refuse to sign it.
        if (strict && ARRAY_INDEX.test(key)) throw new TypeError(`object key ${key} is integer-like; its order cannot be kept`);
        const member = v[key];
        if (member === undefined) {
          if (strict) throw new TypeError(`undefined member ${key}`);
          continue;
        }
        if (!first) out += ',';
        first = false;
        out += quote(key) + ':' + encodeSlow(member, strict);
      }
      return out + '}';
    }
    default:
      throw new TypeError(`cannot encode ${typeof v} as JSON`);
  }
}

/**
 * Quotes a string exactly as serde_json does: \" \\ \b \t \n \f \r, other C0 controls as lowercase
 * \u00xx, everything else (including /, DEL, U+2028, U+2029, emoji) raw. ECMAScript's QuoteJSONString
 * has the same rules for well-formed strings, so JSON.stringify is used once well-formedness is known.
 */
export function quote(s: string): string {
  if (!s.isWellFormed()) throw new TypeError('string contains a lone surrogate');
  return JSON.stringify(s);
}

/**
 * Compares strings by their UTF-8 bytes, as Rust's str ordering does (not by UTF-16 code units, where
 * U+1F600 sorts before U+FFFD). UTF-8 byte order is code point order, so no encoding is needed: at the
 * first differing code unit, a surrogate (part of a code point above U+FFFF) sorts after any other unit.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
