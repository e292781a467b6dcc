// The authority's file name and schema version: shared by its writer (store.ts) and its read-only
// reader (read-only.ts) without either importing the other's SQLite access.

export const AUTHORITY_FILE = 'authority.sqlite';
export const AUTHORITY_SCHEMA_VERSION = 3;
