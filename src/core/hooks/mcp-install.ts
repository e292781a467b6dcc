// Registering the Hub's workspace MCP endpoint in a project's host config, merging with what is there:
//   Claude Code  <project>/.mcp.json          mcpServers.NAME = {"type":"http","url",
//                                              "headers":{"Authorization":"Bearer ${VAR}"}}
//                                              (Claude Code expands ${VAR} from its environment)
//   Codex        <project>/.codex/config.toml [mcp_servers.NAME] url, bearer_token_env_var = "VAR"
// Neither file holds the token: the host reads it from the environment variable VAR when it connects.
// Re-installing replaces the entry of the same NAME in place; the same arguments change nothing.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { outputJson, parseStrictJson, type JsonValue } from '../canonical/json.js';
import { badInput } from '../errors.js';
import { lstatOrUndefined, replaceDurably } from '../fs/safe.js';
import { indentedJson } from './install.js';
import type { StopHost } from './stop-guard.js';

const CONFIG_MAX_BYTES = 1024 * 1024;
export const MCP_SERVER_NAME_RE = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const ENV_VAR_RE = /^[A-Z_][A-Z0-9_]{0,63}$/;

export interface McpEntry {
  /** The server's name in the host config. */
  readonly name: string;
  /** The endpoint URL with its repository and profile query. */
  readonly url: string;
  /** The environment variable the host reads the workspace token from. */
  readonly tokenEnv: string;
}

/** What an installer does: add or replace the server named `name`, or (`remove`) drop it. */
export type McpChange = McpEntry | { readonly name: string; readonly remove: true };

export function mcpConfigFile(host: StopHost, project: string): string {
  return host === 'claude-code' ? path.join(project, '.mcp.json') : path.join(project, '.codex', 'config.toml');
}

export function mcpEndpointUrl(endpoint: string, repository: string, profile: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/hub/workspace/mcp?repository=${encodeURIComponent(repository)}&profile=${encodeURIComponent(profile)}`;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Merges e into .mcp.json's mcpServers, or (`remove`) drops the server named e.name; everything else stays. */
export function mergeClaudeMcp(existing: string | undefined, e: McpChange): { text: string; changed: boolean } {
  let doc: Obj = {};
  if (existing !== undefined && existing.trim() !== '') {
    let v: JsonValue;
    try {
      v = parseStrictJson(existing, { maxBytes: CONFIG_MAX_BYTES, what: '.mcp.json' });
    } catch {
      throw badInput('the existing .mcp.json is not one JSON document; fix or move it first', 'BAD_MCP_CONFIG');
    }
    if (!isObj(v)) throw badInput('the existing .mcp.json is not a JSON object', 'BAD_MCP_CONFIG');
    doc = v;
  }
  if (doc.mcpServers !== undefined && !isObj(doc.mcpServers)) throw badInput('"mcpServers" in the existing .mcp.json is not an object', 'BAD_MCP_CONFIG');
  const servers: Obj = isObj(doc.mcpServers) ? doc.mcpServers : {};
  if ('remove' in e) {
    if (existing === undefined || !Object.hasOwn(servers, e.name)) return { text: existing ?? '', changed: false };
    const { [e.name]: _gone, ...rest } = servers;
    return { text: indentedJson({ ...doc, mcpServers: rest }), changed: true };
  }
  const entry = { type: 'http', url: e.url, headers: { Authorization: `Bearer \${${e.tokenEnv}}` } };
  const out = { ...doc, mcpServers: { ...servers, [e.name]: entry } };
  if (existing !== undefined && outputJson(doc) === outputJson(out as JsonValue)) return { text: existing, changed: false };
  return { text: indentedJson(out), changed: true };
}

/** One key of a TOML dotted key: bare, a basic string without escapes, or a literal string. */
const HEADER_KEY = /\s*(?:([A-Za-z0-9_-]+)|"([^"\\]*)"|'([^']*)')\s*/y;

/**
 * The keys of a TOML table header line (`[a.b."c d"]`, `[[a.b]]`), unquoted; undefined for any other
 * line, such as `[1, 2],`. A header whose keys use escapes is not read as one (none of the tables looked
 * for here needs them). Whether a line is inside a multi-line array or string is tableHeaders' to tell.
 */
export function tableHeader(line: string): string[] | undefined {
  const m = /^\s*(\[\[?)(.*?)(\]\]?)\s*(?:#.*)?$/.exec(line);
  if (m === null || m[1]!.length !== m[3]!.length) return undefined;
  const inner = m[2]!;
  const keys: string[] = [];
  HEADER_KEY.lastIndex = 0;
  for (;;) {
    const k = HEADER_KEY.exec(inner);
    if (k === null) return undefined;
    keys.push(k[1] ?? k[2] ?? k[3]!);
    if (HEADER_KEY.lastIndex === inner.length) return keys;
    if (inner[HEADER_KEY.lastIndex] !== '.') return undefined;
    HEADER_KEY.lastIndex++;
  }
}

/** The multi-line string (basic """ or literal ''') a line ends inside of, if any. */
type OpenString = '"""' | "'''" | undefined;

/**
 * Reads one line that starts inside the multi-line string `open` (or outside any): how far it opens (+)
 * or closes (-) arrays, counting brackets outside strings and comments, and the multi-line string it
 * ends inside of.
 */
function scanLine(line: string, open: OpenString): { depth: number; open: OpenString } {
  // The index just past the closing `q` from `from` on, or -1 when the line ends inside the string. In a
  // basic string \ escapes the next character (\" does not close it); one or two quotes right before
  // the closing three are the string's own (`"""a""""`).
  const close = (q: '"""' | "'''", from: number): number => {
    for (let i = from; i < line.length; i++) {
      if (q === '"""' && line[i] === '\\') i++;
      else if (line.startsWith(q, i)) {
        let end = i + 3;
        for (let extra = 0; extra < 2 && line[end] === q[0]; extra++) end++;
        return end;
      }
    }
    return -1;
  };
  let d = 0;
  let i = 0;
  if (open !== undefined) {
    i = close(open, 0);
    if (i < 0) return { depth: 0, open };
  }
  for (; i < line.length; i++) {
    const c = line[i];
    if (c === '#') break;
    if (line.startsWith('"""', i) || line.startsWith("'''", i)) {
      const q = c === '"' ? '"""' : "'''";
      const end = close(q, i + 3);
      if (end < 0) return { depth: d, open: q };
      i = end - 1;
    } else if (c === '"' || c === "'") {
      // To the closing quote (a basic string's \" does not close it).
      for (i++; i < line.length && line[i] !== c; i++) if (c === '"' && line[i] === '\\') i++;
    } else if (c === '[') d++;
    else if (c === ']') d--;
  }
  return { depth: d, open: undefined };
}

