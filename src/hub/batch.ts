// Group commit of the journal's mutations. A durable commit waits for an fsync, and better-sqlite3 would
// wait for it on the event loop, so one commit per mutation caps the Hub at one fsync per request and
// stalls everything else meanwhile. Instead, the mutations that arrive together are run as one batch:
//
//   BEGIN IMMEDIATE
//     SAVEPOINT, mutation 1, RELEASE        (or ROLLBACK TO: a refused mutation leaves no row)
//     SAVEPOINT, mutation 2, RELEASE
//     ...
//   COMMIT, then fdatasync of the WAL       (one sync for the whole batch, off the event loop)
//
// Each mutation still runs its checks and writes inside its own (nested) transaction, one after the
// other, so claims of one task serialize exactly as before: a later mutation of the batch sees the
// earlier ones' rows. Nothing of a batch is answered before its COMMIT returned and the WAL is synced:
// not the successes, and not the refusals either, since they may rest on rows of the batch. If the
// COMMIT (or BEGIN, or the sync) fails, or SQLite abandons the transaction midway, every answer of the
// batch becomes a store error and none is reported as done. The SQL part of a batch runs synchronously
// within one event-loop turn, so no transaction is ever open while other requests run.

import * as fs from 'node:fs';
import type Database from 'better-sqlite3';
import type { JsonValue } from '../core/canonical/json.js';
import { HubError } from './errors.js';

export type Outcome = { readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly error: unknown };

/** The answer given to every mutation of a batch whose commit did not happen. */
export const batchNotCommitted = (): HubError => new HubError(503, 'store_unavailable', 'the Hub storage is unavailable');

/**
 * Runs `runs` as one batch in one write transaction of `db`, each in its own savepoint, and returns
 * their outcomes in order. Successes are reported only when the single COMMIT succeeded.
 */
export function runBatch(db: Database.Database, runs: readonly (() => JsonValue)[], reserve?: Reservation): Outcome[] {
  if (db.inTransaction) throw new Error('runBatch: a transaction is already open');
  const out: Outcome[] = [];
  try {
    control(db, 'BEGIN IMMEDIATE');
  } catch (error) {
    // Contention (SQLITE_BUSY after the busy timeout) or a store fault: nothing ran.
    return runs.map(() => ({ ok: false, error }));
  }
  if (reserve) {
    try {
      reserve.begin();
    } catch (error) {
      db.exec('ROLLBACK');
      return runs.map(() => ({ ok: false, error }));
    }
  }
  try {
    return runReserved(db, runs, out);
  } finally {
    reserve?.end();
  }
}

/**
 * The second lock of the seed's order (workspace guard, journal transaction, native authority writer
 * reservation): taken after the journal's BEGIN IMMEDIATE and released after its COMMIT.
 */
export interface Reservation {
  begin(): void;
  end(): void;
}

function runReserved(db: Database.Database, runs: readonly (() => JsonValue)[], out: Outcome[]): Outcome[] {
  let broken: unknown;
  for (const run of runs) {
    if (broken !== undefined) {
      out.push({ ok: false, error: broken });
      continue;
    }
    try {
      out.push({ ok: true, value: savepoint(db, run) });
    } catch (error) {
      out.push({ ok: false, error });
    }
    // Some errors (a full disk, an I/O error) make SQLite roll back the whole transaction: what the
    // batch did so far is gone, so nothing of it may be answered as done.
    if (!db.inTransaction) broken = batchNotCommitted();
  }
  if (broken === undefined) {
    try {
      control(db, 'COMMIT');
      return out;
    } catch (error) {
      broken = error;
    }
  }
  if (db.inTransaction) {
    try {
      db.exec('ROLLBACK');
    } catch {
      // The connection keeps failing; the answers below already say so.
    }
  }
  return runs.map(() => ({ ok: false, error: batchNotCommitted() }));
}

const controls = new WeakMap<Database.Database, Map<string, Database.Statement>>();


/** Runs a transaction-control statement, prepared once per connection (exec compiles it each time). */
function control(db: Database.Database, sql: 'BEGIN' | 'BEGIN IMMEDIATE' | 'COMMIT'): void {
  let m = controls.get(db);
  if (!m) {
    m = new Map();
    controls.set(db, m);
  }
  let st = m.get(sql);
  if (!st) {
    st = db.prepare(sql);
    m.set(sql, st);
  }
  st.run();
}

const savepoints = new WeakMap<Database.Database, (run: () => JsonValue) => JsonValue>();

