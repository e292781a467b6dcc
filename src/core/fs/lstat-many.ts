// lstat of many paths on more than one thread, as git's preloaded index does: a scan of a large
// workspace spends most of its time in lstat system calls, one thread at a time. Helper threads
// (node:worker_threads, each running fs.lstatSync) take chunks of the paths from a shared counter while
// the calling thread takes them too, so a helper that is still starting costs nothing: the caller does
// what is left. The results are the five numbers a scan keeps of each lstat (st_mode, size, mtimeMs,
// ctimeMs, ino), exactly as fs.Stats gives them. A path a helper could not lstat for any reason but its
// absence is done again by the caller, so that errors are the caller's own (lstatOrUndefined's).
//
// Helpers start only for many paths (STAT_HELPER_MIN, one helper per that many) and where this process
// may use more than one core: a helper thread takes tens of milliseconds to start, and on two cores the
// lstat calls of two threads went about 1.3 times as fast as one thread's (bench/README.md,
// workspace-scale): a scan of 100,000 files gained about a sixth, one of 20,000 nothing.

import * as fs from 'node:fs';
import type * as nodeOs from 'node:os';
import type * as workerThreads from 'node:worker_threads';
import { lstatOrUndefined } from './safe.js';

/** Numbers kept per path: st_mode (0: the path does not exist), size, mtimeMs, ctimeMs, ino. */
export const STAT_FIELDS = 5;
/** Fewer paths than this are lstat'ed on the calling thread alone. */
export const STAT_HELPER_MIN = 32768;
const MAX_HELPERS = 3;
/** Paths a thread takes at a time. */
export const STAT_CHUNK = 256;
/** st_mode of a path the helper could not lstat (not its absence): the caller does it again. */
const REDO = -1;

/** How long the caller waits without any chunk finishing before it does the helpers' unfinished chunks itself. */
const STALL_MS = 2000;

