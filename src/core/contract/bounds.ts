// Wire bounds a client needs before (or without) loading the zod schemas: `agent-task collect` sends
// its first Hub requests while the schemas that check the answers are still loading.

/** Bound on a Hub answer the client will read (a reference body is at most 128 KiB, JSON-escaped). */
export const ANSWER_MAX_BYTES = 1024 * 1024;
