// Variations of a valid wire document for the differential tests of the hand-written checks
// (fast-mutations.test.ts, fast-reads.test.ts): every member or element replaced by values
// of every kind and edge, or removed, and an extra member added at every level.

import assert from 'node:assert/strict';

const H = (c: string) => c.repeat(64);

/** A 64-character digest of one repeated character. */
export const hex64 = H;

/** A well-formed subject (SubjectSchema) for the wire documents of these tests. */
export const SAMPLE_SUBJECT = {
  repository: 'acme/demo',
  profile: 'default',
  target: 'main',
  change_id: 'c1',
  change_version: 3,
  revision: H('a'),
  context_digest: H('b'),
  policy_epoch: 1,
  requirement_digest: H('c'),
  plan_digest: H('d'),
};

/** Values of every kind and edge; undefined removes the member. */
export const EDGES: unknown[] = [
  undefined, // the key is removed
  null, true, false, 0, -0, 1, 2, 1.5, -1, 999, 1000, 3_600_000, 3_600_001, 2 ** 53 - 1, 2 ** 53, 1e300, 18446744073709551615n, 18446744073709551616n, -1n, 0n,
  '', 'a', 'x'.repeat(128), 'x'.repeat(129), 'a b', 'é', 'a\u0000b', 'x'.repeat(1024), 'x'.repeat(1025), 'x'.repeat(4096), 'x'.repeat(4097),
  H('a'), H('A'), 'a'.repeat(63), 'a'.repeat(65), 'acme/demo', 'acme/..', './x', 'a/b/c', `${'o'.repeat(64)}/${'n'.repeat(100)}`, `${'o'.repeat(65)}/n`,
  'claim', 'heartbeat', 'cancel', 'reconcile', 'result', 'recovery', 'passed', 'failed', 'uncertain', 'not_claimed', 'agent_assertion', 'registered_executor_observation',
  [], [1], ['a'], [H('a')], {}, { owner_id: 'a', agent_id: 'b' }, { owner_id: 'a', agent_id: 'b', x: 1 },
  { registration_id: 'reg', executor_id: 'ex', registration_epoch: 1, verification_key_id: 'k' },
  { observation_digest: H('a'), signature: 'a'.repeat(128) },
];

export type Path = (string | number)[];

/** Every path to a member or array element of v. */
export function paths(v: unknown, at: Path = []): Path[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => [[...at, i], ...paths(x, [...at, i])]);
  if (typeof v === 'object' && v !== null) return Object.entries(v).flatMap(([k, x]) => [[...at, k], ...paths(x, [...at, k])]);
  return [];
}

export function clone<T>(v: T): T {
  if (Array.isArray(v)) return v.map(clone) as T;
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clone(x)])) as T;
  return v;
}

/** A copy of doc with the member at p replaced by value (removed when value is undefined). */
export function withValue(doc: unknown, p: Path, value: unknown): unknown {
  const out = clone(doc) as Record<string | number, unknown>;
  let o = out;
  for (const k of p.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  const last = p[p.length - 1]!;
  if (value === undefined && !Array.isArray(o)) delete o[last];
  else o[last] = clone(value);
  return out;
}

/** Every path to an object (the document itself included). */
export function objects(v: unknown, at: Path = []): Path[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => objects(x, [...at, i]));
  if (typeof v === 'object' && v !== null) return [at, ...Object.entries(v).flatMap(([k, x]) => objects(x, [...at, k]))];
  return [];
}

/** base, each member replaced by every edge value, and an extra member at every level. */
export function edgeVariants(base: Record<string, unknown>, edges: readonly unknown[] = EDGES): unknown[] {
  const out: unknown[] = [base];
  for (const p of paths(base)) for (const e of edges) out.push(withValue(base, p, e));
  for (const p of objects(base)) out.push(p.length === 0 ? { ...base, extra: 1 } : withValue(base, p, { ...(p.reduce<any>((o, k) => o[k], base) as object), extra: null })); // eslint-disable-line @typescript-eslint/no-explicit-any
  return out;
}

/** What a differential run of a hand-written check against its schema saw. */
export interface Agreement {
  readonly total: number;
  readonly accepted: number;
  readonly refusedBySchema: number;
}

/**
 * Runs the hand-written check and the schema it stands in for over every document: whatever the check
 * accepts, the schema must accept too, with an equal value (assert throws otherwise).
 */
export function fastAgreesWithSchema(
  docs: Iterable<unknown>,
  fast: (doc: unknown) => unknown,
  schema: { safeParse(doc: unknown): { success: true; data: unknown } | { success: false } },
): Agreement {
  let total = 0;
  let accepted = 0;
  let refusedBySchema = 0;
  for (const doc of docs) {
    total++;
    const f = fast(doc);
    const z = schema.safeParse(doc);
    if (!z.success) refusedBySchema++;
    if (f === undefined) continue;
    accepted++;
    assert.ok(z.success, `fast path accepted what the schema refuses: ${JSON.stringify(doc, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`);
    assert.deepStrictEqual(f, z.data);
  }
  return { total, accepted, refusedBySchema };
}
