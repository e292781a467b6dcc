import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { AGENTSCM, TREE_RING } from '../../src/entries/cli.js';
import { parseArgv } from '../../src/cli/argv.js';
import { runProgram, type Program } from '../../src/cli/run.js';
import type { CommandContext } from '../../src/cli/types.js';
import { AGENTSCM_VERSION, TREE_RING_VERSION } from '../../src/version.js';
import { agentscm, json, REPO_ROOT, treeRing } from '../support/cli.js';

test('version constant matches package.json', () => {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(AGENTSCM_VERSION, pkg.version);
});

test('--version names both programs', () => {
  const r = agentscm(['--version']);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, `agentscm ${AGENTSCM_VERSION} (tree-ring ${TREE_RING_VERSION})\n`);
  // The launchers answer a bare --version without loading the table; the full path must agree.
  assert.equal(agentscm(['--json', '--version']).stdout, r.stdout);
  const t = treeRing(['--version']);
  assert.equal(t.code, 0);
  assert.equal(t.stdout, `tree-ring ${TREE_RING_VERSION}\n`);
  assert.equal(treeRing(['--json', '--version']).stdout, t.stdout);
});

test('unknown command and option are usage errors (exit 2), JSON error when --json', () => {
  const r = agentscm(['no-such-command']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown command "no-such-command"/);
  const j = agentscm(['agent-task', 'key', 'show', '--bogus', '--json']);
  assert.equal(j.code, 2);
  assert.deepEqual(json<{ error: { kind: string; exit_code: number } }>(j).error.kind, 'USAGE');
});

test('missing required option is a usage error', () => {
  const r = agentscm(['agent-task', 'key', 'generate']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /missing required option --key-dir/);
});

/** Runs argv through the command table in process: exit code, stdout, stderr. */
async function inProcess(program: Program, argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const ctx: CommandContext = {
    stdout: { write: (c: string | Uint8Array) => (stdout += String(c)) },
    stderr: { write: (c: string | Uint8Array) => (stderr += String(c)) },
    stdin: process.stdin,
    env: {},
    cwd: REPO_ROOT,
    program: program.name,
  };
  const code = await runProgram(program, argv, ctx);
  return { code, stdout, stderr };
}

test('a mistyped command or option gets a "did you mean" on its one error line, exit 2', async () => {
  const cases: [Program, string[], string][] = [
    [AGENTSCM, ['agent-tsk'], 'agentscm: error: unknown command "agent-tsk" (did you mean agent-task?)\n'],
    [AGENTSCM, ['agent-task', 'key', 'genrate'], 'agentscm: error: unknown command "agent-task key genrate" (did you mean generate?)\n'],
    [AGENTSCM, ['agent-task', 'key', 'generate', '--key-dri', 'k'], 'agentscm: error: unknown option --key-dri for "agent-task key generate" (did you mean --key-dir?)\n'],
    [AGENTSCM, ['agent-task', '--jsno'], 'agentscm: error: unknown option --jsno for "agent-task" (did you mean --json?)\n'],
    [AGENTSCM, ['zzzzzz'], 'agentscm: error: unknown command "zzzzzz" (see --help)\n'],
    [TREE_RING, ['recal', 'x'], 'error: unknown command "recal" (did you mean recall?)\n'],
    [TREE_RING, ['recall', 'x', '--lmit', '3'], 'error: unknown option --lmit for "recall" (did you mean --limit?)\n'],
  ];
  for (const [program, argv, stderr] of cases) {
    const r = await inProcess(program, argv);
    assert.deepEqual(r, { code: 2, stdout: '', stderr }, argv.join(' '));
  }
  // With --json the same message is the error document on stdout.
  const j = await inProcess(AGENTSCM, ['--json', 'agent-tsk']);
  assert.equal(j.code, 2);
  assert.equal(json<{ error: { message: string } }>(j).error.message, 'unknown command "agent-tsk" (did you mean agent-task?)');
});

test('no command: the help text (exit 0), but with --json a JSON usage error (exit 2); --help is always the text', async () => {
  const help = await inProcess(AGENTSCM, []);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^usage: agentscm /m);
  for (const [argv, message] of [
    [['--json'], 'a command is required (see --help)'],
    [['authority', '--json'], '"authority" needs a command (see agentscm authority --help)'],
    [['--json', 'authority', 'token'], '"authority token" needs a command (see agentscm authority token --help)'],
  ] as const) {
    const r = await inProcess(AGENTSCM, [...argv]);
    assert.equal(r.code, 2, argv.join(' '));
    assert.deepEqual(json<{ error: { kind: string; message: string } }>(r).error, { kind: 'USAGE', code: 'USAGE', message, exit_code: 2 });
  }
  for (const argv of [['--help', '--json'], ['authority', '--json', '--help'], ['-h', '--json']]) {
    const r = await inProcess(AGENTSCM, argv);
    assert.equal(r.code, 0, argv.join(' '));
    assert.match(r.stdout, /^usage: agentscm /m, argv.join(' '));
  }
});