/**
 * Each line's table header (tableHeader), undefined for the lines inside a multi-line array, where a
 * line such as `  [2]` is an element, not a header; and whether the line starts inside a multi-line
 * string (""" or '''), whose lines are text: neither headers nor brackets nor keys.
 */
function scanLines(lines: readonly string[]): { headers: (string[] | undefined)[]; inString: boolean[] } {
  let depth = 0;
  let open: OpenString;
  const headers: (string[] | undefined)[] = [];
  const inString: boolean[] = [];
  for (const l of lines) {
    inString.push(open !== undefined);
    const header = depth > 0 || open !== undefined ? undefined : tableHeader(l);
    if (header === undefined) {
      const r = scanLine(l, open);
      depth = Math.max(0, depth + r.depth);
      open = r.open;
    }
    headers.push(header);
  }
  return { headers, inString };
}

/**
 * The table header of each line of a config (tableHeader), undefined for the lines inside a multi-line
 * array or a multi-line string.
 */
export function tableHeaders(lines: readonly string[]): (string[] | undefined)[] {
  return scanLines(lines).headers;
}

/**
 * Replaces the [mcp_servers.NAME] table (and its sub-tables) of a Codex config.toml, or appends it; every
 * other line stays as it was, byte for byte with its line ending, the comments right above the next table
 * among them (they are that table's). The lines written anew end as the file's first line does (CRLF or LF).
 * A config that defines the server, or all of mcp_servers, another way (an inline table, dotted keys) is
 * refused: a [mcp_servers.NAME] table beside it would declare the key twice, which TOML forbids. The
 * values are TOML basic strings (JSON string syntax is valid TOML for them).
 */
