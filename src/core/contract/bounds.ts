// Wire bounds a client needs before (or without) loading the zod schemas: `agent-task collect` sends
// its first Hub requests while the schemas that check the answers are still loading.

/** Bound on a Hub answer the client will read (a reference body is at most 128 KiB, JSON-escaped). */
export const ANSWER_MAX_BYTES = 1024 * 1024;

/**
 * The one assertion bound, for the CLI and the Hub alike: an assertion's compact JSON encoding (what the
 * CLI sends and the Hub retains) is at most 256 KiB, and so is an assertion file the CLI reads.
 */
export const ASSERTION_MAX_BYTES = 256 * 1024;
/** A result request is the assertion and its small envelope ({"operation":"result","assertion":...}). */
export const RESULT_REQUEST_MAX_BYTES = ASSERTION_MAX_BYTES + 1024;

/** Lease bounds: a claim asks for 1 s .. 1 h; the Hub never issues more than asked. */
export const LEASE_MIN_MS = 1_000;
export const LEASE_MAX_MS = 3_600_000;
