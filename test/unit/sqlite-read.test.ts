// The pure read-only SQLite reader (src/core/sqlite-read) against real files written by better-sqlite3:
// every value kind, overflow pages, many pages, the rowid alias, and the WAL states a reader meets
// (committed frames, an uncommitted spilled tail, a restarted WAL with new salts, an empty or missing
// WAL, damaged frames). The reference is what SQLite itself reads. The reader must never write.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { readCurrentSubjectUnchecked } from '../../src/core/authority/read-only.js';
import { Authority, initAuthority } from '../../src/core/authority/store.js';
import { decodeRequirement } from '../../src/core/contract/requirement.js';
import { AgentscmError } from '../../src/core/errors.js';
import { checkpoint } from '../../src/core/native/checkpoint.js';
import { readWorkspaceState } from '../../src/core/native/workspace-state.js';
import { openWorkspacesForWrite } from '../../src/core/native/workspace.js';
import { parseCreateTable, readSqlite, type Row, type SqlValue } from '../../src/core/sqlite-read/index.js';
import { REPO_ROOT } from '../support/cli.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-sqlite-read-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const d = path.join(tmp, `d${++n}`);
  fs.mkdirSync(d);
  return path.join(d, 'db.sqlite');
};

const T_SQL = `CREATE TABLE t (
  k TEXT NOT NULL,
  n INTEGER NOT NULL,
  v ANY, -- any value kind
  PRIMARY KEY (k, n)
)`;
const T_COLUMNS = ['k', 'n', 'v'];
const unreadable = (e: unknown) => e instanceof AgentscmError && e.code === 'STORE_UNREADABLE';

/** A writer as the stores open one: WAL, no automatic checkpoint (so rows stay in the WAL). */
function writer(file: string, pageSize?: number): Database.Database {
  const db = new Database(file);
  if (pageSize) db.pragma(`page_size = ${pageSize}`);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  return db;
}

/** better-sqlite3's values, with integers as numbers when exact (the reader's convention). */
function normalize(row: Record<string, unknown> | undefined): Record<string, SqlValue> | undefined {
  if (!row) return undefined;
  const out: Record<string, SqlValue> = {};
  for (const [k, v] of Object.entries(row)) {
    out[k] = typeof v === 'bigint' && v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : (v as SqlValue);
  }
  return out;
}

function viaSqlite(file: string, k: string, n: number): Record<string, SqlValue> | undefined {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return normalize(db.prepare('SELECT k, n, v FROM t WHERE k = ? AND n = ?').safeIntegers(true).get(k, n) as Record<string, unknown> | undefined);
  } finally {
    db.close();
  }
}

function viaReader(file: string, k: string, n: number): Row | undefined {
  return readSqlite(file, (db) => db.get('t', T_COLUMNS, ['k', 'n'], [k, n]));
}

/** Reads through a copy of the database and its WAL (no -shm): SQLite's own recovery of the files. */
function viaCopy(file: string, k: string, n: number): Record<string, SqlValue> | undefined {
  const dir = fs.mkdtempSync(path.join(tmp, 'copy-'));
  const copy = path.join(dir, 'db.sqlite');
  fs.copyFileSync(file, copy);
  if (fs.existsSync(`${file}-wal`)) fs.copyFileSync(`${file}-wal`, `${copy}-wal`);
  return viaSqlite(copy, k, n);
}

/** Every file of the database's directory with its bytes and times: the reader must change none. */
function snapshotDir(file: string): string {
  const dir = path.dirname(file);
  return fs
    .readdirSync(dir)
    .sort()
    .filter((f) => fs.statSync(path.join(dir, f)).isFile())
    .map((f) => {
      const st = fs.statSync(path.join(dir, f), { bigint: true });
      return `${f} ${st.size} ${st.mtimeNs} ${fs.readFileSync(path.join(dir, f)).toString('base64')}`;
    })
    .join('\n');
}

