// Build helper of scripts/bundle-stop-hook.ts: runs the Stop hook body once, as the loader does, and
// writes V8's code cache of everything that run compiled. Arguments: CACHE_FILE, then the hook's argv.

import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BODY_NAME, compileHookBody, runHookBody } from '../src/commands/skill-workflow/hook-loader.js';

const hookDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'hook');
const body = path.join(hookDir, BODY_NAME);
const [cacheFile, ...args] = process.argv.slice(2);
process.argv = [process.argv[0]!, body, ...args];
const script = compileHookBody(body, undefined);
process.on('exit', () => fs.writeFileSync(cacheFile!, script.createCachedData()));
runHookBody(script, body, hookDir, createRequire(body));
