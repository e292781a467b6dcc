// The top level: parse, import the one command module needed, run it, print, map errors to exit codes.
// Only this function decides an exit code; it never calls process.exit, so output is flushed first.

import { outputJson } from '../core/canonical/json.js';
import { toAgentscmError, EXIT_CODES, usageError, type AgentscmError } from '../core/errors.js';
import { renderHelp, type ExitStatusRows } from './help.js';
import { parseArgv } from './argv.js';
import type { CommandContext, CommandResult, CommandSpec, ErrorPolicy, GroupSpec } from './types.js';

export interface Program {
  readonly name: 'agentscm' | 'tree-ring';
  /** What --version prints, without a trailing newline. */
  readonly versionLine: string;
  readonly version: string;
  readonly commands: readonly CommandSpec[];
  readonly groups: readonly GroupSpec[];
  /** Policy for usage errors that happen before a command is resolved. */
  readonly defaultErrorPolicy: ErrorPolicy;
  /** Exit statuses for --help and the man page when they differ from the error-kind table. */
  readonly exitStatus?: ExitStatusRows;
  /**
   * Groups that are programs of their own under this one (`agentscm tree-ring X` is `tree-ring X`): the
   * group word, and the name and version line they answer with.
   */
  readonly subprograms?: readonly { readonly group: string; readonly name: 'tree-ring'; readonly versionLine: string }[];
  /** Rewrites an error message before it is printed (the CLIs redact secret-shaped input they quote). */
  readonly redact?: (message: string) => string;
  /**
   * Fills the Hub-call options a command line leaves out from the client configuration
   * (client-config.ts); given by the programs that read it, so that the Stop hook bundle carries none of it.
   */
  readonly clientConfig?: (env: NodeJS.ProcessEnv, cwd: string) => { lookup(flag: string): { value: string; source: string } | undefined };
}

export async function runProgram(program: Program, argv: readonly string[], ctx: CommandContext): Promise<number> {
  // NO_COLOR (no-color.org: set and not empty) turns colour off everywhere, ink's views included:
  // chalk, which ink colours with, reads FORCE_COLOR=0 as "no colour" when it loads.
  if (ctx.env.NO_COLOR !== undefined && ctx.env.NO_COLOR !== '' && process.env.FORCE_COLOR === undefined) process.env.FORCE_COLOR = '0';
  let policy: ErrorPolicy = program.defaultErrorPolicy;
  let json = argv.includes('--json');
  let resolved: CommandSpec | undefined;
  try {
    const config = program.clientConfig?.(ctx.env, ctx.cwd);
    // The Hub itself (`hub serve`) is configured by its operator, never by a client's settings; the Stop
    // hooks take theirs from the command line install-stop registered; administration takes only the
    // data dir (`authority token issue --repository` limits a token, it must never come from a default).
    const fill = (spec: CommandSpec, flag: string) =>
      spec.path[0] === 'hub' || spec.errorPolicy === 'hook' || (spec.path[0] === 'authority' && flag !== 'data-dir') ? undefined : config!.lookup(flag);
    const parsed = parseArgv(argv, program.commands, program.groups, config && fill);
    if (parsed.kind === 'version') {
      if (parsed.path.length === 0) {
        ctx.stdout.write(program.versionLine + '\n');
        return 0;
      }
      const sub = parsed.path.length === 1 ? program.subprograms?.find((p) => p.group === parsed.path[0]) : undefined;
      if (!sub) throw usageError(`unknown option --version for "${parsed.path.join(' ')}"`);
      ctx.stdout.write(sub.versionLine + '\n');
      return 0;
    }
    if (parsed.kind === 'help') {
      // No command, but a JSON answer asked for: a script's mistake, answered as one (a JSON error,
      // exit 2) rather than with a page of text. --help itself is always the text.
      const asked = argv.includes('--help') || argv.includes('-h');
      const ownGroup = parsed.path.length === 0 || !program.subprograms?.some((p) => p.group === parsed.path[0]);
      if (json && !asked && program.name === 'agentscm' && ownGroup) {
        throw usageError(parsed.path.length === 0 ? 'a command is required (see --help)' : `"${parsed.path.join(' ')}" needs a command (see ${program.name} ${parsed.path.join(' ')} --help)`);
      }
      ctx.stdout.write(renderHelp(program.name, program.commands, program.groups, parsed.path, program.version, program.exitStatus));
      return 0;
    }
    const { spec, inv } = parsed;
    resolved = spec;
    policy = spec.errorPolicy ?? program.defaultErrorPolicy;
    json = inv.json;
    const mod = await spec.load();
    const result = await mod.run(ctx, inv);
    writeResult(ctx, result, inv.json);
    return result.exitCode ?? 0;
  } catch (e) {
    const err = toAgentscmError(e);
    // A usage error of a hook must not exit 2: both hosts read exit 2 as "block", and an unbounded
    // block would loop a session forever. Name the hook by its command words anywhere in argv.
    const hookCommand = policy === 'hook' ? resolved : program.commands.find((c) => c.errorPolicy === 'hook' && containsWords(argv, c.path));
    if (hookCommand) policy = 'hook';
    // A command of a subprogram (`agentscm tree-ring …`) speaks with that program's name; a command line
    // under its group that did not parse follows that program's error rules as well.
    const sub = resolved === undefined && hookCommand === undefined ? program.subprograms?.find((p) => p.group === argv[0]) : undefined;
    const subPolicy = sub && program.commands.find((c) => c.path[0] === sub.group)?.errorPolicy;
    if (subPolicy) policy = subPolicy;
    const words = (resolved ?? hookCommand)?.path ?? (sub && [sub.group]);
    const name = program.subprograms?.find((p) => p.group === words?.[0])?.name ?? program.name;
    return reportError(ctx, name, err, policy, json, program.redact);
  }
}