const VALUES: SqlValue[] = [
  null, 0, 1, -1, 127, -128, 128, 32767, -32768, 32768, 8388607, -8388608, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 47 - 1, -(2 ** 47),
  Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2n ** 62n, -(2n ** 63n), 2n ** 63n - 1n, 0.5, -1e300, Math.PI, 1e-310,
  '', 'plain', 'ünïcødé ✓ 𝄞', 'x'.repeat(5000), Buffer.alloc(0), Buffer.from([0, 1, 2, 255]), Buffer.alloc(20000, 7),
];

function fill(db: Database.Database): void {
  db.exec(T_SQL);
  const ins = db.prepare('INSERT INTO t (k, n, v) VALUES (?, ?, ?)').safeIntegers(true);
  db.transaction(() => {
    VALUES.forEach((v, i) => ins.run(`value-${i}`, i, v));
    // Enough rows for interior table and index pages (several levels with 1 KiB pages).
    for (let i = 0; i < 3000; i++) ins.run(`row-${String(i).padStart(5, '0')}-${'k'.repeat(i % 40)}`, i % 7, `payload ${i} ${'p'.repeat(i % 300)}`);
    // Keys that share a first field and differ in the second.
    for (let i = -5; i < 5; i++) ins.run('same', i, i * 10);
  })();
}

function checkAll(file: string, reference: (k: string, n: number) => Record<string, SqlValue> | undefined): void {
  const keys: [string, number][] = [
    ...VALUES.map((_, i): [string, number] => [`value-${i}`, i]),
    ...[0, 1, 499, 1500, 2999].map((i): [string, number] => [`row-${String(i).padStart(5, '0')}-${'k'.repeat(i % 40)}`, i % 7]),
    ...[-5, 0, 4].map((i): [string, number] => ['same', i]),
    // Absent keys: before the first, between, after the last, a right first field with a wrong second.
    ['', 0], ['row-00001', 1], ['zzz', 0], ['same', 5], ['value-1', 2],
  ];
  for (const [k, nn] of keys) assert.deepEqual(viaReader(file, k, nn), reference(k, nn), `${k}/${nn}`);
}

test('every value kind, overflow pages and a multi-level B-tree read as SQLite reads them (database file only)', () => {
  const file = fresh();
  const db = writer(file, 1024);
  fill(db);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close(); // the last connection checkpoints and removes the WAL
  assert.equal(fs.existsSync(`${file}-wal`), false);
  const before = snapshotDir(file);
  checkAll(file, (k, nn) => viaCopy(file, k, nn));
  assert.equal(snapshotDir(file), before, 'the reader wrote or created nothing (no -wal, no -shm)');
  assert.equal(readSqlite(file, (r) => r.userVersion), 0);
});

test('committed transactions that live only in the WAL are read; a WAL truncated to zero bytes leaves the database file', () => {
  const file = fresh();
  const db = writer(file);
  fill(db);
  assert.ok(fs.statSync(`${file}-wal`).size > 0);
  db.prepare('UPDATE t SET v = ? WHERE k = ?').run('updated in the WAL', 'value-3');
  db.pragma('user_version = 7');
  const before = snapshotDir(file);
  checkAll(file, (k, nn) => viaCopy(file, k, nn));
  assert.equal(viaReader(file, 'value-3', 3)?.v, 'updated in the WAL');
  assert.equal(readSqlite(file, (r) => r.userVersion), 7);
  // Without WebAssembly (--jitless) the checksums run in JavaScript: same answer.
  const reader = path.join(REPO_ROOT, 'dist', 'src', 'core', 'sqlite-read', 'index.js');
  const js = spawnSync(process.execPath, ['--jitless', '--input-type=module', '-e', `
    const { readSqlite } = await import(${JSON.stringify(reader)});
    process.stdout.write(String(typeof WebAssembly) + ' ' + readSqlite(${JSON.stringify(file)}, (r) => r.get('t', ['k', 'n', 'v'], ['k', 'n'], ['value-3', 3]).v));
  `], { encoding: 'utf8' });
  assert.equal(js.stdout, 'undefined updated in the WAL', js.stderr);
  assert.equal(snapshotDir(file), before);

  db.pragma('wal_checkpoint(TRUNCATE)');
  assert.equal(fs.statSync(`${file}-wal`).size, 0);
  checkAll(file, (k, nn) => viaCopy(file, k, nn));
  db.close();
});

