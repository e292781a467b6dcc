// Tiny strict validators for the activation documents. The lifecycle hook loads the manifest and the
// receipts, and the hook path must stay free of zod, so these checks are written out by hand: every
// object has an exact key set, every string a bound, every array a length limit.

import { badInput } from '../../errors.js';
import type { JsonValue } from '../../canonical/json.js';

export type Obj = { [key: string]: JsonValue };

export class ShapeError extends Error {}

export function fail(where: string, message: string): never {
  throw new ShapeError(`${where}: ${message}`);
}

export function asObject(v: JsonValue | undefined, where: string, required: readonly string[], optional: readonly string[] = []): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(where, 'must be an object');
  const o = v as Obj;
  for (const k of Object.keys(o)) if (!required.includes(k) && !optional.includes(k)) fail(where, `unknown field ${JSON.stringify(k)}`);
  for (const k of required) if (!(k in o)) fail(where, `missing field ${JSON.stringify(k)}`);
  return o;
}

export function asString(v: JsonValue | undefined, where: string, max = 256, pattern?: { test(s: string): boolean }): string {
  if (typeof v !== 'string') fail(where, 'must be a string');
  if (v.length > max) fail(where, `longer than ${max} characters`);
  if (pattern && !pattern.test(v)) fail(where, 'has an invalid format');
  return v;
}

export function asInt(v: JsonValue | undefined, where: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) fail(where, `must be an integer in ${min}..${max}`);
  return v;
}

export function asBool(v: JsonValue | undefined, where: string): boolean {
  if (typeof v !== 'boolean') fail(where, 'must be a boolean');
  return v;
}

export function asArray(v: JsonValue | undefined, where: string, max: number): JsonValue[] {
  if (!Array.isArray(v)) fail(where, 'must be an array');
  if (v.length > max) fail(where, `has more than ${max} entries`);
  return v;
}

export function oneOf<T extends string>(v: JsonValue | undefined, where: string, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) fail(where, `must be one of ${allowed.join(', ')}`);
  return v as T;
}

export { HEX64 } from '../../crypto/digest.js';
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** Host-derived identifiers (session, workflow, agent profile): bounded, printable, no separators that could name a path. */
export const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;
/** Project-relative, normalized, no "..", no absolute, no empty segments. */
export function asRelativePath(v: JsonValue | undefined, where: string): string {
  const s = asString(v, where, 512);
  if (s === '' || s.startsWith('/') || s.includes('\\') || s.includes('\0')) fail(where, 'must be a project-relative path');
  for (const seg of s.split('/')) if (seg === '' || seg === '.' || seg === '..') fail(where, 'must be a normalized project-relative path');
  return s;
}

/** Turns a ShapeError into a BAD_INPUT AgentscmError. */
export function shapeToBadInput<T>(what: string, code: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof ShapeError) throw badInput(`${what} is invalid: ${e.message}`, code);
    throw e;
  }
}