function containsWords(argv: readonly string[], words: readonly string[]): boolean {
  for (let i = 0; i + words.length <= argv.length; i++) if (words.every((w, j) => argv[i + j] === w)) return true;
  return false;
}

function writeResult(ctx: CommandContext, result: CommandResult, json: boolean): void {
  if (result.raw !== undefined) {
    ctx.stdout.write(result.raw);
    return;
  }
  if (json) {
    ctx.stdout.write(outputJson(result.data ?? null) + '\n');
    return;
  }
  if (result.text !== undefined) {
    ctx.stdout.write(result.text.endsWith('\n') || result.text === '' ? result.text : result.text + '\n');
    return;
  }
  if (result.data !== undefined) ctx.stdout.write(renderPlain(result.data));
}

/** Default human rendering: "key: value" lines, nested values as compact JSON. */
export function renderPlain(data: unknown): string {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return outputJson(data) + '\n';
  return (
    Object.entries(data as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : outputJson(v)}`)
      .join('\n') + '\n'
  );
}

function reportError(ctx: CommandContext, name: string, err: AgentscmError, policy: ErrorPolicy, json: boolean, redact?: (message: string) => string): number {
  // One line, and no terminal control: a message may quote what a Hub or a file said.
  const flat = err.message.replace(/[\r\n]+/g, ' ').replace(/[\x00-\x1f\x7f-\x9f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  const oneLine = redact ? redact(flat) : flat;
  if (policy === 'tree-ring') {
    ctx.stderr.write(`error: ${oneLine}\n`);
    return 2;
  }
  if (policy === 'hook') {
    // Hook modules report their own categories; anything that escapes is a non-blocking failure.
    ctx.stderr.write(`${name}: hook error: ${err.kind === 'INTERNAL' ? 'internal error' : err.code.toLowerCase()}\n`);
    return 1;
  }
  ctx.stderr.write(`${name}: error: ${oneLine}\n`);
  if (typeof err.detail?.hint === 'string') ctx.stderr.write(`${name}: hint: ${err.detail.hint}\n`);
  if (err.kind === 'INTERNAL' && ctx.env.AGENTSCM_DEBUG === '1' && err.cause instanceof Error) ctx.stderr.write(`${err.cause.stack}\n`);
  if (json) {
    const doc: Record<string, unknown> = { error: { kind: err.kind, code: err.code, message: oneLine, exit_code: err.exitCode } };
    if (err.detail) (doc.error as Record<string, unknown>).detail = err.detail;
    ctx.stdout.write(outputJson(doc) + '\n');
  }
  return err.exitCode || EXIT_CODES.INTERNAL;
}