test('an uncommitted transaction spilled into the WAL is not seen; its leftovers after a rollback are ignored', () => {
  const file = fresh();
  const db = writer(file);
  fill(db);
  const committed = fs.statSync(`${file}-wal`).size;
  db.pragma('cache_size = 10');
  db.exec('BEGIN');
  // Rewrites every table page: the spilled frames hold new versions of pages the reads visit.
  db.prepare('UPDATE t SET v = ?').run('uncommitted update');
  assert.ok(fs.statSync(`${file}-wal`).size > committed, 'the open transaction spilled frames into the WAL');
  assert.equal(viaReader(file, 'value-3', 3)?.v, VALUES[3]);
  checkAll(file, (k, nn) => viaCopy(file, k, nn));
  const ins = db.prepare('INSERT INTO t (k, n, v) VALUES (?, ?, ?)');
  for (let i = 0; i < 2000; i++) ins.run(`uncommitted-${i}`, 0, 'u'.repeat(500));
  assert.equal(viaReader(file, 'uncommitted-5', 0), undefined);
  checkAll(file, (k, nn) => viaCopy(file, k, nn));
  db.exec('ROLLBACK');
  // A small commit overwrites the start of the abandoned frames; the rest stay behind it.
  db.prepare('UPDATE t SET v = ? WHERE k = ?').run('after rollback', 'value-4');
  assert.equal(viaReader(file, 'value-4', 4)?.v, 'after rollback');
  assert.equal(viaReader(file, 'uncommitted-5', 0), undefined);
  checkAll(file, (k, nn) => viaCopy(file, k, nn));
  db.close();
});

test('a WAL restarted after a checkpoint (new salts, older frames behind) reads the new generation only', () => {
  const file = fresh();
  const db = writer(file);
  fill(db);
  db.prepare('UPDATE t SET v = ? WHERE k = ?').run('generation 1', 'value-5');
  const salts = () => fs.readFileSync(`${file}-wal`).subarray(16, 24).toString('hex');
  const first = salts();
  db.pragma('wal_checkpoint(RESTART)');
  db.prepare('UPDATE t SET v = ? WHERE k = ?').run('generation 2', 'value-6');
  assert.notEqual(salts(), first, 'the WAL restarted with new salts');
  assert.equal(viaReader(file, 'value-5', 5)?.v, 'generation 1');
  assert.equal(viaReader(file, 'value-6', 6)?.v, 'generation 2');
  checkAll(file, (k, nn) => viaCopy(file, k, nn));
  db.close();
});

test('a damaged last commit is ignored as SQLite recovery ignores it; damage before a commit is refused', () => {
  const file = fresh();
  const db = writer(file);
  db.exec(T_SQL);
  db.pragma('wal_checkpoint(TRUNCATE)');
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const frame = 24 + pageSize;
  db.prepare('INSERT INTO t (k, n, v) VALUES (?, ?, ?)').run('a', 1, 'first');
  const oneTx = fs.statSync(`${file}-wal`).size;
  db.prepare('INSERT INTO t (k, n, v) VALUES (?, ?, ?)').run('b', 2, 'second');
  const wal = fs.readFileSync(`${file}-wal`);
  assert.ok(wal.length > oneTx && (wal.length - 32) % frame === 0);
  const flip = (offset: number) => {
    const copy = path.join(fs.mkdtempSync(path.join(tmp, 'dmg-')), 'db.sqlite');
    fs.copyFileSync(file, copy);
    const w = Buffer.from(wal);
    w[offset] = w[offset]! ^ 0xff;
    fs.writeFileSync(`${copy}-wal`, w);
    return copy;
  };
  // The last frame's page bytes: the second transaction is torn, the first stands.
  const tornTail = flip(wal.length - 10);
  assert.deepEqual(viaReader(tornTail, 'a', 1), viaCopy(tornTail, 'a', 1));
  assert.equal(viaReader(tornTail, 'a', 1)?.v, 'first');
  assert.equal(viaReader(tornTail, 'b', 2), undefined);
  assert.equal(viaCopy(tornTail, 'b', 2), undefined, 'SQLite agrees');
  // A frame of the first transaction: a commit of the same generation follows it.
  const middle = flip(32 + 24 + 100);
  assert.throws(() => viaReader(middle, 'a', 1), unreadable);
  db.close();
});

