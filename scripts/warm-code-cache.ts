// Build helper: runs a one-file body once, as its loader does on Node 20 (src/cli/code-cache.ts), and
// writes V8's code cache of everything that run compiled. Arguments: BODY_FILE CACHE_FILE, then the
// body's argv. A body that runs as the program (the hooks, recall) gets them as process.argv; one that
// exports `main` (a single command's entry, src/entries/one-command.ts) is called with them.

import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { compileBody, loadBody } from '../src/cli/code-cache.js';

const [body, cacheFile, ...args] = process.argv.slice(2);
process.argv = [process.argv[0]!, body!, ...args];
const script = compileBody(body!, undefined);
process.on('exit', () => fs.writeFileSync(cacheFile!, script.createCachedData()));
const exports = loadBody(script, body!, path.dirname(body!), createRequire(body!)) as { main?: (argv: readonly string[]) => Promise<number> };
if (typeof exports.main === 'function') {
  void exports.main(args).then((code) => {
    process.exitCode = code;
  });
}
