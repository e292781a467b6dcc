// Entry of the Stop hook as install-stop registers it (dist/bundles/agentscm-stop-hook.cjs): runs the
// bundled body (dist/bundles/agentscm-stop-hook.body.cjs) with a code cache (src/cli/code-cache.ts).

import * as path from 'node:path';
import { runBundle } from '../cli/code-cache.js';
import { BODY_NAME } from './stop-hook-files.js';

runBundle(path.join(__dirname, BODY_NAME), require);
