// Shared pieces of the v1 wire contract (seed 000): identifiers, digests, u64, bounded collections.
// Every object schema is strict: unknown fields fail.

import { z } from 'zod';

export const CAPABILITY = 'agentscm.agent-workflow-tasks/v1';
export const SCHEMA_VERSION = 1;
export const SUPPORTED_SCHEMA_VERSIONS = [1] as const;

/** Identifiers of the contract: [A-Za-z0-9._:-]{1,128}. */
export const Id = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'must match [A-Za-z0-9._:-]{1,128}');
export const Hex64 = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters');
export const Hex128 = z.string().regex(/^[0-9a-f]{128}$/, 'must be 128 lowercase hex characters');

export const U64_MAX = 18446744073709551615n;

/** A u64 on the wire: decoded losslessly by parseStrictJson as number or bigint; always a bigint here. */
export const U64 = z
  .union([z.number().int().nonnegative(), z.bigint()])
  .transform((v, ctx) => {
    const b = BigInt(v);
    if (b < 0n || b > U64_MAX) {
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
