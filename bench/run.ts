// `npm run bench [name...]`: runs bench/<name>.bench.ts (all of them without a name) from dist and
// prints each report. Exits 1 when a bench misses its target. Benchmarks are never part of `npm test`.

import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchResult } from './stats.js';

const dir = path.dirname(fileURLToPath(import.meta.url));
const available = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.js'))
  .map((f) => f.slice(0, -'.bench.js'.length))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !available.includes(w));
if (unknown.length > 0) {
  process.stderr.write(`bench: unknown bench ${unknown.join(', ')} (available: ${available.join(', ')})\n`);
  process.exit(2);
}
let missed = 0;
for (const name of wanted.length ? wanted : available) {
  const mod = (await import(pathToFileURL(path.join(dir, `${name}.bench.js`)).href)) as { run(): BenchResult | Promise<BenchResult> };
  const r = await mod.run();
  process.stdout.write(`[${r.name}]\n${r.lines.map((l) => `  ${l}`).join('\n')}\n`);
  if (!r.ok) missed++;
}
process.exitCode = missed ? 1 : 0;
