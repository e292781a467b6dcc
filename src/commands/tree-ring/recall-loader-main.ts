// Entry of `tree-ring recall`'s fast path (dist/hook/tree-ring-recall.cjs, run by bin/tree-ring.js):
// runs the bundled body (dist/hook/tree-ring-recall.body.cjs, from recall-main.ts) with its V8 code
// cache. See src/cli/code-cache.ts.

import * as path from 'node:path';
import { cacheFileOf, compileBodyCached, runBody } from '../../cli/code-cache.js';

const body = path.join(__dirname, 'tree-ring-recall.body.cjs');
runBody(compileBodyCached(body, cacheFileOf(body)), body, __dirname, require);
