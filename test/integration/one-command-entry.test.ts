// The one-file entries of single commands (bin/agentscm.js -> dist/bundles/agentscm-<command>-entry.cjs,
// a loader of its `.body.cjs` with a code cache): for every invocation the launcher hands to one, the
// bytes on stdout and stderr and the exit code equal the full command table's (runProgram with AGENTSCM,
// in process); help and version flags run the full CLI. A preload records which of the two actually
// ran. A whole collection through collect's entry is what the collector tests run
// (test/integration/collector.test.ts starts collect through bin/agentscm.js); checkpoints through
// checkpoint's entry run in most integration tests.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { AGENTSCM, COMMANDS } from '../../src/entries/cli.js';
import { runProgram } from '../../src/cli/run.js';
import type { CommandContext, CommandSpec } from '../../src/cli/types.js';
import { CHECKPOINT_SPEC } from '../../src/entries/checkpoint.js';
import { COLLECT_SPEC } from '../../src/entries/collect.js';
import { exampleAuthority } from '../../scripts/example-authority.js';
import { AGENTSCM_BIN, REPO_ROOT } from '../support/cli.js';
import { copyTree } from '../support/files.js';

const bundle = (name: string) => path.join(REPO_ROOT, 'dist/bundles', name);
const COLLECT = bundle('agentscm-collect-entry.cjs');
const CHECKPOINT = bundle('agentscm-checkpoint-entry.cjs');

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs argv through the launcher; `fast`: whether the entry's loader ran. */
function viaBin(entry: string, cwd: string, argv: string[], env: NodeJS.ProcessEnv): Outcome & { fast: boolean } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'one-command-entry-probe-'));
  const out = path.join(dir, 'loaded');
  const preload = path.join(dir, 'probe.cjs');
  fs.writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, String(Object.keys(require.cache).includes(${JSON.stringify(entry)}))));\n`);
  const r = spawnSync(process.execPath, ['-r', preload, AGENTSCM_BIN, ...argv], { cwd, env, encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, fast: fs.readFileSync(out, 'utf8') === 'true' };
}

async function viaTable(cwd: string, argv: string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const sink = (add: (s: string) => void) => ({ write: (c: string | Uint8Array) => (add(typeof c === 'string' ? c : Buffer.from(c).toString('utf8')), true) });
  const ctx: CommandContext = { stdout: sink((s) => (stdout += s)), stderr: sink((s) => (stderr += s)), stdin: process.stdin, env, cwd, program: 'agentscm' };
  const code = await runProgram(AGENTSCM, argv, ctx);
  return { code, stdout, stderr };
}

async function sameAsTable(entry: string, cwd: string, env: NodeJS.ProcessEnv, cases: ReadonlyArray<{ argv: string[]; fast: boolean; code?: number }>, before?: () => void): Promise<void> {
  for (const c of cases) {
    const label = c.argv.join(' ');
    before?.();
    const want = await viaTable(cwd, c.argv, env);
    before?.();
    const got = viaBin(entry, cwd, c.argv, env);
    assert.equal(got.fast, c.fast, `entry taken: ${label}`);
    if (c.code !== undefined) assert.equal(got.code, c.code, `exit code: ${label}`);
    assert.deepEqual({ code: got.code, stdout: got.stdout, stderr: got.stderr }, want, label);
  }
}

/** The packages an entry's body requires at run time, other than Node's builtins. */
function requiredPackages(entry: string): string[] {
  const builtins = new Set(builtinModules);
  const text = fs.readFileSync(entry.replace(/\.cjs$/, '.body.cjs'), 'utf8');
  const required = [...new Set([...text.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]!))];
  return required.filter((s) => !builtins.has(s.replace(/^node:/, ''))).sort();
}

function sameSpec(fast: CommandSpec): void {
  const table = COMMANDS.find((c) => c.path.join(' ') === fast.path.join(' '))!;
  const { load: _a, ...rest } = table;
  const { load: _b, ...fastRest } = fast;
  assert.deepEqual(fastRest, rest);
}

test('collect entry: the same bytes and exit codes as the command table, and only where it applies', async () => {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'collect-entry-'));
  const token = path.join(cwd, 'token');
  fs.writeFileSync(token, 'x'.repeat(40), { mode: 0o600 });
  const keys = path.join(cwd, 'keys');
  fs.mkdirSync(keys, { mode: 0o700 });
  // No engine is reached: every case fails on its arguments or its local state first.
  const env = { PATH: process.env.PATH, DOCKER_HOST: `unix://${path.join(cwd, 'no-engine.sock')}` };
  const call = ['--endpoint', 'http://127.0.0.1:9', '--repository', 'acme/demo', '--profile', 'default', '--token-file', token];
  await sameAsTable(COLLECT, cwd, env, [
    { argv: ['agent-task', 'collect'], fast: true },
    { argv: ['agent-task', 'collect', 'c1', '--json'], fast: true },
    { argv: ['agent-task', 'collect', 'c1', '--bogus'], fast: true },
    { argv: ['agent-task', 'collect', 'c1', '--attempt-id'], fast: true },
    { argv: ['agent-task', 'collect', 'c1', 'c2', '--data-dir', cwd, ...call, '--attempt-id', 'a1', '--key-dir', keys], fast: true },
    { argv: ['agent-task', 'collect', 'c1', '--data-dir', path.join(cwd, 'missing'), ...call, '--attempt-id', 'a1', '--key-dir', keys, '--json'], fast: true },
    { argv: ['agent-task', 'collect', 'c1', '--data-dir', cwd, ...call, '--attempt-id', 'not an id', '--key-dir', keys], fast: true },
    { argv: ['agent-task', 'collect', 'c1', '--data-dir', cwd, ...call, '--attempt-id', 'a1', '--key-dir', keys, '--state-dir', path.join(cwd, 'a:b')], fast: true },
    { argv: ['agent-task', 'collect', '--help'], fast: false },
    { argv: ['agent-task', 'collect', 'c1', '-h'], fast: false },
    { argv: ['agent-task', 'collect', 'c1', '--version'], fast: false },
    { argv: ['agent-task', 'status', '--help'], fast: false },
  ]);
});

