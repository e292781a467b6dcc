// Whole-process Stop hook time: `agentscm skill-workflow task-codex-stop` as Codex runs it (payload on
// stdin) against a real local `hub serve`, alternating with bare `node -e 0` in the same run. Each hook
// run does the full check: counter, authority read, workspace state and file scan before and after,
// one qualification call over HTTP, and the block answer with its durable counter update. The Hub
// serves with a receipt key and the hook pins it (--hub-key), as install-stop sets it up: each run also
// sends a fresh nonce and verifies the Hub's Ed25519 signature of the answer.
// Target: median ratio <= 2.0.
//
// Reported beside, with no target: the floor of the parts the hook is built on (floor below), run in the
// same alternation.

import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, type BenchResult } from './stats.js';
import { exampleCheckpointedWorkspace } from '../scripts/example-authority.js';
import { forwardDiagnostics } from './hub-log.js';
import { readCurrentSubjectUnchecked } from '../src/core/authority/read-only.js';
import { subjectToJson } from '../src/core/authority/plan.js';
import { opPath } from '../test/support/hub-http.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TARGET = 2.0;

function timeRun(args: readonly string[], input: string, env: NodeJS.ProcessEnv, want: (stdout: string) => boolean): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, input, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0 || !want(String(r.stdout))) throw new Error(`${args.join(' ')} exited ${r.status}: ${String(r.stdout)} ${String(r.stderr)}`);
  return ms;
}

/**
 * The least a Stop hook does with the parts it must use (issue 21: better-sqlite3 opened read-only, one
 * node:http request, node:crypto): better-sqlite3 (bundled, as the hook's body carries it, but with no
 * code cache) opens both stores read-only and reads a row of each, one SHA-256 and a fresh nonce, one
 * node:http POST of the hook's own qualification request to the same Hub, the answer parsed and one
 * Ed25519 verification of its signature (over other bytes: the cost, not the check), a block answer
 * printed. No counter, no workspace scan, no checks: what is left of the hook's time above this is its
 * own work.
 */
const FLOOR_SOURCE = `
const Database = require('better-sqlite3');
const crypto = require('node:crypto');
const http = require('node:http');
const path = require('node:path');
const [dataDir, url, tokenFile, requestFile, addon, hubKey] = process.argv.slice(2);
for (const [file, sql] of [['authority.sqlite', 'SELECT name FROM sqlite_master LIMIT 1'], ['workspaces.sqlite', 'SELECT name FROM sqlite_master LIMIT 1']]) {
  const db = new Database(path.join(dataDir, file), { readonly: true, fileMustExist: true, nativeBinding: addon });
  db.prepare(sql).get();
  db.close();
}
const token = require('node:fs').readFileSync(tokenFile, 'utf8').trim();
const request = JSON.parse(require('node:fs').readFileSync(requestFile, 'utf8'));
request.nonce = crypto.randomBytes(32).toString('hex');
const body = JSON.stringify(request);
crypto.createHash('sha256').update(body).digest('hex');
const key = crypto.createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(hubKey, 'hex')]), format: 'der', type: 'spki' });
const req = http.request(url, { method: 'POST', headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json', accept: 'application/json' } }, (res) => {
  const chunks = [];
  res.on('data', (c) => chunks.push(c));
  res.on('end', () => {
    const raw = Buffer.concat(chunks);
    const answer = JSON.parse(raw.toString('utf8'));
    const sig = Buffer.from(answer.hub_signature.sig, 'hex');
    crypto.verify(null, crypto.createHash('sha256').update(raw).digest(), key, sig);
    process.stdout.write(JSON.stringify({ decision: 'block', reason: String(answer.qualified) }) + '\\n');
  });
});
req.end(body);
`;

/** FLOOR_SOURCE bundled into dir (esbuild, as the build bundles the hook), with its arguments after the script. */
async function floorCommand(dir: string, dataDir: string, url: string, tokenFile: string, hubKey: string): Promise<string[]> {
  const { buildSync } = await import('esbuild');
  const script = path.join(dir, 'floor.cjs');
  buildSync({ stdin: { contents: FLOOR_SOURCE, resolveDir: ROOT, loader: 'js' }, bundle: true, platform: 'node', format: 'cjs', outfile: script, logLevel: 'error' });
  const requestFile = path.join(dir, 'floor-request.json');
  const { subject } = readCurrentSubjectUnchecked(dataDir, 'acme/demo', 'default', 'c1');
  fs.writeFileSync(requestFile, JSON.stringify({ operation: 'qualification', subject: subjectToJson(subject) }));
  const addon = path.join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
  return [script, dataDir, `${url}${opPath('acme/demo', 'default')}`, tokenFile, requestFile, addon, hubKey];
}

