// Entry of the Stop hook as install-stop registers it (dist/hook/agentscm-stop-hook.cjs): runs the
// bundled body (dist/hook/agentscm-stop-hook.body.cjs) with its code cache. See hook-loader.ts.

import * as path from 'node:path';
import { BODY_NAME, CACHE_NAME, compileHookBody, runHookBody } from './hook-loader.js';

const body = path.join(__dirname, BODY_NAME);
runHookBody(compileHookBody(body, path.join(__dirname, CACHE_NAME)), body, __dirname, require);
