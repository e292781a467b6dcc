// Entry of the lifecycle hook as the project-local launcher runs it (dist/hook/tree-ring-hook.cjs): runs
// the bundled body (dist/hook/tree-ring-hook.body.cjs, from hook-main.ts) with its V8 code cache. See
// src/cli/code-cache.ts.

import * as path from 'node:path';
import { cacheFileOf, compileBodyCached, runBody } from '../../cli/code-cache.js';

const body = path.join(__dirname, 'tree-ring-hook.body.cjs');
runBody(compileBodyCached(body, cacheFileOf(body)), body, __dirname, require);
