// argv -> (command, invocation) through commander, with the command tree built from the command table
// (src/entries/cli.ts): one commander Command per group and verb, each verb with its table arguments and options.
// No command module is imported here. Help text stays the table's own (src/cli/help.ts), so commander
// only parses; its errors become the project's USAGE errors (exit 2, one line, the error JSON on stdout
// with --json: src/cli/run.ts), with commander's "did you mean" for unknown commands and options.

import { Command, CommanderError, Option } from 'commander';
import { usageError } from '../core/errors.js';
import type { CommandSpec, GroupSpec, Invocation, OptionSpec, OptionValue } from './types.js';

/**
 * Options that may also stand before the command words (`agentscm --data-dir D skill-workflow …`,
 * `tree-ring --root R recall …`). They are accepted there only if the resolved command declares them,
 * and there the later of a leading and a trailing one wins.
 */
const LEADING_WITH_VALUE = ['data-dir', 'root'] as const;

export type Parsed =
  | { kind: 'version'; path: readonly string[] }
  | { kind: 'help'; path: readonly string[] }
  | { kind: 'command'; spec: CommandSpec; inv: Invocation };

/** Thrown from inside commander's parse to end it with an answer that is not a command to run. */
class Answer {
  constructor(readonly parsed: Parsed) {}
}

/** What one parse gathers across the nodes it passes (the tree's options are per node). */
interface ParseState {
  json: boolean;
  help: boolean;
  readonly leading: Map<string, string>;
  result?: Parsed;
}

const quoted = (path: readonly string[]) => `"${path.join(' ')}"`;

/** commander's "(Did you mean X?)" as a clause of the one-line message, or "(see --help)". */
function suggestion(message: string): string {
  const m = /\n\(Did you mean (.*)\?\)$/s.exec(message);
  return m ? `(did you mean ${m[1]}?)` : '(see --help)';
}

/**
 * The commander node of one group or verb: parse only, never print, never exit. Its options come later
 * (configure*), and only for the nodes argv reaches: a node's options cost more to create than one parse.
 */
function node(word: string, path: readonly string[], knownFlags: () => ReadonlyMap<string, OptionSpec | undefined>): Command {
  const cmd = new Command(word)
    .helpOption(false)
    .helpCommand(false)
    .showSuggestionAfterError(true)
    .configureOutput({ writeOut: () => {}, writeErr: () => {}, outputError: () => {} });
  cmd.exitOverride((e: CommanderError) => {
    throw translate(e, cmd, path, knownFlags());
  });
  return cmd;
}

/** commander's error, in the words the project's users and tests rely on. */
function translate(e: CommanderError, cmd: Command, path: readonly string[], known: ReadonlyMap<string, OptionSpec | undefined>): unknown {
  const where = path.length ? ` for ${quoted(path)}` : '';
  switch (e.code) {
    case 'commander.help':
      // A group (or the program) given no command word: its help, as `--help` would show it.
      return new Answer({ kind: 'help', path });
    case 'commander.unknownCommand':
      return usageError(`unknown command ${quoted([...path, cmd.args[0] ?? ''])} ${suggestion(e.message)}`);
    case 'commander.unknownOption': {
      const m = /^error: unknown option '([\s\S]*)'(?:\n\(Did you mean [\s\S]*\?\))?$/.exec(e.message);
      const tok = m ? m[1]! : '';
      // `--switch=value` of a known switch: commander only knows it is not an option it can take.
      const eq = tok.indexOf('=');
      if (tok.startsWith('--') && eq > 2) {
        const name = tok.slice(2, eq);
        if (known.has(name) && known.get(name)?.value === undefined) return usageError(`--${name} takes no value`);
      }
      return usageError(`unknown option ${tok}${where} ${suggestion(e.message)}`);
    }
    case 'commander.optionMissingArgument': {
      const name = /'--([^ ']+)/.exec(e.message)?.[1] ?? '';
      const value = known.get(name)?.value ?? /<([^>]+)>/.exec(e.message)?.[1];
      return usageError(`--${name} needs a value${value ? ` (${value})` : ''}`);
    }
    case 'commander.missingArgument':
      return usageError(`missing argument ${/'([^']*)'/.exec(e.message)?.[1] ?? ''}`.trim());
    case 'commander.excessArguments':
      return usageError(`unexpected argument "${cmd.args[cmd.registeredArguments.length] ?? ''}"`);
    default:
      return usageError(e.message.replace(/^error: /, '').replace(/[\r\n]+/g, ' '));
  }
}

/** The options every node takes. */
function addUniversalOptions(cmd: Command): void {
  cmd.addOption(new Option('-h, --help', 'show help for this command'));
  cmd.addOption(new Option('--json', 'print one JSON document on stdout'));
}

/**
 * A commander option for a table flag. A flag spelled `--no-X` is a switch of its own here, not
 * commander's negation of `--X` (which would default it to set and store it under `X`).
 */
function tableOption(flags: string, help?: string): Option {
  const opt = new Option(flags, help);
  opt.negate = false;
  return opt;
}

/** A verb's options as commander options (values, repeatable values, switches) and its arguments. */
function addVerbOptions(cmd: Command, spec: CommandSpec, path: readonly string[]): void {
  addUniversalOptions(cmd);
  for (const o of spec.options ?? []) {
    const opt = tableOption(o.value === undefined ? `--${o.flag}` : `--${o.flag} <${o.value}>`, o.help);
    const leading = (LEADING_WITH_VALUE as readonly string[]).includes(o.flag);
    opt.argParser((value: string | undefined, previous: OptionValue | undefined): OptionValue => {
      if (o.repeatable) return [...(Array.isArray(previous) ? previous : []), String(value)];
      if (previous !== undefined && !leading) throw usageError(`--${o.flag} given more than once`);
      return value ?? true;
    });
    cmd.addOption(opt);
  }
  if (spec.json === false) {
    cmd.on('option:json', () => {
      throw usageError(`${quoted(path)} has no --json output`);
    });
  }
  for (const a of spec.args ?? []) cmd.argument(a.required ? `<${a.name}${a.variadic ? '...' : ''}>` : `[${a.name}${a.variadic ? '...' : ''}]`, a.help);
}

