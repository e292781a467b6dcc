// A read-only reader of the project's SQLite stores in pure TypeScript, for the Stop hooks: keyed
// reads of rowid tables through their primary-key index, against one consistent committed snapshot
// (database file plus committed WAL frames). It writes nothing and creates nothing. Everything else
// (writers, the Hub, admin commands) keeps using better-sqlite3.
//
// The caller names the table's columns as it expects them; the table's CREATE statement in
// sqlite_schema must declare exactly those, or the read fails (a schema this reader was not written
// for is not guessed at).

import { u32be } from '../bytes.js';
import { decodeFields, decodeRecord, indexSeek, tableRecords, tableRow, type SqlValue } from './btree.js';
import { unreadable, withSnapshot, type PageSource } from './file.js';

export type { SqlValue };
export { MAX_WAL_BYTES } from './file.js';
export { decodeRecord } from './btree.js';

export type Row = Readonly<Record<string, SqlValue>>;

interface TableInfo {
  readonly root: number;
  readonly columns: readonly string[];
  /** The column that is the rowid (INTEGER PRIMARY KEY), if any. */
  readonly rowidAlias: number;
  /** Column lists of the automatic indexes, in their numbering order (sqlite_autoindex_T_1, _2, …). */
  readonly autoIndexes: readonly (readonly string[])[];
}

interface Token {
  readonly kind: 'word' | 'quoted' | 'string' | 'punct';
  readonly text: string;
}

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

function isIdent(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36 || c >= 128;
}

function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql.charCodeAt(i);
    if (isSpace(c)) i++;
    else if (c === 45 && sql.charCodeAt(i + 1) === 45) {
      const e = sql.indexOf('\n', i);
      i = e < 0 ? sql.length : e + 1;
    } else if (c === 47 && sql.charCodeAt(i + 1) === 42) {
      const e = sql.indexOf('*/', i + 2);
      if (e < 0) throw unreadable('unterminated comment in the schema');
      i = e + 2;
    } else if (c === 34 || c === 96 || c === 39 || c === 91) {
      const close = c === 91 ? ']' : sql[i]!;
      let j = i + 1;
      let text = '';
      for (;;) {
        const e = sql.indexOf(close, j);
        if (e < 0) throw unreadable('unterminated quote in the schema');
        text += sql.slice(j, e);
        // A doubled quote inside quotes is the quote itself (not for [brackets]).
        if (close !== ']' && sql[e + 1] === close) {
          text += close;
          j = e + 2;
          continue;
        }
        j = e + 1;
        break;
      }
      out.push({ kind: c === 39 ? 'string' : 'quoted', text });
      i = j;
    } else if (isIdent(c)) {
      let j = i + 1;
      while (j < sql.length && isIdent(sql.charCodeAt(j))) j++;
      out.push({ kind: 'word', text: sql.slice(i, j) });
      i = j;
    } else {
      out.push({ kind: 'punct', text: sql[i]! });
      i++;
    }
  }
  return out;
}

const isWord = (t: Token | undefined, w: string) => t !== undefined && t.kind === 'word' && t.text.toUpperCase() === w;

/** The names inside the parenthesized list starting at tokens[i] ("(a, b DESC, …)"). */
function nameList(tokens: readonly Token[], i: number): string[] {
  if (tokens[i]?.text !== '(') throw unreadable('unexpected constraint syntax in the schema');
  const names: string[] = [];
  let expectName = true;
  for (let j = i + 1; j < tokens.length; j++) {
    const t = tokens[j]!;
    if (t.kind === 'punct' && t.text === ')') return names;
    if (t.kind === 'punct' && t.text === ',') expectName = true;
    else if (expectName) {
      names.push(t.text);
      expectName = false;
    } else if (isWord(t, 'COLLATE') || isWord(t, 'DESC')) throw unreadable('an index key this reader does not order');
  }
  throw unreadable('unterminated constraint in the schema');
}

/**
 * CREATE TABLE statements parsed when the Stop hook's bundle was built (scripts/build-bundles.ts
 * defines this), taken from stores the project's own code created. A parse depends on the statement's
 * text alone, so a stored statement with the same text needs no parse at run time; any other text is
 * parsed as usual. Undefined outside that bundle.
 */
declare const AGENTSCM_PARSED_TABLES: readonly (readonly [string, Omit<TableInfo, 'root'>])[] | undefined;

const parsedTables = new Map<string, Omit<TableInfo, 'root'>>(typeof AGENTSCM_PARSED_TABLES === 'undefined' ? [] : AGENTSCM_PARSED_TABLES);

/** Parses a CREATE TABLE statement: column names, the rowid alias, the automatic indexes in order. */
export function parseCreateTable(sql: string): Omit<TableInfo, 'root'> {
  const hit = parsedTables.get(sql);
  if (hit) return hit;
  const parsed = parseCreate(sql);
  parsedTables.set(sql, parsed);
  return parsed;
}

