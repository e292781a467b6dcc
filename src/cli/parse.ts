// argv -> (command, invocation), driven only by the command table. No command module is imported here.

import { usageError } from '../core/errors.js';
import type { CommandSpec, GroupSpec, Invocation, OptionSpec, OptionValue } from './types.js';

/** Options every command accepts, wherever they stand. */
const UNIVERSAL: readonly OptionSpec[] = [
  { flag: 'json', help: 'print one JSON document on stdout' },
  { flag: 'help', help: 'show help for this command' },
];

/**
 * Options that may also stand before the command words (`agentscm --data-dir D skill-workflow …`,
 * `tree-ring --root R recall …`). They are accepted there only if the resolved command declares them.
 */
const LEADING_WITH_VALUE = new Set(['data-dir', 'root']);

export type Parsed =
  | { kind: 'version'; path: readonly string[] }
  | { kind: 'help'; path: readonly string[] }
  | { kind: 'command'; spec: CommandSpec; inv: Invocation };

export function parseArgv(argv: readonly string[], commands: readonly CommandSpec[], groups: readonly GroupSpec[]): Parsed {
  const leading: Record<string, OptionValue> = {};
  let json = false;
  let help = false;
  const path: string[] = [];
  let i = 0;

  // 1. Leading options and command words.
  for (; i < argv.length; i++) {
    const tok = argv[i]!;
    if (tok === '--') {
      i++;
      break;
    }
    // A lone "-" is an operand (stdin), never an option.
    if (tok.startsWith('-') && tok !== '-') {
      const { name, inline } = splitFlag(tok);
      // `--version` before any command word, or right after a group's words (`agentscm tree-ring
      // --version`: the program decides whether that group has a version of its own).
      if (name === 'version' && !findCommand(commands, path)) return { kind: 'version', path };
      if (name === 'json') {
        if (inline !== undefined) throw usageError('--json takes no value');
        json = true;
        continue;
      }
      if (name === 'help') {
        help = true;
        continue;
      }
      if (LEADING_WITH_VALUE.has(name)) {
        const value = inline ?? argv[++i];
        if (value === undefined) throw usageError(`--${name} needs a value`);
        leading[name] = value;
        continue;
      }
      if (findCommand(commands, path)) break; // command resolved: the rest is its options
      throw usageError(`unknown option ${tok}${path.length ? ` for "${path.join(' ')}"` : ''}`);
    }
    const next = [...path, tok];
    if (findCommand(commands, next) || isGroup(commands, groups, next)) {
      path.push(tok);
      continue;
    }
    if (findCommand(commands, path)) break; // a positional argument of the resolved command
    if (path.length === 0) throw usageError(`unknown command "${tok}" (see --help)`);
    throw usageError(`unknown command "${[...path, tok].join(' ')}" (see --help)`);
  }

  const spec = findCommand(commands, path);
  if (!spec) {
    if (help || path.length === 0 || i >= argv.length) return { kind: 'help', path };
    throw usageError(`"${path.join(' ')}" needs a subcommand (see --help)`);
  }
  if (help) return { kind: 'help', path };

  // 2. The command's own options and positionals.
  const declared = new Map<string, OptionSpec>();
  for (const o of [...UNIVERSAL, ...(spec.options ?? [])]) declared.set(o.flag, o);
  const opts: Record<string, OptionValue> = {};
  for (const [name, value] of Object.entries(leading)) {
    if (!declared.has(name)) throw usageError(`--${name} does not apply to "${path.join(' ')}"`);
    opts[name] = value;
  }
  const args: string[] = [];
  let optionsEnded = false;
  for (; i < argv.length; i++) {
    const tok = argv[i]!;
    if (!optionsEnded && tok === '--') {
      optionsEnded = true;
      continue;
    }
    if (optionsEnded || !tok.startsWith('-') || tok === '-') {
      args.push(tok);
      continue;
    }
    const { name, inline } = splitFlag(tok);
    const o = declared.get(name);
    if (!o) throw usageError(`unknown option ${tok} for "${path.join(' ')}" (see --help)`);
    if (o.flag === 'help') return { kind: 'help', path };
    if (o.flag === 'json') {
      if (inline !== undefined) throw usageError('--json takes no value');
      json = true;
      continue;
    }
    let value: string | true;
    if (o.value === undefined) {
      if (inline !== undefined) throw usageError(`--${name} takes no value`);
      value = true;
    } else {
      const v = inline ?? argv[++i];
      if (v === undefined) throw usageError(`--${name} needs a value (${o.value})`);
      value = v;
    }
    if (o.repeatable) {
      const prev = opts[o.flag];
      opts[o.flag] = [...(Array.isArray(prev) ? prev : []), String(value)];
    } else {
      if (opts[o.flag] !== undefined && !LEADING_WITH_VALUE.has(o.flag)) throw usageError(`--${name} given more than once`);
      opts[o.flag] = value;
    }
  }

  if (json && spec.json === false) throw usageError(`"${path.join(' ')}" has no --json output`);
  for (const o of spec.options ?? []) {
    if (o.required && opts[o.flag] === undefined) throw usageError(`missing required option --${o.flag}${o.value ? ` ${o.value}` : ''}`);
  }
  const argSpecs = spec.args ?? [];
  const required = argSpecs.filter((a) => a.required).length;
  if (args.length < required) throw usageError(`missing argument ${argSpecs[args.length]?.name ?? ''}`.trim());
  const variadic = argSpecs.some((a) => a.variadic);
  if (!variadic && args.length > argSpecs.length) throw usageError(`unexpected argument "${args[argSpecs.length]}"`);

  return { kind: 'command', spec, inv: { args, opts, json } };
}

function splitFlag(tok: string): { name: string; inline: string | undefined } {
  if (tok === '-h') return { name: 'help', inline: undefined };
  if (!tok.startsWith('--')) throw usageError(`unknown option ${tok}`);
  const eq = tok.indexOf('=');
  return eq === -1 ? { name: tok.slice(2), inline: undefined } : { name: tok.slice(2, eq), inline: tok.slice(eq + 1) };
}

export function findCommand(commands: readonly CommandSpec[], path: readonly string[]): CommandSpec | undefined {
  if (path.length === 0) return undefined;
  return commands.find((c) => c.path.length === path.length && c.path.every((w, k) => w === path[k]));
}

export function isGroup(commands: readonly CommandSpec[], groups: readonly GroupSpec[], path: readonly string[]): boolean {
  const startsWith = (p: readonly string[]) => p.length > path.length && path.every((w, k) => w === p[k]);
  return commands.some((c) => startsWith(c.path)) || groups.some((g) => g.path.length === path.length && g.path.every((w, k) => w === path[k]));
}
