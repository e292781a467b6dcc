// A readable fixed-width table for the `list` commands: a header row and one row per item, each cell
// escaped (no terminal control), or a single line saying there is nothing.

import { escapeControls } from '../../core/collector/output-tail.js';
import type { CommandResult } from '../../cli/types.js';
import { isRepository } from '../../core/contract/paths.js';
import { usageError } from '../../core/errors.js';
import { optionalStringOpt } from '../options.js';
import type { Invocation } from '../../cli/types.js';

export type Cell = string | number | boolean | null;

export function renderTable(headers: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const text = rows.map((r) => r.map((c) => escapeControls(c === null ? '-' : typeof c === 'boolean' ? (c ? 'yes' : 'no') : String(c))));
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(headers), ...text.map(line)].join('\n') + '\n';
}

/** An ISO 8601 UTC time for a stored millisecond timestamp, to the second. */
export const when = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z'));

/** The optional --repository filter. */
export function repositoryFilter(inv: Invocation): string | undefined {
  const v = optionalStringOpt(inv, 'repository');
  if (v !== undefined && !isRepository(v)) throw usageError('--repository must be OWNER/NAME');
  return v;
}

/** A list result: `{ <key>: rows }` for --json, the table (or "no <what>") for text. */
export function listResult<T>(key: string, what: string, rows: readonly T[], headers: readonly string[], cells: (r: T) => readonly Cell[]): CommandResult {
  return { data: { [key]: rows }, text: rows.length === 0 ? `no ${what}\n` : renderTable(headers, rows.map(cells)) };
}
