// `npm run man`: writes man/agentscm.1 and man/tree-ring.1 from the command table.

import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { manPages } from './man-pages.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
for (const page of manPages()) {
  const file = path.join(root, page.file);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, page.content);
  process.stdout.write(`wrote ${page.file}\n`);
}
