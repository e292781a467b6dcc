// Entry of `tree-ring recall`'s fast path (dist/hook/tree-ring-recall.cjs, run by bin/tree-ring.js):
// runs the bundled body (dist/hook/tree-ring-recall.body.cjs, from recall-main.ts) with a code cache
// (see src/cli/code-cache.ts).

import * as path from 'node:path';
import { runBundle } from '../../cli/code-cache.js';

runBundle(path.join(__dirname, 'tree-ring-recall.body.cjs'), require);
