// Entry of the bundled Stop hook (dist/hook/agentscm-stop-hook.js, built by scripts/bundle-hook.ts).
// Hosts start a process on every stop, and each extra ES module costs start-up time, so install-stop
// registers this one-file bundle. Same parser, runner and modules as `agentscm skill-workflow
// task-stop|task-codex-stop`; only the loading differs.

import { writeSync } from 'node:fs';
import { runProgram, type Program } from '../../cli/run.js';
import type { Output } from '../../cli/types.js';
import { AGENTSCM_VERSION } from '../../version.js';
import { STOP_HOOK_SPECS } from './hook-spec.js';

const PROGRAM: Program = {
  name: 'agentscm',
  version: AGENTSCM_VERSION,
  versionLine: `agentscm ${AGENTSCM_VERSION}`,
  commands: STOP_HOOK_SPECS,
  groups: [{ path: ['skill-workflow'], summary: 'Stop hooks' }],
  defaultErrorPolicy: 'hook',
};

/** Writes to a descriptor synchronously (no stream to create); falls back to the stream on EAGAIN. */
function fdOutput(fd: 1 | 2): Output {
  return {
    write(chunk: string | Uint8Array): boolean {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      let off = 0;
      try {
        while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
        (fd === 1 ? process.stdout : process.stderr).write(bytes.subarray(off));
      }
      return true;
    },
  };
}

const ctx = {
  stdout: fdOutput(1),
  stderr: fdOutput(2),
  get stdin(): NodeJS.ReadableStream {
    return process.stdin;
  },
  stdinFd: 0,
  env: process.env,
  cwd: process.cwd(),
  program: 'agentscm' as const,
};
process.exitCode = await runProgram(PROGRAM, process.argv.slice(2), ctx);
