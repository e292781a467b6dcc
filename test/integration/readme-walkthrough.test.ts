// The README's walkthrough as a new user follows it: the package packed with `npm pack`, installed
// globally into a temporary prefix, and the shell blocks of "Setting up a Hub", "Working on a Change"
// and "Collecting evidence" run as written, in order, in one bash with `set -euo pipefail`, so any
// line that does not run as copied fails the test. Only the Hub's port is changed (a free one, for
// parallel runs), and a trap stops the background Hub.
//
// The global install takes the dependencies from the npm cache where it has them (--prefer-offline)
// and builds better-sqlite3 as a user's install does: minutes on a loaded machine, once per run.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { before, test } from 'node:test';
import { REPO_ROOT } from '../support/cli.js';
import { ensureEngine } from '../support/engine.js';
import { tempDir } from '../support/hub.js';

const SECTIONS = ['Setting up a Hub (operator)', 'Working on a Change (agent)', 'Collecting evidence (collector host)'];

/** The ```sh blocks of a `## TITLE` section of the README, in order. */
function shellBlocks(readme: string, title: string): string[] {
  const start = readme.indexOf(`\n## ${title}\n`);
  assert.notEqual(start, -1, `README has no section "${title}"`);
  const end = readme.indexOf('\n## ', start + 4);
  const section = readme.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/\n```sh\n([\s\S]*?)\n```\n/g)].map((m) => m[1]!);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

const root = tempDir('readme');
const prefix = path.join(root, 'prefix');

before(() => {
  const pack = spawnSync('npm', ['pack', '--pack-destination', root, '--json', '--ignore-scripts'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000 });
  assert.equal(pack.status, 0, pack.stderr);
  const tarball = path.join(root, (JSON.parse(pack.stdout) as { filename: string }[])[0]!.filename);
  const t0 = Date.now();
  const inst = spawnSync('npm', ['install', '-g', '--prefix', prefix, tarball, '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 900_000,
  });
  assert.equal(inst.status, 0, `${inst.stdout}\n${inst.stderr}`);
  process.stderr.write(`readme-walkthrough: npm install -g of the packed package took ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
});

test('the README walkthrough runs as written after npm pack and a global install', { timeout: 600_000 }, async () => {
  const engine = await ensureEngine();
  const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const blocks = SECTIONS.flatMap((t) => shellBlocks(readme, t));
  assert.ok(blocks.length >= 3, 'the walkthrough sections have their shell blocks');
  const port = await freePort();
  const walkthrough = blocks.join('\n').replaceAll('127.0.0.1:8421', `127.0.0.1:${port}`);
  const script = `set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\nset -x\n${walkthrough}\n`;
  const home = path.join(root, 'home');
  fs.mkdirSync(home);
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(AGENTSCM_|XDG_|npm_|TREE_RING_)/i.test(k)) env[k] = v;
  Object.assign(env, {
    HOME: home,
    PATH: `${path.join(prefix, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`,
    npm_config_prefix: prefix,
    DOCKER_HOST: engine.endpoint.url,
  });
  const r = spawnSync('bash', ['-c', script], { cwd: root, env, encoding: 'utf8', timeout: 540_000 });
  const tail = (t: string) => t.split('\n').slice(-60).join('\n');
  assert.equal(r.status, 0, `the walkthrough stopped (exit ${r.status}); its last lines:\n${tail(r.stderr)}\n--- stdout:\n${tail(r.stdout)}`);
  // The last qualification (exit 0 only when qualified) ran and said so.
  assert.match(r.stdout, /^qualified: true$/m);
  assert.match(r.stdout, /collected task-[0-9a-f]+: passed \(exit 0\)/);
  // The program ran is the installed one.
  assert.match(r.stderr, new RegExp(`\\+ E=${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/lib/node_modules/agentscm/examples`));
});
