// Entry of the bundled lifecycle hook (dist/hook/tree-ring-hook.js, built by scripts/bundle-hook.ts).
// Hosts start a process per event, and on small machines each extra ES module costs milliseconds, so
// the project-local launcher runs this one-file bundle for `--root .tree-ring integrations hook …`.
// Same parser, runner and module as `tree-ring integrations hook`; only the loading differs.

import { writeSync } from 'node:fs';
import { runProgram, type Program } from '../../cli/run.js';
import { TREE_RING_VERSION } from '../../version.js';
import type { Output } from '../../cli/types.js';
import { HOOK_SPEC } from './hook-spec.js';

const PROGRAM: Program = {
  name: 'tree-ring',
  version: TREE_RING_VERSION,
  versionLine: `tree-ring ${TREE_RING_VERSION}`,
  commands: [HOOK_SPEC],
  groups: [],
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

// The process's streams are created only if something asks for them: the hook reads descriptor 0
// and writes descriptors 1 and 2 directly.
const ctx = {
  stdout: fdOutput(1),
  stderr: fdOutput(2),
  get stdin(): NodeJS.ReadableStream {
    return process.stdin;
  },
  stdinIsFd0: true,
  env: process.env,
  cwd: process.cwd(),
  program: 'tree-ring' as const,
};
process.exitCode = await runProgram(PROGRAM, process.argv.slice(2), ctx);
