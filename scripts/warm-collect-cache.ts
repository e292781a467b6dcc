// Build helper: runs agent-task collect's body bundle as collect.ts does, loads what a collection loads
// lazily (collect-flow.ts preloadForCodeCache), and writes V8's code cache of everything compiled by
// then. No collection runs (that needs an engine and a Hub); the cache covers the modules' loading, which
// is most of what the body costs to start. Argument: the cache file.

import * as fs from 'node:fs';
import { loadCollectBody } from '../src/commands/agent-task/collect.js';

const { script, flow } = loadCollectBody(undefined);
await flow.preloadForCodeCache();
fs.writeFileSync(process.argv[2]!, script.createCachedData());
