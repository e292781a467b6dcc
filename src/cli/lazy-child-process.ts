// node:child_process as commander sees it inside the one-file bundles (scripts/build-bundles.ts resolves
// commander's require('node:child_process') here). commander needs it only to run an executable
// subcommand, which none of ours is, but its top-level require would load child_process (with dgram and
// the socket list) into every hook and recall process; here it is loaded on the first call only.

import type * as childProcess from 'node:child_process';

let loaded: typeof childProcess | undefined;
const load = (): typeof childProcess => (loaded ??= process.getBuiltinModule('node:child_process') as typeof childProcess);

/** child_process.spawn, loading node:child_process on its first call. */
export const spawn = ((...args: unknown[]) => (load().spawn as (...a: unknown[]) => childProcess.ChildProcess)(...args)) as typeof childProcess.spawn;