function parseCreate(sql: string): Omit<TableInfo, 'root'> {
  const tokens = tokenize(sql);
  const open = tokens.findIndex((t) => t.kind === 'punct' && t.text === '(');
  if (!isWord(tokens[0], 'CREATE') || open < 0) throw unreadable('unexpected table definition');
  const parts: Token[][] = [[]];
  let depth = 0;
  let close = -1;
  for (let i = open + 1; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind === 'punct' && t.text === '(') depth++;
    if (t.kind === 'punct' && t.text === ')') {
      if (depth === 0) {
        close = i;
        break;
      }
      depth--;
    }
    if (depth === 0 && t.kind === 'punct' && t.text === ',') parts.push([]);
    else parts[parts.length - 1]!.push(t);
  }
  if (close < 0) throw unreadable('unterminated table definition');
  if (tokens.slice(close + 1).some((t) => isWord(t, 'WITHOUT'))) throw unreadable('a WITHOUT ROWID table');

  const columns: string[] = [];
  const types: string[] = [];
  const keys: string[][] = [];
  let rowidAlias = -1;
  for (const part of parts) {
    const head = part[0];
    if (!head) throw unreadable('empty table element');
    if (['CONSTRAINT', 'PRIMARY', 'UNIQUE', 'CHECK', 'FOREIGN'].includes(head.kind === 'word' ? head.text.toUpperCase() : '')) {
      for (let i = 0; i < part.length; i++) {
        if (isWord(part[i], 'PRIMARY') && isWord(part[i + 1], 'KEY')) keys.push(nameList(part, i + 2).map((n) => `pk:${n}`));
        else if (isWord(part[i], 'UNIQUE')) keys.push(nameList(part, i + 1));
      }
      continue;
    }
    const name = head.text;
    columns.push(name);
    let type = '';
    for (let i = 1; i < part.length && part[i]!.kind === 'word'; i++) {
      const w = part[i]!.text.toUpperCase();
      if (['CONSTRAINT', 'PRIMARY', 'NOT', 'NULL', 'UNIQUE', 'CHECK', 'DEFAULT', 'COLLATE', 'REFERENCES', 'GENERATED', 'AS'].includes(w)) break;
      type += (type ? ' ' : '') + w;
    }
    types.push(type);
    for (let i = 1; i < part.length; i++) {
      if (isWord(part[i], 'GENERATED') || (isWord(part[i], 'AS') && part[i + 1]?.text === '(')) throw unreadable('a generated column');
      if (isWord(part[i], 'COLLATE')) keys.push([`collate:${name}`]);
      if (isWord(part[i], 'PRIMARY') && isWord(part[i + 1], 'KEY')) {
        if (isWord(part[i + 2], 'DESC')) throw unreadable('a descending primary key');
        keys.push([`pk:${name}`]);
      } else if (isWord(part[i], 'UNIQUE')) keys.push([name]);
    }
  }
  const autoIndexes: string[][] = [];
  for (const k of keys) {
    if (k[0]!.startsWith('collate:')) {
      // A collation only matters on a key column: keys are compared as bytes (BINARY).
      const col = k[0]!.slice('collate:'.length);
      if (keys.some((o) => o.some((n) => n.replace(/^pk:/, '') === col))) throw unreadable('a key column with a collation');
      continue;
    }
    const isPk = k[0]!.startsWith('pk:');
    const cols = k.map((n) => n.replace(/^pk:/, ''));
    if (isPk && cols.length === 1 && types[columns.indexOf(cols[0]!)] === 'INTEGER') {
      rowidAlias = columns.indexOf(cols[0]!);
      continue; // the rowid itself: no index
    }
    for (const c of cols) if (!columns.includes(c)) throw unreadable('a key on an unknown column');
    // SQLite makes no second index for a constraint over the same columns as an earlier one.
    if (!autoIndexes.some((a) => a.length === cols.length && a.every((c, i) => c === cols[i]))) autoIndexes.push(cols);
  }
  return { columns, rowidAlias, autoIndexes };
}

/**
 * sqlite_schema's rows by `type name` (the first row of each, in rowid order, as a lookup by type and
 * name would find it), undecoded: a read needs a handful of the rows, so only their type and name are
 * decoded up front.
 */
type Schema = Map<string, Buffer>;

// The schemas of recently read files whose schema fits in page 1 (a leaf page): a hook reads each
// store twice (before and after its Hub call), and identical page bytes hold identical rows (page 1
// also carries the schema cookie, which every schema change increments).
const schemas: { page: Buffer; schema: Schema }[] = [];

