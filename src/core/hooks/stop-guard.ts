// What every Stop hook shares (seed 000, "Stop hook"): lenient decoding of the host's Stop payload and
// the continuation counter that ends a block loop after 8 continuations. Claude Code caps consecutive
// blocks itself, Codex does not, so the counter is what guarantees that a session can always stop.
//
// The counter is the only file a Stop hook creates. It lives outside the native data dir, so that a
// missing or broken data dir still ends the loop (a missing store must block, yet must not be created):
//
//   $AGENTSCM_STATE_DIR, else $XDG_STATE_HOME/agentscm, else $HOME/.local/state/agentscm
//     agent-stop/<digest>      {"version":1,"count":N}, 0600, one per (host, session, subject key)
//
// No zod here: this is the hook hot path.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { canonicalJson, canonicalJsonBytes, parseStrictJson } from '../canonical/json.js';
import { DOMAINS, domainDigest } from '../crypto/digest.js';
import { AgentscmError } from '../errors.js';
import { ensurePrivateDir, readPrivateFile } from '../fs/safe.js';

/** Continuations a Stop hook grants before it lets the session stop anyway. */
export const MAX_CONTINUATIONS = 8;
export const STOP_PAYLOAD_MAX_BYTES = 1024 * 1024;

export type StopHost = 'claude-code' | 'codex';

export interface StopPayload {
  readonly session_id: string;
  /** True when this Stop follows a continuation the hooks asked for. Missing or null counts as true. */
  readonly stop_hook_active: boolean;
}

const malformedStdin = () => new AgentscmError('BAD_INPUT', 'MALFORMED_STOP_PAYLOAD', 'the Stop payload on stdin is malformed');
/** The state dir is another user's or writable by others: the hook blocks (fails closed) on this one. */
export const COUNTER_DIR_UNSAFE = 'COUNTER_DIR_UNSAFE';
const counterDirUnsafe = () => new AgentscmError('LOCAL_STATE', COUNTER_DIR_UNSAFE, 'the Stop counter directory is writable by others');
const counterError = () => new AgentscmError('LOCAL_STATE', 'COUNTER_UNAVAILABLE', 'the Stop continuation counter is unavailable');

/**
 * Decodes a Stop (or SubagentStop) payload. Both hosts' shapes are accepted: unknown fields are
 * ignored (Claude adds optional ones), nulls are allowed where Codex sends them. Only what the guard
 * needs is required: a session id and, if present, the right event name.
 */
export function decodeStopPayload(bytes: Buffer): StopPayload {
  let v: unknown;
  try {
    v = parseStrictJson(bytes, { maxBytes: STOP_PAYLOAD_MAX_BYTES, what: 'Stop payload' });
  } catch {
    throw malformedStdin();
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw malformedStdin();
  const o = v as Record<string, unknown>;
  const sid = o.session_id;
  if (typeof sid !== 'string' || sid.length === 0 || sid.length > 256 || /[\u0000-\u001f\u007f]/.test(sid)) throw malformedStdin();
  const ev = o.hook_event_name;
  if (ev !== undefined && ev !== null && ev !== 'Stop' && ev !== 'SubagentStop') throw malformedStdin();
  const active = o.stop_hook_active;
  if (active !== undefined && active !== null && typeof active !== 'boolean') throw malformedStdin();
  // An unknown continuation state errs toward ending a loop: it keeps the count instead of resetting it.
  return { session_id: sid, stop_hook_active: active !== false };
}

/** Reads a descriptor (the hosts' stdin pipe) to the end synchronously, refusing more than the bound. */
export function readFdBounded(fd: number, max = STOP_PAYLOAD_MAX_BYTES): Buffer {
  // One buffer, grown only when full: a payload is a few hundred bytes, so the read that sees the end
  // normally lands in the same buffer (no second buffer, no concatenation).
  let buf = Buffer.allocUnsafe(Math.min(64 * 1024, max + 1));
  let total = 0;
  for (;;) {
    if (total === buf.length) {
      const grown = Buffer.allocUnsafe(Math.min(buf.length * 2, max + 1));
      buf.copy(grown, 0, 0, total);
      buf = grown;
    }
    let n: number;
    try {
      n = fs.readSync(fd, buf, total, buf.length - total, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') continue; // a non-blocking pipe with nothing yet
      if (code === 'EOF') break;
      throw malformedStdin();
    }
    if (n === 0) break;
    total += n;
    if (total > max) throw malformedStdin();
  }
  return buf.subarray(0, total);
}

/** Reads stdin to the end, refusing more than the payload bound. */
export async function readStdin(stdin: NodeJS.ReadableStream, max = STOP_PAYLOAD_MAX_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const c of stdin as AsyncIterable<Buffer | string>) {
    const b = typeof c === 'string' ? Buffer.from(c, 'utf8') : c;
    total += b.length;
    if (total > max) throw malformedStdin();
    chunks.push(b);
  }
  return Buffer.concat(chunks, total);
}

/** The owner-private state directory of the Stop hooks' counters (see the header). */
export function stopStateDir(env: NodeJS.ProcessEnv): string {
  const explicit = env.AGENTSCM_STATE_DIR;
  if (explicit) {
    if (!path.isAbsolute(explicit)) throw counterError();
    return explicit;
  }
  if (env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME)) return path.join(env.XDG_STATE_HOME, 'agentscm');
  if (env.HOME && path.isAbsolute(env.HOME)) return path.join(env.HOME, '.local', 'state', 'agentscm');
  throw counterError();
}

