// The shapes of the command table. The table itself (src/entries/cli.ts) is plain data: help, man pages and
// the parser use it without importing any command module.

export interface OptionSpec {
  /** Long flag without dashes, e.g. "key-dir". The parsed value is stored under this name. */
  readonly flag: string;
  /** Metavariable for options that take a value, e.g. "DIR". Absent for boolean switches. */
  readonly value?: string;
  readonly help: string;
  readonly required?: boolean;
  /** May be given several times; the parsed value is then a string array. */
  readonly repeatable?: boolean;
  /** Shown in help; the command module applies it. */
  readonly defaultText?: string;
}

export interface ArgSpec {
  readonly name: string;
  readonly help: string;
  readonly required?: boolean;
  readonly variadic?: boolean;
}

export type ErrorPolicy =
  /** Exit code from the error kind (README table); JSON error document on stdout in --json mode. */
  | 'agentscm'
  /** Upstream Tree Ring convention: every error is one line on stderr and exit 2, stdout empty. */
  | 'tree-ring'
  /** Hooks: the module decides stdout and exit code itself; thrown errors exit 1 with a category line. */
  | 'hook';

export interface CommandSpec {
  /** The words after the program name, e.g. ["agent-task", "key", "generate"]. */
  readonly path: readonly string[];
  readonly summary: string;
  /** Longer text for --help and the man page. */
  readonly details?: string;
  readonly args?: readonly ArgSpec[];
  readonly options?: readonly OptionSpec[];
  /** Whether the command accepts --json (default true). */
  readonly json?: boolean;
  /** What --json does, where it is not simply "print one JSON document on stdout". */
  readonly jsonHelp?: string;
  readonly errorPolicy?: ErrorPolicy;
  /** Imports the command module; only called when this command runs. */
  readonly load: () => Promise<CommandModule>;
}

export interface GroupSpec {
  readonly path: readonly string[];
  readonly summary: string;
}

export type OptionValue = string | string[] | true;

export interface Invocation {
  /** Positional arguments in order. */
  readonly args: readonly string[];
  /** Options by flag name; absent when not given. */
  readonly opts: Readonly<Record<string, OptionValue | undefined>>;
  readonly json: boolean;
  /** Options taken from the client configuration, by flag: where each value came from. */
  readonly configured?: Readonly<Record<string, string>>;
}

export interface Output {
  write(chunk: string | Uint8Array): unknown;
  readonly isTTY?: boolean;
}

export interface CommandContext {
  readonly stdout: Output;
  readonly stderr: Output;
  readonly stdin: NodeJS.ReadableStream;
  /** The file descriptor behind stdin when it is the process's own (hooks read it synchronously). */
  readonly stdinFd?: number;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** Which launcher ran: "agentscm" or "tree-ring". */
  readonly program: 'agentscm' | 'tree-ring';
}

export interface CommandResult {
  /** The result document: printed as JSON with --json. */
  readonly data?: unknown;
  /** Human text printed without --json; when absent, data is rendered as "key: value" lines. */
  readonly text?: string;
  /** Exact stdout bytes (hooks, bare JSON answers); bypasses --json and text rendering. */
  readonly raw?: string;
  /** Non-zero exit without an error (e.g. verify mismatch reported as data). */
  readonly exitCode?: number;
}

export interface CommandModule {
  run(ctx: CommandContext, inv: Invocation): Promise<CommandResult>;
}