// The helper: fs.lstatSync over the chunks it takes. ctl[0] is the next path to take, ctl[1] the paths
// done; done[c] is set when chunk c is written.
const HELPER = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
parentPort.on('message', ({ prefix, joined, out, ctl, done, chunk }) => {
  const paths = joined.split('\\0'), s = new Float64Array(out), c = new Int32Array(ctl), d = new Int32Array(done), n = paths.length;
  for (;;) {
    const start = Atomics.add(c, 0, chunk);
    if (start >= n) break;
    const end = Math.min(n, start + chunk);
    for (let i = start; i < end; i++) {
      let st;
      try { st = fs.lstatSync(prefix + paths[i], { throwIfNoEntry: false }); } catch { s[${STAT_FIELDS} * i] = ${REDO}; continue; }
      const k = ${STAT_FIELDS} * i;
      if (st === undefined) { s[k] = 0; continue; }
      s[k] = st.mode; s[k + 1] = st.size; s[k + 2] = st.mtimeMs; s[k + 3] = st.ctimeMs; s[k + 4] = st.ino;
    }
    Atomics.store(d, start / chunk, 1);
    Atomics.add(c, 1, end - start);
    Atomics.notify(c, 1);
  }
});
`;

/** Helper threads started ahead of calls of lstatMany (they start while the caller does other work). */
export class StatHelpers {
  /** How many paths of the last lstatMany the helpers did (the rest the caller did). */
  helped = 0;
  private constructor(
    private readonly workers: readonly workerThreads.Worker[],
    private readonly online: Promise<unknown>,
  ) {}

  /** Starts helpers for about `expected` paths, or none (few paths, one core, threads unavailable). */
  static start(expected: number): StatHelpers | undefined {
    // node:os and node:worker_threads load only here: a scan of a small workspace (most Stop hooks) needs neither.
    const os = process.getBuiltinModule('node:os') as typeof nodeOs;
    const count = Math.min(MAX_HELPERS, os.availableParallelism() - 1, Math.floor(expected / STAT_HELPER_MIN));
    if (count < 1) return undefined;
    const { Worker } = process.getBuiltinModule('node:worker_threads') as typeof workerThreads;
    const workers: workerThreads.Worker[] = [];
    try {
      for (let i = 0; i < count; i++) {
        const w = new Worker(HELPER, { eval: true, stdout: false, stderr: false });
        // A helper never keeps the process alive, and one that failed only leaves its paths to the caller.
        w.unref();
        w.on('error', () => {});
        workers.push(w);
      }
    } catch {
      // No thread could be made (a resource limit): the caller lstats alone.
    }
    if (workers.length === 0) return undefined;
    // A helper that could not start ends instead of coming online.
    return new StatHelpers(workers, Promise.all(workers.map((w) => new Promise((resolve) => (w.once('online', resolve), w.once('exit', resolve))))));
  }

  /** Resolves when every helper runs (a caller that can wait for them, such as a test). */
  async started(): Promise<void> {
    // Held by the event loop while it waits (a helper is unref'ed otherwise).
    for (const w of this.workers) w.ref();
    try {
      await this.online;
    } finally {
      for (const w of this.workers) w.unref();
    }
  }

  /** Ends the helper threads (they end with the process anyway; a long-lived caller should not keep them). */
  stop(): void {
    for (const w of this.workers) void w.terminate();
  }

  /** Hands the paths to the helpers; they write into out, count in ctl and mark their chunks in done. */
  share(prefix: string, paths: readonly string[], out: Float64Array, ctl: Int32Array, done: Int32Array): void {
    const joined = paths.join('\0');
    for (const w of this.workers) w.postMessage({ prefix, joined, out: out.buffer, ctl: ctl.buffer, done: done.buffer, chunk: STAT_CHUNK });
  }
}

/** An lstat that cannot fail: any error (ENOTDIR, a loop, no permission) is taken as absence. */
function lstatOrMissing(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/**
 * lstat of `prefix + p` for every p (no NUL in a path), on this thread and the helpers if given: five
 * numbers a path (STAT_FIELDS), st_mode 0 for a path that does not exist. An lstat error other than
 * absence throws as lstatOrUndefined does (FS_ERROR, with the system error and its path as the cause),
 * or, with errors 'missing', counts as absence.
 */
export function lstatMany(prefix: string, paths: readonly string[], helpers?: StatHelpers, errors: 'throw' | 'missing' = 'throw'): Float64Array {
  const n = paths.length;
  const stat = errors === 'throw' ? lstatOrUndefined : lstatOrMissing;
  const put = (out: Float64Array, i: number) => putStat(out, i, stat(prefix + paths[i]!));
  if (helpers === undefined || n === 0) {
    const out = new Float64Array(STAT_FIELDS * n);
    for (let i = 0; i < n; i++) put(out, i);
    return out;
  }
  const out = new Float64Array(new SharedArrayBuffer(8 * STAT_FIELDS * n));
  const ctl = new Int32Array(new SharedArrayBuffer(8));
  const done = new Int32Array(new SharedArrayBuffer(4 * Math.ceil(n / STAT_CHUNK)));
  helpers.share(prefix, paths, out, ctl, done);
  try {
    let mine = 0;
    for (;;) {
      const start = Atomics.add(ctl, 0, STAT_CHUNK);
      if (start >= n) break;
      const end = Math.min(n, start + STAT_CHUNK);
      for (let i = start; i < end; i++) put(out, i);
      Atomics.store(done, start / STAT_CHUNK, 1);
      Atomics.add(ctl, 1, end - start);
      mine += end - start;
    }
    helpers.helped = n - mine;
    // The chunks a helper took are done when the count reaches n (a helper that took none is not waited
    // for). A helper that stopped in the middle of one (it cannot be told from a slow one here) leaves
    // the chunks not marked done to this thread after STALL_MS without progress.
    for (let count = Atomics.load(ctl, 1); count < n; ) {
      if (Atomics.wait(ctl, 1, count, STALL_MS) === 'timed-out' && Atomics.load(ctl, 1) === count) {
        for (let c = 0; c < done.length; c++) {
          if (Atomics.load(done, c) === 1) continue;
          for (let i = c * STAT_CHUNK; i < Math.min(n, (c + 1) * STAT_CHUNK); i++) put(out, i);
        }
        break;
      }
      count = Atomics.load(ctl, 1);
    }
    for (let i = 0; i < n; i++) if (out[STAT_FIELDS * i] === REDO) put(out, i);
    return out;
  } catch (e) {
    // An lstat that failed here ends the call: the helpers take no further chunk of it.
    Atomics.store(ctl, 0, n);
    throw e;
  }
}

function putStat(out: Float64Array, i: number, st: fs.Stats | undefined): void {
  const k = STAT_FIELDS * i;
  if (st === undefined) {
    out[k] = 0;
    return;
  }
  out[k] = st.mode;
  out[k + 1] = st.size;
  out[k + 2] = st.mtimeMs;
  out[k + 3] = st.ctimeMs;
  out[k + 4] = st.ino;
}
