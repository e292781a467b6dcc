// `npm test`: runs every compiled *.test.js under dist/test with node's test runner. Arguments filter
// the files by substring (`npm test -- hub`). Support modules under test/support are not test files.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../test');
const filters = process.argv.slice(2);
const files: string[] = [];
for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.test.js')) continue;
  const file = path.join(entry.parentPath, entry.name);
  if (filters.length === 0 || filters.some((f) => file.includes(f))) files.push(file);
}
files.sort();
if (files.length === 0) {
  process.stderr.write('run-tests: no test files matched\n');
  process.exit(1);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
// Every temporary directory the tests and the processes they start make (projects, stores, host
// homes) lands in one directory of this run, removed afterwards; AGENTSCM_KEEP_TEST_TMP=1 keeps it.
const tmp = mkdtempSync(path.join(os.tmpdir(), 'agentscm-tests-'));
const r = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, ...files], { stdio: 'inherit', env: { ...process.env, TMPDIR: tmp } });
if (process.env.AGENTSCM_KEEP_TEST_TMP === '1') process.stderr.write(`run-tests: temporary files kept in ${tmp}\n`);
else rmSync(tmp, { recursive: true, force: true, maxRetries: 3 });
process.exit(r.status ?? 1);
