// `tree-ring recall`'s one-file fast path (bin/tree-ring.js -> dist/bundles/tree-ring-recall.cjs): for
// every invocation the launcher hands to it, the bytes on stdout and stderr and the exit code equal the
// full command table's (runProgram with TREE_RING, in process); invocations it must not take (help,
// hook words, other commands) run the full CLI. A preload records which of the two actually ran.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { COMMANDS, TREE_RING } from '../../src/entries/cli.js';
import { cacheFileOf, compileBody, readCodeCache } from '../../src/cli/code-cache.js';
import { runProgram } from '../../src/cli/run.js';
import type { CommandContext } from '../../src/cli/types.js';
import { RECALL_SPEC } from '../../src/entries/recall-spec.js';
import { REPO_ROOT, TREE_RING_BIN } from '../support/cli.js';
import { tempProject, tr } from '../support/treering.js';

const BUNDLE = path.join(REPO_ROOT, 'dist/bundles/tree-ring-recall.cjs');
const BODY = path.join(REPO_ROOT, 'dist/bundles/tree-ring-recall.body.cjs');

/** A preload that writes, at exit, whether the recall bundle was loaded (CommonJS modules only). */
function probeFile(): { preload: string; out: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tr-probe-'));
  const out = path.join(dir, 'loaded');
  const preload = path.join(dir, 'probe.cjs');
  fs.writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, String(Object.keys(require.cache).includes(${JSON.stringify(BUNDLE)}))));\n`);
  return { preload, out };
}

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

function viaBin(cwd: string, argv: string[], env: NodeJS.ProcessEnv): Outcome & { fast: boolean } {
  const probe = probeFile();
  const r = spawnSync(process.execPath, ['-r', probe.preload, TREE_RING_BIN, ...argv], { cwd, env, encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, fast: fs.readFileSync(probe.out, 'utf8') === 'true' };
}

async function viaTable(cwd: string, argv: string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const sink = (add: (s: string) => void) => ({ write: (c: string | Uint8Array) => (add(typeof c === 'string' ? c : Buffer.from(c).toString('utf8')), true) });
  const ctx: CommandContext = {
    stdout: sink((s) => (stdout += s)),
    stderr: sink((s) => (stderr += s)),
    stdin: process.stdin,
    env,
    cwd,
    program: 'tree-ring',
  };
  const code = await runProgram(TREE_RING, argv, ctx);
  return { code, stdout, stderr };
}

test('recall fast path: the same bytes and exit codes as the command table, and only where it applies', async () => {
  const p = tempProject();
  assert.equal(tr(p, ['init']).code, 0);
  const remember = (summary: string, extra: string[]) => assert.equal(tr(p, ['remember', summary, '--project', 'proj', ...extra]).code, 0);
  remember('Use reversible migrations for schema changes.', ['--event-type', 'decision', '--scope', 'project']);
  remember('Run the flaky login test twice before filing a bug.', ['--event-type', 'lesson', '--scope', 'project', '--ring', 'scar']);
  remember('Codex prefers small migrations in review.', ['--event-type', 'preference', '--scope', 'agent', '--agent-profile', 'codex']);
  remember('Patient diagnosis notes stay out of migrations.', ['--event-type', 'lesson', '--scope', 'project']);
  const root = path.join(p, '.tree-ring');
  const env = { PATH: process.env.PATH };
  const cases: Array<{ argv: string[]; fast: boolean; env?: NodeJS.ProcessEnv }> = [
    { argv: ['--root', root, 'recall', 'migrations', '--json'], fast: true },
    { argv: ['recall', 'migrations', '--root', root], fast: true },
    { argv: ['--json', `--root=${root}`, 'recall', 'migration failure bug'], fast: true },
    { argv: ['--root', root, 'recall', 'migrations', '--agent-profile', 'codex', '--scope', 'agent', '--json'], fast: true },
    { argv: ['--root', root, 'recall', 'migrations', '--json'], fast: true, env: { ...env, TREE_RING_AGENT_PROFILE: 'codex' } },
    { argv: ['--root', root, 'recall', 'migrations', '--include-sensitive', '--ring', 'cambium', '--ring', 'scar', '--limit', '100'], fast: true },
    { argv: ['--root', root, 'recall', 'zebras', '--json'], fast: true },
    { argv: ['--root', root, 'recall', 'zebras'], fast: true },
    { argv: ['recall', 'migrations'], fast: true },
    { argv: ['--root', root, 'recall'], fast: true },
    { argv: ['--root', root, 'recall', 'x', '--limit', 'many'], fast: true },
    { argv: ['--root', root, 'recall', 'x', '--bogus', '--json'], fast: true },
    { argv: ['--root', root, 'recall', 'a', 'b'], fast: true },
    { argv: ['--root', path.join(p, 'nowhere'), 'recall', 'x', '--json'], fast: true },
    { argv: ['--root'], fast: false },
    { argv: ['--root', root, 'recall', 'migrations', '--help'], fast: false },
    { argv: ['--root', root, 'recall', 'integrations', 'hook'], fast: false },
    { argv: ['--root', root, 'forget'], fast: false },
    { argv: ['--version', 'recall', 'x'], fast: false },
  ];
  let sawResults = 0;
  for (const c of cases) {
    const e = c.env ?? env;
    // Recency is scored from the clock in whole seconds, so the process run is taken between two
    // in-process runs: it must equal one of them (both, unless a second boundary fell in between).
    const before = await viaTable(p, c.argv, e);
    const got = viaBin(p, c.argv, e);
    const after = await viaTable(p, c.argv, e);
    const label = c.argv.join(' ');
    assert.equal(got.fast, c.fast, `fast path taken: ${label}`);
    const outcome = { code: got.code, stdout: got.stdout, stderr: got.stderr };
    assert.deepEqual(outcome, isDeepStrictEqual(outcome, before) ? before : after, label);
    if (c.argv.includes('--json') && got.code === 0 && got.stdout.startsWith('[{')) sawResults++;
  }
  assert.ok(sawResults >= 4, 'the cases include real results, not only empty answers');
  assert.ok(cases.some((c) => c.fast && c.argv.includes('--bogus')), 'and errors');
});

test('recall fast path: its spec equals the table entry, and its bundle needs only built-ins', () => {
  const table = COMMANDS.find((c) => c.path.join(' ') === 'tree-ring recall')!;
  const { load: _a, path: tablePath, ...rest } = table;
  const { load: _b, path: fastPath, ...fastRest } = RECALL_SPEC;
  assert.deepEqual(fastPath, tablePath.slice(1));
  assert.deepEqual(fastRest, rest);
  const builtins = new Set(builtinModules);
  // The entry is a loader; the body holds the command (src/cli/code-cache.ts).
  const required = [...new Set([BUNDLE, BODY].flatMap((f) => [...fs.readFileSync(f, 'utf8').matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]!)))];
  assert.deepEqual(required.filter((s) => !builtins.has(s.replace(/^node:/, ''))), ['bindings']);
});

test('recall fast path: the build stores a code cache of its body that this Node accepts', () => {
  const cache = readCodeCache(cacheFileOf(BODY));
  assert.ok(cache && cache.length > 0, 'npm run build writes the code cache');
  assert.equal(compileBody(BODY, cache).cachedDataRejected, false);
});
