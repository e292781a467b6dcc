// Entry of the Stop hook as install-stop registers it (dist/hook/agentscm-stop-hook.cjs): runs the
// bundled body (dist/hook/agentscm-stop-hook.body.cjs) with a code cache (src/cli/code-cache.ts).

import * as path from 'node:path';
import { runBundle } from '../../cli/code-cache.js';
import { BODY_NAME } from './hook-loader.js';

runBundle(path.join(__dirname, BODY_NAME), require);