/** Runs one mutation in a savepoint of the open transaction (rolled back alone when it throws). */
function savepoint(db: Database.Database, run: () => JsonValue): JsonValue {
  let tx = savepoints.get(db);
  if (!tx) {
    // better-sqlite3 runs a transaction function inside an open transaction as SAVEPOINT/RELEASE, and
    // as ROLLBACK TO/RELEASE when it throws.
    tx = db.transaction((r: () => JsonValue) => r());
    savepoints.set(db, tx);
  }
  return tx(run);
}

/**
 * Collects the mutations submitted during one event-loop turn and runs them as one batch right after
 * (setImmediate: after the poll phase has read every request that was ready), then answers them once
 * the batch is durable. While a WAL sync is in flight, submissions wait for it and then run as one
 * batch (their answers would wait for the next sync in any case).
 *
 * Durability: the connection runs with synchronous=NORMAL, under which a WAL commit is written but not
 * synced (checkpoints still sync the WAL before copying it and the database after). Before answering,
 * this class syncs the WAL file itself with fdatasync on its own descriptor, in the thread pool, so at
 * the moment of any answer the batch's frames are on stable storage, exactly as synchronous=FULL would
 * have them; the difference is only that the event loop keeps working during the sync instead of
 * waiting for it. One sync is in flight at a time and covers every batch committed before it started;
 * mutations submitted meanwhile wait for it and then commit as one batch, covered by the next sync
 * (a batch committed during a sync could not be answered sooner). The WAL file keeps its inode for the life of the
 * connection: SQLite deletes it only when the last connection closes, and the Hub keeps one open.
 *
 * A committed batch is visible to later batches and reads at once, so every other journal-derived
 * answer (reads, recovery) goes through whenDurable too: it is sent only once every batch committed
 * before it was computed is durable. If a sync fails, nothing waiting is reported done and the journal
 * stops answering (fail-stop, like a failed fsync in any database: the file's state is unknown until a
 * restart recovers it).
 */
export class GroupCommit {
  private queue: { run: () => JsonValue; done: (o: Outcome) => void }[] = [];
  private scheduled = false;
  private journal: Database.Database | undefined;
  private walFd: number | undefined;
  /** Batches committed to SQLite, and how many of them are known durable. */
  private committed = 0;
  private durable = 0;
  private syncing = false;
  private failed = false;
  private readonly waiting: { seq: number; send: (failure: HubError | undefined) => void }[] = [];
  private idle: (() => void)[] = [];
  /** Batches run, mutations they held, and WAL syncs completed (diagnostics for tests). */
  batches = 0;
  mutations = 0;
  syncs = 0;

  constructor(
    private readonly db: () => Database.Database,
    /** The authority connection: each batch holds its writer reservation (see reservationOf). */
    private readonly readDb?: Database.Database,
    private readonly log: (line: string) => void = () => {},
    /** Called first inside readDb's reservation of each batch (the Hub revalidates its authority memo here). */
    private readonly onReadBegin: () => void = () => {},
  ) {}