test('files the reader cannot prove consistent are refused: a rollback journal, rollback mode, a foreign format, other columns', () => {
  const file = fresh();
  const db = writer(file);
  db.exec(T_SQL);
  db.prepare('INSERT INTO t (k, n, v) VALUES (?, ?, ?)').run('a', 1, 'x');
  db.close();
  assert.equal(viaReader(file, 'a', 1)?.v, 'x');
  assert.throws(() => readSqlite(file, (r) => r.get('t', ['k', 'n', 'v', 'w'], ['k', 'n'], ['a', 1])), unreadable);
  assert.throws(() => readSqlite(file, (r) => r.get('t', ['k', 'v', 'n'], ['k', 'n'], ['a', 1])), unreadable);
  assert.throws(() => readSqlite(file, (r) => r.get('t', T_COLUMNS, ['v'], ['x'])), unreadable, 'no index on that column');
  assert.throws(() => readSqlite(file, (r) => r.get('nope', T_COLUMNS, ['k', 'n'], ['a', 1])), unreadable);

  fs.writeFileSync(`${file}-journal`, 'journal');
  assert.throws(() => viaReader(file, 'a', 1), unreadable);
  fs.rmSync(`${file}-journal`);

  const rollback = fresh();
  const r = new Database(rollback);
  r.pragma('journal_mode = DELETE');
  r.exec(T_SQL);
  r.close();
  assert.throws(() => viaReader(rollback, 'a', 1), unreadable);

  const junk = fresh();
  fs.writeFileSync(junk, Buffer.alloc(4096, 1));
  assert.throws(() => viaReader(junk, 'a', 1), unreadable);
  const short = fresh();
  fs.writeFileSync(short, 'SQLite format 3\0');
  assert.throws(() => viaReader(short, 'a', 1), unreadable);
  assert.throws(() => viaReader(path.join(tmp, 'missing.sqlite'), 'a', 1), unreadable);
  assert.equal(fs.existsSync(path.join(tmp, 'missing.sqlite')), false);

  const badWal = fresh();
  const w = writer(badWal);
  w.exec(T_SQL);
  w.close();
  fs.writeFileSync(`${badWal}-wal`, Buffer.alloc(100, 9));
  assert.throws(() => viaReader(badWal, 'a', 1), unreadable, 'a WAL with a foreign header');
});

test('a rowid alias (INTEGER PRIMARY KEY) is the rowid; UNIQUE columns get their own automatic index', () => {
  const file = fresh();
  const db = writer(file);
  db.exec('CREATE TABLE a (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, tag TEXT, UNIQUE (tag, name))');
  const ins = db.prepare('INSERT INTO a (id, name, tag) VALUES (?, ?, ?)');
  for (let i = 0; i < 500; i++) ins.run(i * 3 + 1, `name-${i}`, `tag-${i % 5}`);
  const cols = ['id', 'name', 'tag'];
  assert.deepEqual(parseCreateTable('CREATE TABLE a (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, tag TEXT, UNIQUE (tag, name))').autoIndexes, [['name'], ['tag', 'name']]);
  for (const i of [0, 77, 499]) {
    const want = db.prepare('SELECT * FROM a WHERE name = ?').get(`name-${i}`);
    assert.deepEqual(readSqlite(file, (r) => r.get('a', cols, ['name'], [`name-${i}`])), want);
    assert.deepEqual(readSqlite(file, (r) => r.get('a', cols, ['tag', 'name'], [`tag-${i % 5}`, `name-${i}`])), want);
  }
  assert.equal(readSqlite(file, (r) => r.get('a', cols, ['name'], ['name-500'])), undefined);
  db.close();
});