function schemaOf(src: PageSource): Schema {
  const page = src.page(1);
  const hit = schemas.find((s) => s.page.equals(page));
  if (hit) return hit.schema;
  const schema: Schema = new Map();
  for (const [, rec] of tableRecords(src, 1)) {
    const [type, name] = decodeFields(rec, 2);
    if (typeof type !== 'string' || typeof name !== 'string') continue;
    const key = `${type} ${name}`;
    if (!schema.has(key)) schema.set(key, rec);
  }
  if (page[100] === 0x0d) {
    schemas.push({ page: Buffer.from(page), schema });
    if (schemas.length > 4) schemas.shift();
  }
  return schema;
}

/** One consistent snapshot of a database, for keyed reads. Valid only inside readSqlite's callback. */
export class SqliteSnapshot {
  private schema: Schema | undefined;
  private readonly tables = new Map<string, TableInfo>();

  constructor(private readonly src: PageSource) {
    // Text is decoded as UTF-8; a UTF-16 database would need its own decoding.
    if (src.page(1)[56] !== 0 || src.page(1)[57] !== 0 || src.page(1)[58] !== 0 || src.page(1)[59] !== 1) throw unreadable('text encoding is not UTF-8');
    const f = src.page(1)[44]!;
    const schemaFormat = (src.page(1)[47]! | (src.page(1)[46]! << 8) | (src.page(1)[45]! << 16) | (f << 24)) >>> 0;
    if (schemaFormat < 1 || schemaFormat > 4) throw unreadable('unknown schema format');
  }

  /** PRAGMA user_version: the store's schema version. */
  get userVersion(): number {
    return u32be(this.src.page(1), 60) | 0;
  }

  /** The decoded schema row of this type and name, if any. */
  private schemaRow(type: string, name: string): SqlValue[] | undefined {
    this.schema ??= schemaOf(this.src);
    const rec = this.schema.get(`${type} ${name}`);
    return rec && decodeRecord(rec);
  }

  private table(name: string, columns: readonly string[]): TableInfo {
    const hit = this.tables.get(name);
    if (hit) return hit;
    const row = this.schemaRow('table', name);
    if (!row) throw unreadable(`no table ${name}`);
    const [, , , root, sql] = row;
    if (typeof root !== 'number' || typeof sql !== 'string') throw unreadable('malformed schema row');
    const parsed = parseCreateTable(sql);
    if (parsed.columns.length !== columns.length || parsed.columns.some((c, i) => c !== columns[i])) throw unreadable(`table ${name} has other columns`);
    const info = { root, ...parsed };
    this.tables.set(name, info);
    return info;
  }

  /**
   * The row of table whose keyColumns equal key, found through the table's automatic (primary key or
   * UNIQUE) index over exactly those columns; undefined when there is none. columns must be the
   * table's declared columns, in order.
   */
  get(table: string, columns: readonly string[], keyColumns: readonly string[], key: readonly (string | number)[]): Row | undefined {
    const t = this.table(table, columns);
    const n = t.autoIndexes.findIndex((a) => a.length === keyColumns.length && a.every((c, i) => c === keyColumns[i]));
    if (n < 0) throw unreadable(`no index on ${table}(${keyColumns.join(', ')})`);
    const indexName = `sqlite_autoindex_${table}_${n + 1}`;
    const ix = this.schemaRow('index', indexName);
    if (!ix || ix[2] !== table || typeof ix[3] !== 'number') throw unreadable(`no index ${indexName}`);
    const entries = indexSeek(this.src, ix[3], key.map((k) => (typeof k === 'string' ? Buffer.from(k, 'utf8') : k)));
    if (entries.length > 1) throw unreadable(`index ${indexName} holds duplicate keys`);
    const entry = entries[0];
    if (!entry) return undefined;
    const rowid = entry[entry.length - 1];
    if (typeof rowid !== 'number' && typeof rowid !== 'bigint') throw unreadable('index entry without a rowid');
    const rec = tableRow(this.src, t.root, rowid);
    if (!rec) throw unreadable(`index ${indexName} names a missing row`);
    if (rec.length < t.columns.length) throw unreadable(`a row of ${table} is older than its table`);
    const out: Record<string, SqlValue> = {};
    t.columns.forEach((c, i) => (out[c] = i === t.rowidAlias ? rowid : rec[i]!));
    // The row must be the one asked for: an index that is not what the schema says yields no row.
    keyColumns.forEach((c, i) => {
      if (out[c] !== key[i]) throw unreadable(`index ${indexName} disagrees with its table`);
    });
    return out;
  }
}

/** Runs read against one consistent committed snapshot of the database file (see file.ts). */
export function readSqlite<T>(file: string, read: (db: SqliteSnapshot) => T): T {
  return withSnapshot(file, (src: PageSource) => read(new SqliteSnapshot(src)));
}