test('option values, switches, repeats and leading options are checked as documented', async () => {
  const usage = async (argv: string[], message: string) => {
    const r = await inProcess(AGENTSCM, argv);
    assert.deepEqual(r, { code: 2, stdout: '', stderr: `agentscm: error: ${message}\n` }, argv.join(' '));
  };
  await usage(['agent-task', 'key', 'generate', '--key-dir'], '--key-dir needs a value (DIR)');
  await usage(['agent-task', 'key', 'generate', '--key-dir', 'a', '--key-dir', 'b'], '--key-dir given more than once');
  await usage(['agent-task', 'key', 'generate', '--key-dir', 'a', '--json=yes'], '--json takes no value');
  await usage(['agent-task', 'key', 'generate', '-k', 'a'], 'unknown option -k for "agent-task key generate" (see --help)');
  await usage(['--data-dir', 'd', 'agent-task', 'key', 'generate', '--key-dir', 'a'], '--data-dir does not apply to "agent-task key generate"');
  await usage(['agent-task', 'collect'], 'missing argument CHANGE');
  await usage(['agent-task', 'collect', 'c1', 'c2'], 'unexpected argument "c2"');
  await usage(['agent-task', 'collect', 'c1'], 'missing required option --data-dir DIR');
  // A mistyped option is named as such, not as the required option it was meant to be.
  await usage(['agent-task', 'collect', 'c1', '--data-dri', 'd'], 'unknown option --data-dri for "agent-task collect" (did you mean --data-dir?)');
  // commander's implicit `help` command is not one of ours.
  await usage(['help'], 'unknown command "help" (see --help)');
  // The hooks' usage errors exit 1 (a host reads 2 as "block").
  const hook = await inProcess(AGENTSCM, ['skill-workflow', 'task-stop', '--bogus']);
  assert.deepEqual(hook, { code: 1, stdout: '', stderr: 'agentscm: hook error: usage\n' });
  const trHook = await inProcess(TREE_RING, ['integrations', 'hook', '--harnes', 'codex']);
  assert.deepEqual(trHook, { code: 1, stdout: '', stderr: 'tree-ring: hook error: usage\n' });
});

test('--help: before the words it helps the words that follow; after a verb it answers at once', async () => {
  const group = await inProcess(AGENTSCM, ['--help', 'agent-task', 'key']);
  assert.equal(group.code, 0);
  assert.match(group.stdout, /^usage: agentscm agent-task key <command> \[options\]\n/);
  assert.deepEqual(await inProcess(AGENTSCM, ['agent-task', 'key']), group, 'a group without a verb shows its help');
  const verb = await inProcess(AGENTSCM, ['agent-task', 'key', 'generate', '-h', '--bogus']);
  assert.equal(verb.code, 0);
  assert.match(verb.stdout, /^usage: agentscm agent-task key generate --key-dir DIR/);
  assert.deepEqual(await inProcess(AGENTSCM, ['--json', '--help', 'agent-task', 'key', 'generate']), verb);
  const tr = await inProcess(TREE_RING, ['--root', 'r', 'recall', '--help']);
  assert.equal(tr.code, 0);
  assert.match(tr.stdout, /^usage: tree-ring recall QUERY/);
});

test('parse: leading or trailing --root/--json, a lone "-" and what follows "--" are operands', () => {
  const inv = (argv: string[]) => {
    const p = parseArgv(argv, TREE_RING.commands, TREE_RING.groups);
    if (p.kind !== 'command') throw new Error(`${argv.join(' ')}: ${p.kind}`);
    return { path: p.spec.path, ...p.inv };
  };
  const want = { path: ['recall'], args: ['q'], opts: { root: 'r' }, json: true };
  assert.deepEqual(inv(['--root', 'r', '--json', 'recall', 'q']), want);
  assert.deepEqual(inv(['recall', 'q', '--root', 'r', '--json']), want);
  assert.deepEqual(inv(['--json', 'recall', '--root=r', 'q']), want);
  // A later --root wins over a leading one.
  assert.deepEqual(inv(['--root', 'x', 'recall', 'q', '--root', 'r', '--json']), want);
  assert.deepEqual(inv(['recall', '-']).args, ['-']);
  assert.deepEqual(inv(['recall', '--', '--json']), { path: ['recall'], args: ['--json'], opts: {}, json: false });
  assert.deepEqual(inv(['recall', 'q', '--ring', 'outer', '--ring', 'cambium']).opts, { ring: ['outer', 'cambium'] });
  assert.deepEqual(inv(['recall', 'q', '--include-sensitive']).opts, { 'include-sensitive': true });
  // A `--no-X` flag of the table is a switch of its own: unset unless given, set once given.
  assert.deepEqual(inv(['welcome']).opts, {});
  assert.deepEqual(inv(['welcome', '--no-animation']).opts, { 'no-animation': true });
  assert.deepEqual(parseArgv(['--version'], TREE_RING.commands, TREE_RING.groups), { kind: 'version', path: [] });
  assert.deepEqual(parseArgv(['tree-ring', '--version'], AGENTSCM.commands, AGENTSCM.groups), { kind: 'version', path: ['tree-ring'] });
});
