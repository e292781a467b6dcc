// Shared entry of the one-file hook bundles (src/entries/, built by scripts/build-bundles.ts): hosts start a process per event,
// so a bundle skips the module graph and talks to descriptors 0/1/2 directly, creating no stream
// unless something asks for one. Same parser and runner as the full CLI; only the loading differs.

import { writeSync } from 'node:fs';
import { runProgram, type Program } from './run.js';
import type { CommandContext, Output } from './types.js';

/**
 * Writes to a descriptor synchronously (no stream to create); falls back to the stream on EAGAIN (a
 * non-blocking descriptor that is full), and then calls streamed().
 */
function fdOutput(fd: 1 | 2, streamed: () => void): Output {
  return {
    write(chunk: string | Uint8Array): boolean {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      let off = 0;
      try {
        while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      } catch (e) {
        // A reader that went away (`tree-ring recall … | head`) is not an error, as in src/entries/cli.ts main().
        if (fd === 1 && (e as NodeJS.ErrnoException).code === 'EPIPE') return true;
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
        streamed();
        (fd === 1 ? process.stdout : process.stderr).write(bytes.subarray(off));
      }
      return true;
    },
  };
}

export interface HookBundleOptions {
  /**
   * End the process as soon as the command has returned, unless some output went to a stream (which
   * must drain first). Only for a command that leaves nothing in flight that matters: its output and its
   * files written synchronously, at most a connection left to close. The process then skips Node's
   * teardown: waiting for its handles to close and freeing the heap region by region, which costs a
   * short-lived process more than the kernel's release of the whole address space at exit.
   */
  readonly exitWhenDone?: boolean;
}

export async function runHookBundle(program: Program, options: HookBundleOptions = {}): Promise<void> {
  let streamed = false;
  const onStreamed = () => {
    streamed = true;
  };
  const ctx: CommandContext = {
    stdout: fdOutput(1, onStreamed),
    stderr: fdOutput(2, onStreamed),
    get stdin(): NodeJS.ReadableStream {
      return process.stdin;
    },
    stdinFd: 0,
    env: process.env,
    cwd: process.cwd(),
    program: program.name,
  };
  process.exitCode = await runProgram(program, process.argv.slice(2), ctx);
  if (options.exitWhenDone && !streamed) process.exit();
}