export async function run(options: { runs?: number; warmup?: number } = {}): Promise<BenchResult> {
  const runs = options.runs ?? 30;
  const warmup = options.warmup ?? 5;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-bench-stop-'));
  const { dataDir, tokenFile, ws } = exampleCheckpointedWorkspace(root, { owner: 'alice', agent: 'bench' });

  const keyDir = path.join(root, 'receipt-key');
  const key = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'agentscm.js'), 'agent-task', 'key', 'generate', '--key-dir', keyDir, '--json'], { encoding: 'utf8' });
  if (key.status !== 0) throw new Error(`key generate failed: ${key.stderr}`);
  const hubKey = String((JSON.parse(key.stdout) as { public_key: string }).public_key);
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'agentscm.js'), 'hub', 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--receipt-key-dir', keyDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  forwardDiagnostics(child);
  const url = await new Promise<string>((resolve) => child.stdout.once('data', (c: Buffer) => resolve(c.toString().split('\n')[0]!)));
  // What install-stop registers: the one-file bundle when it was built, else the launcher.
  const bundle = path.join(ROOT, 'dist', 'bundles', 'agentscm-stop-hook.cjs');
  const entry = fs.existsSync(bundle) ? bundle : path.join(ROOT, 'bin', 'agentscm.js');
  const hook = [
    entry, '--data-dir', dataDir, 'skill-workflow', 'task-codex-stop', 'c1', '--endpoint', url,
    '--repository', 'acme/demo', '--profile', 'default', '--token-file', tokenFile, '--workspace', ws, '--hub-key', hubKey,
  ];
  const env = { PATH: process.env.PATH, AGENTSCM_STATE_DIR: path.join(root, 'state') };
  let seq = 0;
  const payload = () =>
    JSON.stringify({
      session_id: `bench-${++seq}`, turn_id: 't', transcript_path: null, cwd: ws, hook_event_name: 'Stop', model: 'm',
      permission_mode: 'bypassPermissions', stop_hook_active: false, last_assistant_message: null,
    });
  // A block that is not about the signature: the pinned key verified the answer.
  const blocks = (out: string) => out.startsWith('{"decision":"block"') && !out.includes('answer not signed');
  const bare = ['-e', '0'];
  const h: number[] = [];
  const b: number[] = [];
  const f: number[] = [];
  try {
    const floor = await floorCommand(root, dataDir, url, tokenFile, hubKey);
    const floorBlocks = (out: string) => out === '{"decision":"block","reason":"false"}\n';
    const sides = [() => h.push(timeRun(hook, payload(), env, blocks)), () => b.push(timeRun(bare, '', env, () => true)), () => f.push(timeRun(floor, '', env, floorBlocks))];
    for (let i = 0; i < warmup; i++) for (const side of sides) side();
    h.length = b.length = f.length = 0;
    // Each round in another order, so that no side always follows the same one.
    for (let i = 0; i < runs; i++) for (let j = 0; j < sides.length; j++) sides[(i + j) % sides.length]!();
  } finally {
    child.kill('SIGTERM');
    fs.rmSync(root, { recursive: true, force: true });
  }
  const ratio = median(h) / median(b);
  return {
    name: 'stop-hook',
    lines: [
      `task-codex-stop (block, local Hub, pinned key)  median ${median(h).toFixed(1)} ms  (min ${Math.min(...h).toFixed(1)}, max ${Math.max(...h).toFixed(1)}, n=${runs})`,
      `node -e 0                                       median ${median(b).toFixed(1)} ms  (min ${Math.min(...b).toFixed(1)}, max ${Math.max(...b).toFixed(1)}, n=${runs})`,
      `ratio ${ratio.toFixed(3)} (target <= ${TARGET}): ${ratio <= TARGET ? 'met' : 'MISSED'}`,
      `reported: floor of the parts (better-sqlite3 read-only, one node:http request, node:crypto)  median ${median(f).toFixed(1)} ms  (min ${Math.min(...f).toFixed(1)}, max ${Math.max(...f).toFixed(1)}): ${(median(f) / median(b)).toFixed(3)}x bare node; the hook ${(median(h) / median(f)).toFixed(3)}x the floor`,
    ],
    ok: ratio <= TARGET,
  };
}
