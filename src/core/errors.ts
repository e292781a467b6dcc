// The one error hierarchy of the project. Core code throws these; only the CLI top level turns them
// into an exit code (src/entries/cli.ts), after stdout and stderr are flushed. Codes are stable: scripts and
// tests match on them, so never rename one.

/** Error kinds, each with its exit code. The README and the man page print this table. */
export const EXIT_CODES = {
  OK: 0,
  INTERNAL: 1,
  USAGE: 2,
  BAD_INPUT: 3,
  AUTH_REJECTED: 4,
  HUB_UNREACHABLE: 5,
  HUB_MALFORMED: 6,
  CONFLICT: 7,
  NOT_QUALIFIED: 8,
  LOCAL_STATE: 9,
  VERIFY_FAILED: 10,
  SCHEMA_MISMATCH: 11,
  RUNTIME_UNAVAILABLE: 12,
  NOT_FOUND: 13,
  SUBJECT_SUPERSEDED: 14,
  POLICY_CHANGED: 15,
  EXECUTOR_REVOKED: 16,
  ORIGIN_REVOKED: 17,
  PROFILE_CHANGED: 18,
  TARGET_MOVED: 19,
  NOT_APPROVED: 20,
  CHECK_FAILED: 21,
} as const;

export type ErrorKind = Exclude<keyof typeof EXIT_CODES, 'OK'>;

/** One line per kind, for --help, the README and the man page. */
export const EXIT_CODE_MEANINGS: Record<keyof typeof EXIT_CODES, string> = {
  OK: 'success',
  INTERNAL: 'unexpected internal error (a bug: please report it)',
  USAGE: 'usage error: unknown command or option, a missing argument, or a malformed number, id, OWNER/NAME or choice',
  BAD_INPUT: 'bad input: a file or document, or a key, signature, digest, endpoint, path or image given as a value, failed validation',
  AUTH_REJECTED: 'the Hub rejected the credential (HTTP 401/403)',
  HUB_UNREACHABLE: 'the Hub could not be reached or timed out',
  HUB_MALFORMED: 'the Hub answered with something that failed strict validation',
  CONFLICT: 'conflict: idempotency key reused with other bytes, stale fence, or refused transition',
  NOT_QUALIFIED: 'the subject is not qualified',
  LOCAL_STATE: 'local state error: missing, unsafe (symlink, loose permissions) or corrupt store or key',
  VERIFY_FAILED: 'a signature or digest did not verify',
  SCHEMA_MISMATCH: 'the Hub does not support the requested schema version',
  RUNTIME_UNAVAILABLE: 'the container runtime is unavailable: no engine answers, or the pinned image is not in it (an engine whose identity changed since it was pinned is a conflict, 7)',
  NOT_FOUND: 'the named object does not exist',
  SUBJECT_SUPERSEDED: 'approve/land refused: the Change has a newer version than the subject named or approved',
  POLICY_CHANGED: 'approve/land refused: the profile\'s policy epoch (installed requirement) changed since approval',
  EXECUTOR_REVOKED: 'approve/land refused: an executor registration the receipt rests on is revoked or no longer current',
  ORIGIN_REVOKED: 'approve/land refused: an originating grant (workspace token) the receipt rests on is revoked',
  PROFILE_CHANGED: 'approve/land refused: a collector profile the receipt rests on is no longer the installed one',
  TARGET_MOVED: 'land refused: the protected target is no longer at the revision the Change was based on',
  NOT_APPROVED: 'land refused: the Change\'s current subject has no approval',
  CHECK_FAILED: 'doctor: at least one check failed (warnings alone exit 0)',
};

export class AgentscmError extends Error {
  readonly kind: ErrorKind;
  /** A stable SCREAMING_SNAKE code more precise than the kind, e.g. KEY_EXISTS. */
  readonly code: string;
  /** Extra machine-readable detail for --json errors. Never paths of secrets or server text. */
  readonly detail: Record<string, unknown> | undefined;

  constructor(kind: ErrorKind, code: string, message: string, detail?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AgentscmError';
    this.kind = kind;
    this.code = code;
    this.detail = detail;
  }

  get exitCode(): number {
    return EXIT_CODES[this.kind];
  }
}

export const usageError = (message: string, code = 'USAGE'): AgentscmError => new AgentscmError('USAGE', code, message);
export const badInput = (message: string, code = 'BAD_INPUT', detail?: Record<string, unknown>): AgentscmError =>
  new AgentscmError('BAD_INPUT', code, message, detail);
export const localState = (message: string, code = 'LOCAL_STATE', detail?: Record<string, unknown>): AgentscmError =>
  new AgentscmError('LOCAL_STATE', code, message, detail);
export const conflict = (message: string, code = 'CONFLICT', detail?: Record<string, unknown>): AgentscmError =>
  new AgentscmError('CONFLICT', code, message, detail);
export const notFound = (message: string, code = 'NOT_FOUND', detail?: Record<string, unknown>): AgentscmError =>
  new AgentscmError('NOT_FOUND', code, message, detail);

export function isAgentscmError(e: unknown): e is AgentscmError {
  return e instanceof AgentscmError;
}

/** Wraps anything thrown into an AgentscmError; unknown errors become INTERNAL. */
/** SQLite result codes that describe the store or its file, not the program (busy is handled apart). */
const SQLITE_STATE = /^SQLITE_(?:READONLY|CANTOPEN|NOTADB|CORRUPT|IOERR|FULL|PERM|NOLFS|AUTH)/;
/** File-system errors that describe the machine's state (permissions, space, a vanished or odd path). */
const FS_STATE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT', 'EIO', 'ENOENT', 'ENOTDIR', 'EISDIR', 'ELOOP', 'EEXIST', 'EMLINK', 'ENAMETOOLONG']);

export function toAgentscmError(e: unknown): AgentscmError {
  if (e instanceof AgentscmError) return e;
  const message = e instanceof Error ? e.message : String(e);
  // What a store or the file system reported is local state (exit 9), not a bug: a read-only or full
  // disk, a database file that is not one, a directory that cannot be written.
  const code = e instanceof Error ? (e as { code?: unknown }).code : undefined;
  if (typeof code === 'string') {
    if (SQLITE_STATE.test(code)) return new AgentscmError('LOCAL_STATE', 'STORE_UNAVAILABLE', `a local store cannot be used (${code}): ${message}`, undefined, { cause: e });
    if (FS_STATE.has(code)) return new AgentscmError('LOCAL_STATE', code, message, undefined, { cause: e });
  }
  return new AgentscmError('INTERNAL', 'INTERNAL', message, undefined, { cause: e });
}
