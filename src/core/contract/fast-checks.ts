// The predicates the hand-written wire checks share (fast-mutations.ts for the Hub's requests,
// fast-collector-answers.ts for collect's answers). No zod here, and nothing that builds zod schemas
// when it loads: collect uses these precisely so that zod stays unloaded.

import { HEX64 } from '../crypto/digest.js';
import { ID_RE } from './paths.js';

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isId = (v: unknown): v is string => typeof v === 'string' && ID_RE.test(v);
export const isHex64 = (v: unknown): v is string => typeof v === 'string' && HEX64.test(v);
/** A safe integer in [min, max]; never -0, which some schemas (u64) refuse. */
export const isIntIn = (v: unknown, min: number, max: number): v is number => typeof v === 'number' && Number.isSafeInteger(v) && !Object.is(v, -0) && v >= min && v <= max;
export const isCount = (v: unknown): v is number => isIntIn(v, 1, Number.MAX_SAFE_INTEGER);

/** Exactly these own keys (a strict object): no more, no fewer. */
export function hasExactly(o: Obj, keys: readonly string[]): boolean {
  const own = Object.keys(o);
  if (own.length !== keys.length) return false;
  for (const k of keys) if (!Object.prototype.hasOwnProperty.call(o, k)) return false;
  return true;
}
