// --help text and man pages, both generated from the command table so that they cannot drift apart.

import { EXIT_CODES, EXIT_CODE_MEANINGS } from '../core/errors.js';
import type { CommandSpec, GroupSpec } from './types.js';

export function usageLine(program: string, c: CommandSpec): string {
  const parts = [program, ...c.path];
  for (const a of c.args ?? []) parts.push(a.required ? `${a.name}${a.variadic ? '...' : ''}` : `[${a.name}]${a.variadic ? '...' : ''}`);
  for (const o of c.options ?? []) {
    if (!o.required) continue;
    parts.push(o.value ? `--${o.flag} ${o.value}` : `--${o.flag}`);
  }
  if ((c.options ?? []).some((o) => !o.required)) parts.push('[options]');
  if (c.json !== false) parts.push('[--json]');
  return parts.join(' ');
}

function children(commands: readonly CommandSpec[], groups: readonly GroupSpec[], path: readonly string[]): { word: string; summary: string }[] {
  const out = new Map<string, string>();
  const under = (p: readonly string[]) => p.length > path.length && path.every((w, k) => w === p[k]);
  for (const g of groups) if (g.path.length === path.length + 1 && under(g.path)) out.set(g.path[path.length]!, g.summary);
  for (const c of commands) {
    if (!under(c.path)) continue;
    const word = c.path[path.length]!;
    if (!out.has(word)) out.set(word, c.path.length === path.length + 1 ? c.summary : '');
  }
  return [...out.entries()].map(([word, summary]) => ({ word, summary }));
}

function pad(rows: [string, string][]): string {
  const w = Math.min(34, Math.max(...rows.map((r) => r[0].length), 0));
  return rows.map(([a, b]) => (a.length > w ? `  ${a}\n  ${' '.repeat(w)}  ${b}` : `  ${a.padEnd(w)}  ${b}`)).join('\n');
}

/** (status, meaning) rows for --help and the man page's EXIT STATUS. */
export type ExitStatusRows = readonly (readonly [number | string, string])[];

export function exitCodeTable(): [number, string][] {
  return (Object.keys(EXIT_CODES) as (keyof typeof EXIT_CODES)[]).map((k) => [EXIT_CODES[k], `${k}: ${EXIT_CODE_MEANINGS[k]}`]);
}

export function renderHelp(
  program: string,
  commands: readonly CommandSpec[],
  groups: readonly GroupSpec[],
  path: readonly string[],
  version: string,
  exitStatus: ExitStatusRows = exitCodeTable(),
): string {
  const cmd = commands.find((c) => c.path.length === path.length && c.path.every((w, k) => w === path[k]));
  if (cmd) {
    const lines = [`usage: ${usageLine(program, cmd)}`, '', cmd.summary];
    if (cmd.details) lines.push('', cmd.details);
    if (cmd.args?.length) lines.push('', 'arguments:', pad(cmd.args.map((a) => [a.name, a.help])));
    const opts: [string, string][] = (cmd.options ?? []).map((o) => [
      `--${o.flag}${o.value ? ` ${o.value}` : ''}`,
      `${o.help}${o.required ? ' (required)' : ''}${o.defaultText ? ` (default: ${o.defaultText})` : ''}`,
    ]);
    if (cmd.json !== false) opts.push(['--json', cmd.jsonHelp ?? 'print one JSON document on stdout']);
    opts.push(['-h, --help', 'show this help']);
    lines.push('', 'options:', pad(opts));
    return lines.join('\n') + '\n';
  }
  const group = groups.find((g) => g.path.length === path.length && g.path.every((w, k) => w === path[k]));
  const kids = children(commands, groups, path);
  const lines: string[] = [];
  if (path.length === 0) {
    const leading = program === 'agentscm' ? '[--data-dir DIR] ' : '';
    lines.push(`${program} ${version}`, '', `usage: ${program} ${leading}<command> [options] [--json]`, `       ${program} --version | --help`);
  } else {
    lines.push(`usage: ${program} ${path.join(' ')} <command> [options]`);
    if (group) lines.push('', group.summary);
  }
  lines.push('', 'commands:', kids.length ? pad(kids.map((k) => [k.word, k.summary])) : '  (none yet)');
  if (path.length === 0) {
    lines.push('', 'exit codes:', pad(exitStatus.map(([n, m]) => [String(n), m])));
    lines.push('', `Run "${program} <command> --help" for a command's options; see also man ${program}.`);
  }
  return lines.join('\n') + '\n';
}

// ---- man pages (roff) ------------------------------------------------------------------------------

function roff(s: string): string {
  return s
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .split('\n')
    .map((l) => (l === '' ? '.PP' : l.startsWith('.') || l.startsWith("'") ? `\\&${l}` : l))
    .join('\n');
}

export interface ManPageInput {
  program: string;
  version: string;
  /** The page's date field. Fixed per release (never today's date) so the output is reproducible. */
  date: string;
  summary: string;
  description: string;
  commands: readonly CommandSpec[];
  extraSections?: readonly { title: string; body: string }[];
  /** EXIT STATUS rows (status, meaning); default: the exit-code table of src/core/errors.ts. */
  exitStatus?: ExitStatusRows;
}

export function renderManPage(m: ManPageInput): string {
  const out: string[] = [];
  out.push(`.TH ${m.program.toUpperCase()} 1 "${m.date}" "${m.program} ${m.version}" "User Commands"`);
  out.push('.SH NAME', `${m.program} \\- ${roff(m.summary)}`);
  out.push('.SH SYNOPSIS');
  out.push('.PP', `.B ${m.program} \\-\\-version | \\-\\-help`);
  for (const c of m.commands) out.push('.PP', `.B ${roff(usageLine(m.program, c))}`);
  out.push('.SH DESCRIPTION', roff(m.description));
  if (m.commands.length > 0) out.push('.SH COMMANDS');
  for (const c of m.commands) {
    out.push(`.SS "${roff([m.program, ...c.path].join(' '))}"`, roff(c.summary));
    if (c.details) out.push('.PP', roff(c.details));
    for (const a of c.args ?? []) out.push('.TP', `.I ${roff(a.name)}`, roff(a.help));
    for (const o of c.options ?? []) {
      out.push('.TP', o.value ? `.BI \\-\\-${roff(o.flag)} " ${roff(o.value)}"` : `.B \\-\\-${roff(o.flag)}`);
      out.push(roff(`${o.help}${o.required ? ' (required)' : ''}${o.defaultText ? ` (default: ${o.defaultText})` : ''}`));
    }
    if (c.json !== false) out.push('.TP', '.B \\-\\-json', c.jsonHelp ? roff(`${c.jsonHelp[0]!.toUpperCase()}${c.jsonHelp.slice(1)}.`) : 'Print one JSON document on stdout.');
  }
  out.push('.SH EXIT STATUS');
  for (const [n, meaning] of m.exitStatus ?? exitCodeTable()) out.push('.TP', `.B ${n}`, roff(meaning));
  for (const s of m.extraSections ?? []) out.push(`.SH ${s.title.toUpperCase()}`, roff(s.body));
  return out.join('\n') + '\n';
}
