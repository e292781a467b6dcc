// Entry of `tree-ring recall`'s fast path (dist/bundles/tree-ring-recall.cjs, run by bin/tree-ring.js):
// runs the bundled body (dist/bundles/tree-ring-recall.body.cjs, from recall.ts) with a code cache
// (see src/cli/code-cache.ts).

import * as path from 'node:path';
import { runBundle } from '../cli/code-cache.js';

runBundle(path.join(__dirname, 'tree-ring-recall.body.cjs'), require);