export class ContinuationCounter {
  private constructor(
    readonly file: string,
    /** Continuations already granted in this run of consecutive blocks. */
    readonly count: number,
  ) {}

  /**
   * Opens the counter of one (host, session, subject) key. A fresh stop (stop_hook_active false)
   * starts a new run at 0; a continuation keeps the stored count. Anything unreadable throws, and
   * the hook then exits non-blocking, except a state or counter directory that others could write
   * (COUNTER_DIR_UNSAFE), on which the hook blocks: its counts could be anyone's.
   */
  static open(env: NodeJS.ProcessEnv, host: StopHost, payload: StopPayload, key: Record<string, string>): ContinuationCounter {
    try {
      const stateDir = stopStateDir(env);
      // The state dir itself, when it exists, must be ours and writable by nobody else: otherwise
      // another user could put an agent-stop directory or counter of theirs in place.
      const st = fs.lstatSync(stateDir, { throwIfNoEntry: false });
      if (st && (!st.isDirectory() || (st.mode & 0o022) !== 0 || (typeof process.getuid === 'function' && st.uid !== process.getuid()))) throw counterDirUnsafe();
      const dir = path.join(stateDir, 'agent-stop');
      const name = domainDigest(DOMAINS.stopCounter, canonicalJsonBytes({ host, session_id: payload.session_id, ...key }));
      const file = path.join(dir, name);
      try {
        ensurePrivateDir(dir, 'Stop counter directory');
      } catch (e) {
        if (e instanceof AgentscmError && ['LOOSE_PERMISSIONS', 'FOREIGN_OWNER', 'SYMLINK'].includes(e.code)) throw counterDirUnsafe();
        throw e;
      }
      let count = 0;
      if (fs.lstatSync(file, { throwIfNoEntry: false })) {
        const doc = parseStrictJson(readPrivateFile(file, 'Stop counter', 256), { maxBytes: 256, what: 'Stop counter' });
        if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || Object.keys(doc).length !== 2) throw counterError();
        const d = doc as Record<string, unknown>;
        if (d.version !== 1 || typeof d.count !== 'number' || !Number.isSafeInteger(d.count) || d.count < 0 || d.count > MAX_CONTINUATIONS) throw counterError();
        count = payload.stop_hook_active ? d.count : 0;
      }
      return new ContinuationCounter(file, count);
    } catch (e) {
      if (e instanceof AgentscmError && e.code === COUNTER_DIR_UNSAFE) throw e;
      throw counterError();
    }
  }

  get exhausted(): boolean {
    return this.count >= MAX_CONTINUATIONS;
  }

  /** Records one more continuation; must succeed before a block is printed. */
  recordContinuation(): void {
    // Temp file + rename: atomic, so a reader sees the old or the new count. No fsync: after a crash
    // the count may fall back, which only grants continuations again, never blocks a stop for good.
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(tmp, canonicalJson({ version: 1, count: this.count + 1 }), { mode: 0o600, flag: 'wx' });
      fs.renameSync(tmp, this.file);
    } catch {
      try {
        fs.rmSync(tmp, { force: true });
      } catch {
        // nothing more to do: the counter error below is what matters
      }
      throw counterError();
    }
  }
}

/** The one stdout answer that blocks a stop: the same two keys for both hosts (Codex accepts no others). */
export function blockAnswer(reason: string): string {
  return JSON.stringify({ decision: 'block', reason }) + '\n';
}
