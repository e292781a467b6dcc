// Loader of a single command's one-file entry (dist/bundles/agentscm-<command>-entry.cjs, which
// bin/agentscm.js requires): loads the bundled entry beside it (the same name, `.body.cjs`) with a code
// cache (src/cli/code-cache.ts) and hands on its `main`. The build writes one copy per command.

import { requireBundle } from '../cli/code-cache.js';

const body = requireBundle(__filename.replace(/\.cjs$/, '.body.cjs'), require) as { main: (argv: readonly string[]) => Promise<number> };

/** The entry's main (src/entries/one-command.ts, runOneCommand). */
export const main = body.main;
