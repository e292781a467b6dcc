// The authority's file name and schema version: shared by its writer (store.ts) and its read-only
// reader (read-only.ts) without either importing the other's SQLite access.

export const AUTHORITY_FILE = 'authority.sqlite';
export const AUTHORITY_SCHEMA_VERSION = 3;
/**
 * Versions the read-only reader (the Stop hooks) understands: version 3 only adds the tables of
 * protected targets, approvals and integrations and the tokens' scope, which that reader never reads.
 */
export const AUTHORITY_READABLE_VERSIONS: readonly number[] = [2, 3];
