// `npm test`: runs every compiled *.test.js under dist/test with node's test runner. Arguments filter
// the files by substring (`npm test -- hub`). Support modules under test/support are not test files.

import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
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

// The tests that need a container engine: those using its test helpers, and the demo's. Without an
// engine (none answers and podman, which test/support/engine.ts would start, is not installed) they
// are skipped at once with one line of advice, instead of each waiting out a timeout; with CI=true
// that is a failure, so CI never skips them.
const ENGINE_MARKERS = ['support/engine.js', 'support/collector.js', "'demo.js'"];
const needsEngine = (file: string) => {
  const text = readFileSync(file, 'utf8');
  return ENGINE_MARKERS.some((m) => text.includes(m));
};
const ENGINE_ADVICE = 'install what they need and run them: sudo apt-get install -y podman runc busybox-static (or set DOCKER_HOST to an engine that answers)';
const engineFiles = files.filter(needsEngine);
let env: NodeJS.ProcessEnv = { ...process.env };
if (engineFiles.length > 0 && !(await engineAvailable(process.env))) {
  if (process.env.CI === 'true') {
    process.stderr.write(`run-tests: no container engine answers and podman is not installed; CI runs every test: ${ENGINE_ADVICE}\n`);
    process.exit(1);
  }
  process.stderr.write(`run-tests: no container engine: skipping ${engineFiles.length} engine test file(s) and the collector parts of others; ${ENGINE_ADVICE}\n`);
  for (const f of engineFiles) files.splice(files.indexOf(f), 1);
  env = { ...env, AGENTSCM_NO_ENGINE: '1' };
  if (files.length === 0) process.exit(0);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
// Every temporary directory the tests and the processes they start make (projects, stores, host
// homes) lands in one directory of this run, removed afterwards; AGENTSCM_KEEP_TEST_TMP=1 keeps it.
const tmp = mkdtempSync(path.join(os.tmpdir(), 'agentscm-tests-'));
const r = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, ...files], { stdio: 'inherit', env: { ...env, TMPDIR: tmp } });
if (process.env.AGENTSCM_KEEP_TEST_TMP === '1') process.stderr.write(`run-tests: temporary files kept in ${tmp}\n`);
else rmSync(tmp, { recursive: true, force: true, maxRetries: 3 });
process.exit(r.status ?? 1);

/**
 * What test/support/engine.ts can use: the engine at DOCKER_HOST when it answers /_ping, else podman
 * on PATH, whose service it starts.
 */
async function engineAvailable(e: NodeJS.ProcessEnv): Promise<boolean> {
  if (e.DOCKER_HOST && (await pings(e.DOCKER_HOST))) return true;
  return (e.PATH ?? '').split(path.delimiter).some((d) => {
    try {
      accessSync(path.join(d, 'podman'), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function pings(host: string): Promise<boolean> {
  let target: http.RequestOptions;
  if (host.startsWith('unix://')) target = { socketPath: host.slice('unix://'.length) };
  else if (/^(tcp|http):\/\//.test(host)) {
    const u = new URL(host.replace(/^tcp:/, 'http:'));
    target = { host: u.hostname, port: u.port };
  } else return Promise.resolve(false);
  return new Promise((resolve) => {
    const req = http.request({ ...target, path: '/_ping', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}