export function mergeCodexMcp(existing: string | undefined, e: McpChange): { text: string; changed: boolean } {
  // Removing: the table goes with no block in its place (and the blank line that set it off).
  const block = 'remove' in e ? [] : [`[mcp_servers.${e.name}]`, `url = ${JSON.stringify(e.url)}`, `bearer_token_env_var = ${JSON.stringify(e.tokenEnv)}`];
  const text = existing ?? '';
  if (Buffer.byteLength(text) > CONFIG_MAX_BYTES) throw badInput('the existing config.toml is over 1 MiB', 'BAD_MCP_CONFIG');
  // Each line as it was, with its own line ending (LF or CRLF; the last line may have none), and its text
  // without that ending for reading. Lines written anew end as the file's first line does.
  const raw = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const lines = raw.map((l) => l.replace(/\r?\n$/, ''));
  const eol = /^[^\n]*\r\n/.test(text) ? '\r\n' : '\n';
  const joined = (out: readonly string[]): string => out.map((l) => (l.endsWith('\n') ? l : l + eol)).join('');
  const { headers, inString } = scanLines(lines);
  // [mcp_servers.NAME] and its sub-tables ([mcp_servers.NAME.env], …).
  const ours = (i: number): boolean => {
    const keys = headers[i];
    return keys !== undefined && keys.length >= 2 && keys[0] === 'mcp_servers' && keys[1] === e.name;
  };
  refuseOtherDefinitions(lines, headers, inString, e.name);
  // A line that ends a multi-line string (`# x'''`) is the string's, not a comment.
  const commentOrBlank = (i: number): boolean => !inString[i] && /^\s*(#.*)?$/.test(lines[i]!);
  const out: string[] = [];
  let placed = false;
  for (let i = 0; i < lines.length; i++) {
    if (!ours(i)) {
      out.push(raw[i]!);
      continue;
    }
    // Skip this table up to the next header that is not ours, but for the comments right above it.
    let j = i + 1;
    while (j < lines.length && !(headers[j] !== undefined && !ours(j))) j++;
    let k = j;
    while (k > i + 1 && commentOrBlank(k - 1)) k--;
    const kept = raw.slice(k, j);
    while (kept.length > 0 && kept[0]!.trim() === '') kept.shift();
    if (!placed) {
      out.push(...block);
      placed = true;
    }
    if (block.length === 0) {
      // Removed: what follows keeps one blank line from what came before, and the file ends with none.
      while (out.length > 0 && out[out.length - 1]!.trim() === '') out.pop();
      if (out.length > 0 && j < lines.length) out.push('');
      out.push(...kept);
    } else if (j < lines.length || kept.length > 0) out.push('', ...kept);
    i = j - 1;
  }
  if (block.length === 0) {
    if (!placed) return { text, changed: false };
    while (out.length > 0 && out[out.length - 1]!.trim() === '') out.pop();
    const next = joined(out);
    return next === text ? { text, changed: false } : { text: next, changed: true };
  }
  if (!placed) {
    if (out.length > 0 && out[out.length - 1]!.trim() !== '') out.push('');
    out.push(...block);
  }
  const next = joined(out);
  return next === text ? { text, changed: false } : { text: next, changed: true };
}

/**
 * Refuses a config.toml that defines mcp_servers.NAME other than by its own table: `NAME = …` or
 * `NAME.key = …` in an [mcp_servers] table, `mcp_servers.NAME… = …` or `mcp_servers = …` at the top
 * level (before any table header), each key bare, "basic" or 'literal'. The lines inside a multi-line
 * string are its text, not definitions.
 */
function refuseOtherDefinitions(lines: readonly string[], headers: readonly (string[] | undefined)[], inString: readonly boolean[], name: string): void {
  // A key spelled bare, as a basic string without escapes or as a literal string. NAME is of
  // MCP_SERVER_NAME_RE (a-z 0-9 _ -): nothing in it or in mcp_servers is special in a RegExp.
  const spelled = (k: string): string => `(?:${k}|"${k}"|'${k}')`;
  const key = spelled(name);
  const inTable = new RegExp(`^\\s*${key}\\s*[.=]`);
  const topLevel = new RegExp(`^\\s*${spelled('mcp_servers')}\\s*(?:=|\\.\\s*${key}\\s*[.=])`);
  let table = '';
  for (const [i, l] of lines.entries()) {
    const header = headers[i];
    if (header !== undefined) {
      table = header.join('.');
      continue;
    }
    if (inString[i]) continue;
    if ((table === '' && topLevel.test(l)) || (table === 'mcp_servers' && inTable.test(l))) {
      throw badInput(`the existing config.toml defines mcp_servers.${name} other than as a [mcp_servers.${name}] table; remove that definition first`, 'BAD_MCP_CONFIG');
    }
  }
}

/** A TOML parser: the document's tables as objects; throws on a text that is not TOML. */
export type TomlParse = (text: string) => Record<string, unknown>;

/**
 * mergeCodexMcp (which edits lines) checked with a real TOML parser: the existing text must be TOML, and
 * the merged text must be TOML that holds the same values but mcp_servers.NAME, which is now exactly
 * {url, bearer_token_env_var} (or gone, and with it an mcp_servers left empty that the merged text no
 * longer declares). Anything else is BAD_MCP_CONFIG, and nothing is to be written.
 */
export function mergeCodexMcpChecked(parse: TomlParse, existing: string | undefined, e: McpChange): { text: string; changed: boolean } {
  const before = existing ?? '';
  if (Buffer.byteLength(before) > CONFIG_MAX_BYTES) throw badInput('the existing config.toml is over 1 MiB', 'BAD_MCP_CONFIG');
  let old: Record<string, unknown>;
  try {
    old = parse(before);
  } catch (err) {
    // Only the parser's first line and the position: its excerpt of the file could show a secret.
    const first = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.replace(/^Invalid TOML document: /, '');
    const at = err instanceof Error && 'line' in err && 'column' in err ? ` (line ${String(err.line)}, column ${String(err.column)})` : '';
    throw badInput(`the existing config.toml is not valid TOML: ${first}${at}; fix or move it first`, 'BAD_MCP_CONFIG');
  }
  const servers = old.mcp_servers;
  if (servers !== undefined && (typeof servers !== 'object' || servers === null || Array.isArray(servers) || servers instanceof Date)) {
    throw badInput('mcp_servers in the existing config.toml is not a table', 'BAD_MCP_CONFIG');
  }
  const merged = mergeCodexMcp(existing, e);
  // The parser's tables have no prototype, so the expected document is built of such objects too.
  const table = (o: object): Record<string, unknown> => Object.assign(Object.create(null) as Record<string, unknown>, o);
  const wantServers = table(servers ?? {});
  delete wantServers[e.name];
  if (!('remove' in e)) wantServers[e.name] = table({ url: e.url, bearer_token_env_var: e.tokenEnv });
  const want = table(old);
  want.mcp_servers = wantServers;
  let got: Record<string, unknown> | undefined;
  try {
    got = parse(merged.text);
  } catch {
    got = undefined;
  }
  if (got !== undefined && !Object.hasOwn(got, 'mcp_servers') && Object.keys(wantServers).length === 0) delete want.mcp_servers;
  if (got === undefined || !isDeepStrictEqual(got, want)) {
    throw badInput(`config.toml cannot be changed line by line to ${'remove' in e ? 'remove' : 'set'} mcp_servers.${e.name} and nothing else; change it by hand`, 'BAD_MCP_CONFIG');
  }
  return merged;
}

/**
 * Reads, merges and writes the host's MCP config (or removes the server e names: `{name, remove: true}`);
 * refuses a symlinked config or directory. Removing from a config that is not there changes nothing. A
 * Codex config is checked with a TOML parser (mergeCodexMcpChecked) before anything is written.
 */
export async function installMcpServer(host: StopHost, project: string, e: McpChange): Promise<{ file: string; changed: boolean }> {
  const file = mcpConfigFile(host, project);
  const dir = lstatOrUndefined(path.dirname(file));
  if (dir && (dir.isSymbolicLink() || !dir.isDirectory())) throw badInput(`${path.dirname(file)} is not a directory of the project; refusing to write into it`, 'BAD_MCP_CONFIG');
  const st = lstatOrUndefined(file);
  if (st && !st.isFile()) throw badInput(`${file} is not a regular file; refusing to change it`, 'BAD_MCP_CONFIG');
  const existing = st ? fs.readFileSync(file, 'utf8') : undefined;
  if (existing === undefined && 'remove' in e) return { file, changed: false };
  let merged: { text: string; changed: boolean };
  if (host === 'claude-code') merged = mergeClaudeMcp(existing, e);
  else {
    // Only this command parses TOML: the parser is loaded when it runs. Integers past 2^53 stay exact.
    const { parse } = await import('smol-toml');
    merged = mergeCodexMcpChecked((t) => parse(t, { integersAsBigInt: 'asNeeded' }), existing, e);
  }
  const { text, changed } = merged;
  if (changed) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    replaceDurably(file, text, st ? st.mode & 0o777 : 0o644);
  }
  return { file, changed };
}
