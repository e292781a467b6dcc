// The command context of a CLI process: its stdio, environment and working directory (src/entries/cli.ts, and
// the one-file entries that run one command of the table, src/entries/collect.ts).

import type { CommandContext } from './types.js';

export function processContext(program: 'agentscm' | 'tree-ring'): CommandContext {
  // A reader that went away (`agentscm … | head`) is not an error worth a stack trace.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  });
  // stdin is a getter: creating process.stdin costs a stream (and net) that most commands never use.
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    get stdin() {
      return process.stdin;
    },
    stdinFd: 0,
    env: process.env,
    cwd: process.cwd(),
    program,
  };
}