/** The configured value of an option the command line did not give (src/cli/client-config.ts). */
export type OptionDefaults = (spec: CommandSpec, flag: string) => { value: string; source: string } | undefined;

/** The verb's invocation from what commander parsed into its node. */
function invocation(cmd: Command, spec: CommandSpec, state: ParseState, defaults?: OptionDefaults): Invocation {
  const opts: Record<string, OptionValue> = {};
  const configured: Record<string, string> = {};
  for (const o of spec.options ?? []) {
    const value = cmd.getOptionValue(tableOption(`--${o.flag}`).attributeName()) as OptionValue | undefined;
    if (value !== undefined) opts[o.flag] = value;
    else if (defaults && o.value !== undefined && !o.repeatable) {
      const d = defaults(spec, o.flag);
      if (d) [opts[o.flag], configured[o.flag]] = [d.value, d.source];
    }
  }
  // Checked here, after commander's checks of unknown options and arguments, rather than by commander
  // before them: a mistyped option is then named as such (with its "did you mean"), not reported as the
  // required option it was meant to be.
  for (const o of spec.options ?? []) {
    if (o.required && opts[o.flag] === undefined) throw usageError(`missing required option --${o.flag}${o.value ? ` ${o.value}` : ''}`);
  }
  return { args: [...cmd.args], opts, json: state.json, ...(Object.keys(configured).length > 0 ? { configured } : {}) };
}

export function parseArgv(argv: readonly string[], commands: readonly CommandSpec[], groups: readonly GroupSpec[], defaults?: OptionDefaults): Parsed {
  const state: ParseState = { json: false, help: false, leading: new Map() };
  const groupFlags = new Map<string, OptionSpec | undefined>([
    ['json', undefined],
    ['help', undefined],
    ['version', undefined],
  ]);

  const verbs = new Map<Command, CommandSpec>();
  const groupPaths = new Map<Command, readonly string[]>();

  /** A group or the program: --version, --help (for the words that follow), the leading options. */
  const configureGroup = (cmd: Command, path: readonly string[]): void => {
    cmd.enablePositionalOptions();
    addUniversalOptions(cmd);
    cmd.on('option:json', () => {
      state.json = true;
    });
    cmd.on('option:help', () => {
      state.help = true;
    });
    // `--version` before any command word, or right after a group's words (`agentscm tree-ring
    // --version`: the program decides whether that group has a version of its own).
    cmd.addOption(new Option('--version', 'print the version'));
    cmd.on('option:version', () => {
      throw new Answer({ kind: 'version', path });
    });
    for (const flag of LEADING_WITH_VALUE) {
      groupFlags.set(flag, { flag, value: 'DIR', help: '' });
      cmd.addOption(new Option(`--${flag} <DIR>`).hideHelp());
      cmd.on(`option:${flag}`, (value: string) => {
        state.leading.set(flag, value);
      });
    }
    cmd.hook('preSubcommand', (_parent, sub) => {
      const subGroup = groupPaths.get(sub);
      if (subGroup) return configureGroup(sub, subGroup);
      const spec = verbs.get(sub)!;
      // The words name a verb: --help before it wins, then the leading options go to it.
      if (state.help) throw new Answer({ kind: 'help', path: spec.path });
      configureVerb(sub, spec);
      for (const [flag, value] of state.leading) {
        if (!(spec.options ?? []).some((o) => o.flag === flag)) throw usageError(`--${flag} does not apply to ${quoted(spec.path)}`);
        sub.setOptionValueWithSource(tableOption(`--${flag}`).attributeName(), value, 'cli');
      }
    });
  };

  const configureVerb = (cmd: Command, spec: CommandSpec): void => {
    cmd.on('option:json', () => {
      state.json = true;
    });
    // After the verb, --help answers at once: what follows it is not checked.
    cmd.on('option:help', () => {
      throw new Answer({ kind: 'help', path: spec.path });
    });
    addVerbOptions(cmd, spec, spec.path);
    cmd.action(() => {
      state.result = { kind: 'command', spec, inv: invocation(cmd, spec, state, defaults) };
    });
  };

  const program = node('', [], () => groupFlags);
  configureGroup(program, []);
  const nodes = new Map<string, Command>([['', program]]);
  const groupAt = (path: readonly string[]): Command => {
    const key = path.join(' ');
    let cmd = nodes.get(key);
    if (!cmd) {
      cmd = node(path[path.length - 1]!, path, () => groupFlags);
      groupPaths.set(cmd, path);
      groupAt(path.slice(0, -1)).addCommand(cmd);
      nodes.set(key, cmd);
    }
    return cmd;
  };
  for (const g of groups) groupAt(g.path);
  for (const spec of commands) {
    const path = spec.path;
    const flags = () => new Map<string, OptionSpec | undefined>([['json', undefined], ['help', undefined], ...(spec.options ?? []).map((o) => [o.flag, o] as const)]);
    const cmd = node(path[path.length - 1]!, path, flags);
    verbs.set(cmd, spec);
    groupAt(path.slice(0, -1)).addCommand(cmd);
  }

  try {
    program.parse([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof Answer) return e.parsed;
    throw e;
  }
  if (!state.result) throw usageError('no command given (see --help)');
  return state.result;
}