test('checkpoint entry: the same bytes and exit codes as the command table (a real checkpoint among them), and only where it applies', async () => {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'checkpoint-entry-'));
  const dataDir = path.join(cwd, 'data');
  exampleAuthority(dataDir, { owner: 'alice', agent: 'entry' });
  const ws = path.join(cwd, 'ws');
  fs.cpSync(path.join(REPO_ROOT, 'examples', 'workspace'), ws, { recursive: true });
  const env = { PATH: process.env.PATH };
  const base = ['--repository', 'acme/demo', '--profile', 'default', '--workspace', ws];
  // Each run of a case starts from the same store and workspace: a checkpoint through the table and one
  // through the entry then make the same Change version of the same bytes (the data dir is copied back).
  const pristine = path.join(cwd, 'pristine');
  copyTree(dataDir, pristine);
  const reset = () => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    copyTree(pristine, dataDir);
  };
  await sameAsTable(
    CHECKPOINT,
    cwd,
    env,
    [
      { argv: ['checkpoint'], fast: true },
      { argv: ['checkpoint', 'c1', '--json'], fast: true },
      { argv: ['checkpoint', 'c1', '--bogus'], fast: true },
      { argv: ['checkpoint', 'c1', '--data-dir', dataDir, ...base.slice(0, -1)], fast: true },
      { argv: ['checkpoint', 'not an id', '--data-dir', dataDir, ...base], fast: true },
      { argv: ['checkpoint', 'c1', '--data-dir', path.join(cwd, 'missing'), ...base, '--json'], fast: true },
      { argv: ['checkpoint', 'c1', '--data-dir', dataDir, '--repository', 'acme/demo', '--profile', 'nope', '--workspace', ws], fast: true },
      { argv: ['checkpoint', 'c1', '--data-dir', dataDir, ...base.slice(0, -1), path.join(cwd, 'no-such-dir')], fast: true },
      { argv: ['checkpoint', 'c1', '--data-dir', dataDir, ...base, '--json'], fast: true, code: 0 },
      { argv: ['checkpoint', 'c1', '--data-dir', dataDir, ...base], fast: true, code: 0 },
      { argv: ['checkpoint', '--help'], fast: false },
      { argv: ['checkpoint', 'c1', '-h'], fast: false },
      { argv: ['checkpoint', 'c1', '--version'], fast: false },
      // A data dir before the command, as the full CLI takes it: the launcher does not look for it.
      { argv: ['--data-dir', dataDir, 'checkpoint', 'c1', ...base, '--json'], fast: false, code: 0 },
    ],
    reset,
  );
});

test('one-command entries: each spec is the table entry (the same module), and the bodies need no package of ours at load', () => {
  sameSpec(COLLECT_SPEC);
  sameSpec(CHECKPOINT_SPEC);
  // dockerode is the engine client (not bundled); ink and react only for the progress view on a
  // terminal (a lazy module, as in the full CLI).
  assert.deepEqual(requiredPackages(COLLECT), ['dockerode', 'ink', 'react']);
  // collect's body stays a file of its own, loaded with its code cache; collect-flow.js only without it.
  assert.ok(!fs.readFileSync(COLLECT.replace(/\.cjs$/, '.body.cjs'), 'utf8').includes('collect_flow'), 'the body is not bundled into the entry');
  // checkpoint's body carries everything, better-sqlite3's JavaScript included: only its addon is loaded
  // from the installed package (`bindings` is what better-sqlite3 would load it with when not handed it).
  assert.deepEqual(requiredPackages(CHECKPOINT), ['bindings']);
});
