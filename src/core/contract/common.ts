// Shared pieces of the v1 wire contract (seed 000): identifiers, digests, u64, bounded collections.
// Every object schema is strict: unknown fields fail.

import { z } from 'zod';
import { parseStrictJson } from '../canonical/json.js';
import { badInput } from '../errors.js';
import { HEX64 } from '../crypto/digest.js';
import { ID_RE } from './paths.js';
import { HEX64_MESSAGE, ID_MESSAGE } from './qualification.js';

export const CAPABILITY = 'agentscm.agent-workflow-tasks/v1';
export const SCHEMA_VERSION = 1;
export const SUPPORTED_SCHEMA_VERSIONS = [1] as const;

/** Identifiers of the contract: [A-Za-z0-9._:-]{1,128}. */
export const Id = z.string().regex(ID_RE, ID_MESSAGE);
export const Hex64 = z.string().regex(HEX64, HEX64_MESSAGE);
export const Hex128 = z.string().regex(/^[0-9a-f]{128}$/, 'must be 128 lowercase hex characters');

export const U64_MAX = 18446744073709551615n;

/** A u64 on the wire: decoded losslessly by parseStrictJson as number or bigint; always a bigint here. */
export const U64 = z
  .union([z.number().int().nonnegative(), z.bigint()])
  .transform((v, ctx) => {
    const b = BigInt(v);
    if (b < 0n || b > U64_MAX || Object.is(v, -0)) {
      ctx.addIssue({ code: 'custom', message: 'must be an unsigned 64-bit integer' });
      return z.NEVER;
    }
    return b;
  });

/** Formats zod issues as one line: "criteria.0.outcome: Invalid option …; …". */
export function formatIssues(error: z.ZodError, max = 3): string {
  const parts = error.issues.slice(0, max).map((i) => `${i.path.length ? i.path.join('.') : '(document)'}: ${i.message}`);
  if (error.issues.length > max) parts.push(`and ${error.issues.length - max} more`);
  return parts.join('; ');
}

export interface DecodeOptions {
  /** Size bound of the encoded document, checked before parsing. */
  maxBytes: number;
  /** Names the document in error messages. */
  what: string;
  /** Stable code of the validation error (default INVALID_DOCUMENT). */
  code?: string;
}

/**
 * Decodes one v1 contract document as serde_json would: size bound first, strict UTF-8 and JSON,
 * duplicate keys refused, integer literals only (no `1.0`, `1e0`, `-0`), then the strict schema.
 */
export function decodeContract<S extends z.ZodType>(bytes: Uint8Array | string, schema: S, options: DecodeOptions): z.output<S> {
  const value = parseStrictJson(bytes, { maxBytes: options.maxBytes, what: options.what, integersOnly: true });
  return validateContract(value, schema, options.what, options.code);
}

/** Validates an already-parsed value against a strict contract schema, as BAD_INPUT on failure. */
export function validateContract<S extends z.ZodType>(value: unknown, schema: S, what: string, code = 'INVALID_DOCUMENT'): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw badInput(`${what} is invalid: ${formatIssues(r.error)}`, code);
  return r.data;
}