test('a schema change between two reads in one process is seen (schema rows are reused only for identical page-1 bytes)', () => {
  const file = fresh();
  const db = writer(file);
  db.exec(T_SQL);
  db.prepare('INSERT INTO t (k, n, v) VALUES (?, ?, ?)').run('a', 1, 'x');
  assert.equal(viaReader(file, 'a', 1)?.v, 'x');
  assert.equal(viaReader(file, 'a', 1)?.v, 'x', 'read again');
  // Same table name, other columns and a new root page: the committed change lives in the WAL.
  db.exec('DROP TABLE t; CREATE TABLE t (k TEXT NOT NULL, n INTEGER NOT NULL, v ANY, w ANY, PRIMARY KEY (k, n))');
  db.prepare('INSERT INTO t (k, n, v, w) VALUES (?, ?, ?, ?)').run('b', 2, 'y', 'z');
  assert.throws(() => viaReader(file, 'a', 1), unreadable, 'the old columns are gone');
  assert.deepEqual(readSqlite(file, (r) => r.get('t', [...T_COLUMNS, 'w'], ['k', 'n'], ['b', 2])), { k: 'b', n: 2, v: 'y', w: 'z' });
  assert.equal(readSqlite(file, (r) => r.get('t', [...T_COLUMNS, 'w'], ['k', 'n'], ['a', 1])), undefined);
  db.close();
});

test('the stores\' read-only readers return what the better-sqlite3 store returns, and write nothing', () => {
  const root = fs.mkdtempSync(path.join(tmp, 'store-'));
  const dataDir = path.join(root, 'data');
  initAuthority(dataDir);
  const req = decodeRequirement(fs.readFileSync(path.join(REPO_ROOT, 'examples', 'requirement.json')));
  const a = Authority.open(dataDir);
  a.addProfile({ repository: 'acme/demo', profile: 'default', target: 'main', requirement: req.requirement, canonical: req.canonical, requirement_digest: req.digest });
  a.close();
  const ws = path.join(root, 'ws');
  fs.cpSync(path.join(REPO_ROOT, 'examples', 'workspace'), ws, { recursive: true });
  checkpoint(dataDir, { repository: 'acme/demo', profile: 'default', change_id: 'c1', workspace: ws });
  fs.writeFileSync(path.join(ws, 'more.txt'), 'more\n');
  checkpoint(dataDir, { repository: 'acme/demo', profile: 'default', change_id: 'c1', workspace: ws });

  const before = snapshotDir(path.join(dataDir, 'authority.sqlite'));
  const ro = Authority.open(dataDir, { readonly: true });
  const want = ro.currentSubject('acme/demo', 'default', 'c1');
  ro.close();
  const read = readCurrentSubjectUnchecked(dataDir, 'acme/demo', 'default', 'c1');
  read.check();
  assert.deepEqual(read.subject, want);
  assert.equal(want.change_version, 2);
  assert.throws(() => readCurrentSubjectUnchecked(dataDir, 'acme/demo', 'default', 'c2'), (e: unknown) => e instanceof AgentscmError && e.code === 'CHANGE_NOT_FOUND');

  const w = openWorkspacesForWrite(dataDir);
  const row = w.prepare('SELECT * FROM workspaces').get();
  w.close();
  const after = snapshotDir(path.join(dataDir, 'authority.sqlite'));
  assert.equal(after.split('\n').filter((l) => l.startsWith('authority.sqlite ')).join(), before.split('\n').filter((l) => l.startsWith('authority.sqlite ')).join());
  const wsBefore = snapshotDir(path.join(dataDir, 'workspaces.sqlite'));
  assert.deepEqual(readWorkspaceState(dataDir, ws), row);
  assert.equal(snapshotDir(path.join(dataDir, 'workspaces.sqlite')), wsBefore);
});
