// Entry of the lifecycle hook as the project-local launcher runs it (dist/bundles/tree-ring-hook.cjs): runs
// the bundled body (dist/bundles/tree-ring-hook.body.cjs, from treering-hook.ts) with a code cache (see
// src/cli/code-cache.ts).

import * as path from 'node:path';
import { runBundle } from '../cli/code-cache.js';

runBundle(path.join(__dirname, 'tree-ring-hook.body.cjs'), require);
