// Shared entry of the one-file hook bundles (scripts/bundle-hook.ts): hosts start a process per event,
// so a bundle skips the module graph and talks to descriptors 0/1/2 directly, creating no stream
// unless something asks for one. Same parser and runner as the full CLI; only the loading differs.

import { writeSync } from 'node:fs';
import { runProgram, type Program } from './run.js';
import type { CommandContext, Output } from './types.js';

/** Writes to a descriptor synchronously (no stream to create); falls back to the stream on EAGAIN. */
function fdOutput(fd: 1 | 2): Output {
  return {
    write(chunk: string | Uint8Array): boolean {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      let off = 0;
      try {
        while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      } catch (e) {
        // A reader that went away (`tree-ring recall … | head`) is not an error, as in src/cli.ts main().
        if (fd === 1 && (e as NodeJS.ErrnoException).code === 'EPIPE') return true;
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
        (fd === 1 ? process.stdout : process.stderr).write(bytes.subarray(off));
      }
      return true;
    },
  };
}

export async function runHookBundle(program: Program): Promise<void> {
  const ctx: CommandContext = {
    stdout: fdOutput(1),
    stderr: fdOutput(2),
    get stdin(): NodeJS.ReadableStream {
      return process.stdin;
    },
    stdinFd: 0,
    env: process.env,
    cwd: process.cwd(),
    program: program.name,
  };
  process.exitCode = await runProgram(program, process.argv.slice(2), ctx);
}
