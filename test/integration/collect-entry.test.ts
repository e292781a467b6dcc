// `agent-task collect`'s one-file entry (bin/agentscm.js -> dist/bundles/agentscm-collect-entry.cjs): for
// every invocation the launcher hands to it, the bytes on stdout and stderr and the exit code equal the
// full command table's (runProgram with AGENTSCM, in process); help and version flags run the full CLI.
// A preload records which of the two actually ran. A whole collection through this entry is what the
// collector tests run (test/integration/collector.test.ts starts collect through bin/agentscm.js).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { AGENTSCM, COMMANDS } from '../../src/entries/cli.js';
import { runProgram } from '../../src/cli/run.js';
import type { CommandContext } from '../../src/cli/types.js';
import { COLLECT_SPEC } from '../../src/entries/collect.js';
import { AGENTSCM_BIN, REPO_ROOT } from '../support/cli.js';

const ENTRY = path.join(REPO_ROOT, 'dist/bundles/agentscm-collect-entry.cjs');

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

function viaBin(cwd: string, argv: string[], env: NodeJS.ProcessEnv): Outcome & { fast: boolean } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'collect-entry-probe-'));
  const out = path.join(dir, 'loaded');
  const preload = path.join(dir, 'probe.cjs');
  fs.writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, String(Object.keys(require.cache).includes(${JSON.stringify(ENTRY)}))));\n`);
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

test('collect entry: the same bytes and exit codes as the command table, and only where it applies', async () => {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'collect-entry-'));
  const token = path.join(cwd, 'token');
  fs.writeFileSync(token, 'x'.repeat(40), { mode: 0o600 });
  const keys = path.join(cwd, 'keys');
  fs.mkdirSync(keys, { mode: 0o700 });
  // No engine is reached: every case fails on its arguments or its local state first.
  const env = { PATH: process.env.PATH, DOCKER_HOST: `unix://${path.join(cwd, 'no-engine.sock')}` };
  const call = ['--endpoint', 'http://127.0.0.1:9', '--repository', 'acme/demo', '--profile', 'default', '--token-file', token];
  const cases: Array<{ argv: string[]; fast: boolean }> = [
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
  ];
  for (const c of cases) {
    const label = c.argv.join(' ');
    const want = await viaTable(cwd, c.argv, env);
    const got = viaBin(cwd, c.argv, env);
    assert.equal(got.fast, c.fast, `entry taken: ${label}`);
    assert.deepEqual({ code: got.code, stdout: got.stdout, stderr: got.stderr }, want, label);
  }
});

test('collect entry: its spec is the table entry (the same module), and its bundle needs no package of ours at load', () => {
  const table = COMMANDS.find((c) => c.path.join(' ') === 'agent-task collect')!;
  const { load: _a, ...rest } = table;
  const { load: _b, ...fastRest } = COLLECT_SPEC;
  assert.deepEqual(fastRest, rest);
  const builtins = new Set(builtinModules);
  const text = fs.readFileSync(ENTRY, 'utf8');
  const required = [...new Set([...text.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]!))];
  // dockerode is the engine client (not bundled); ink and react only for the progress view on a
  // terminal (a lazy module, as in the full CLI).
  assert.deepEqual(required.filter((s) => !builtins.has(s.replace(/^node:/, ''))).sort(), ['dockerode', 'ink', 'react']);
  // The body stays a file of its own, loaded with its code cache; collect-flow.js only without it.
  assert.ok(!text.includes('collect_flow'), 'the body is not bundled into the entry');
});