  submit(run: () => JsonValue, done: (o: Outcome) => void): void {
    if (this.failed) {
      done({ ok: false, error: batchNotCommitted() });
      return;
    }
    this.queue.push({ run, done });
    // While a sync is in flight, a batch committed now could not be answered before the next sync
    // anyway: what arrives meanwhile waits and runs as one batch when the sync is done (fewer, larger
    // batches: one BEGIN, COMMIT and WAL write of the shared pages for all of them).
    if (!this.syncing) this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  /**
   * Calls send once every batch committed so far is durable (at once when it already is); with a store
   * error instead when the journal failed. For answers computed from the journal outside a batch.
   */
  whenDurable(send: (failure: HubError | undefined) => void): void {
    if (this.failed) send(batchNotCommitted());
    else if (this.durable === this.committed) send(undefined);
    else this.waiting.push({ seq: this.committed, send });
  }

  /**
   * For shutdown: resolves once no sync is in flight. Nothing is run or answered as done afterwards;
   * what still waits for a sync is answered with a store error.
   */
  close(): Promise<void> {
    this.failed = true;
    return new Promise((resolve) => {
      const finish = () => {
        // Committed but never synced: not reported done (an identical retry finds whatever landed).
        for (const w of this.waiting.splice(0)) w.send(batchNotCommitted());
        if (this.walFd !== undefined) fs.closeSync(this.walFd);
        this.walFd = undefined;
        resolve();
      };
      if (this.syncing) this.idle.push(finish);
      else finish();
    });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const items = this.queue;
    this.queue = [];
    if (this.failed) {
      // Closed (or failed) since these were queued: nothing more is run or answered as done.
      for (const i of items) i.done({ ok: false, error: batchNotCommitted() });
      return;
    }
    let db: Database.Database;
    try {
      db = this.open();
    } catch (error) {
      // No journal (e.g. a schema this program does not know): nothing ran, nothing to wait for.
      for (const i of items) i.done({ ok: false, error });
      return;
    }
    const runs = items.map((i) => i.run);
    const outcomes = runBatch(db, runs, this.readDb ? this.reservation(this.readDb) : undefined);
    this.batches++;
    this.mutations += items.length;
    const seq = ++this.committed;
    this.waiting.push({
      seq,
      send: (failure) => {
        for (let i = 0; i < items.length; i++) items[i]!.done(failure ? { ok: false, error: failure } : outcomes[i]!);
      },
    });
    if (this.walFd === undefined) {
      try {
        this.walFd = fs.openSync(`${db.name}-wal`, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
      } catch (error) {
        this.log(`hub: journal WAL unavailable (${(error as NodeJS.ErrnoException).code ?? 'unknown'})`);
        this.fail();
        return;
      }
    }
    this.sync();
  };

  private reservation(db: Database.Database): Reservation {
    return reservationOf(db, this.onReadBegin);
  }

  private open(): Database.Database {
    if (!this.journal || !this.journal.open) {
      const db = this.db();
      // This class syncs the WAL before any answer (see above); SQLite need not do it inside COMMIT.
      db.pragma('synchronous = NORMAL');
      // The automatic checkpoint runs inside a COMMIT, on the event loop: it copies every page the WAL
      // holds into the database and syncs both files, stalling every request meanwhile. The same index
      // and table pages are written again and again by consecutive batches, so a checkpoint every
      // 4,000 frames (about 16 MiB of WAL) instead of SQLite's 1,000 copies each of them once for four
      // times the batches: a quarter of the stalls for about the same pages copied per stall
      // (bench/README.md, hub-cycles). journal_size_limit truncates the WAL file back to 32 MiB after
      // a checkpoint restarted it, should a long read have let it grow past that meanwhile.
      db.pragma('wal_autocheckpoint = 4000');
      db.pragma('journal_size_limit = 33554432');
      this.journal = db;
    }
    return this.journal;
  }

  private sync(): void {
    if (this.syncing || this.failed || this.durable === this.committed || this.walFd === undefined) return;
    this.syncing = true;
    const target = this.committed;
    fs.fdatasync(this.walFd, (err) => {
      this.syncing = false;
      if (err) {
        this.log(`hub: journal sync failed (${err.code ?? 'unknown'})`);
        this.fail();
      } else {
        this.syncs++;
        this.durable = target;
        this.release();
      }
      const idle = this.idle;
      this.idle = [];
      for (const f of idle) f();
      this.sync();
      // What was submitted during the sync runs now (or, after a failure or close, is refused).
      if (!this.syncing) this.schedule();
    });
  }

  private release(): void {
    let n = 0;
    while (n < this.waiting.length && this.waiting[n]!.seq <= this.durable) n++;
    for (const w of this.waiting.splice(0, n)) w.send(undefined);
  }

  private fail(): void {
    this.failed = true;
    for (const w of this.waiting.splice(0)) w.send(batchNotCommitted());
  }
}

/**
 * The authority's writer reservation for one batch: BEGIN IMMEDIATE on its connection (so the batch's
 * lookups share one snapshot, the newest, and no other process's authority write, a revocation say,
 * can commit between the batch's checks and its journal COMMIT), released after the journal COMMIT.
 * Contention waits for the busy timeout and then fails the whole batch closed (journal_busy).
 */
function reservationOf(db: Database.Database, onBegin: () => void): Reservation {
  return {
    begin: () => {
      if (db.inTransaction) throw new Error('the authority connection has a transaction open');
      control(db, 'BEGIN IMMEDIATE');
      try {
        onBegin();
      } catch {
        // Without it the batch's lookups go to the store itself, which reports any fault.
      }
    },
    end: () => {
      // The reservation wrote nothing: ending it cannot lose anything.
      try {
        if (db.inTransaction) db.exec('ROLLBACK');
      } catch {
        // The next batch starts its own transaction.
      }
    },
  };
}
