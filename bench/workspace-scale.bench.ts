// Cost that grows with the work: a generated workspace of many small text files in a git work tree
// (default 20,000 files, about 4 MB; AGENTSCM_BENCH_FILES=100000 for the large size), in one run:
//   (1) whole-process `agentscm checkpoint` of the tree into a fresh data dir, against `git add -A` on
//       a fresh copy of the same tree in a new repository;
//   (2) a second checkpoint after touching one file, against `git add -A` after touching one file of
//       the copy;
//   (3) the Stop hook (task-codex-stop, against a real local `hub serve`) with one file touched since
//       the checkpoint, against `git status --porcelain` in the workspace plus a bare `node -e 0`.
// Reported beside, with no target: the same with one new file in place of another (its directory
// changes, so git lists that directory again): a third checkpoint against `git add -A` of a copy, and
// the Stop hook against the same baseline; and the Stop hook with the last file in manifest order
// touched instead (its first read stops at the first changed file, so this is its longest look).
// Medians over AGENTSCM_BENCH_ROUNDS rounds (default 3). Targets: each ratio <= 1.0.

import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, type BenchResult } from './stats.js';
import { exampleAuthority } from '../scripts/example-authority.js';
import { RACY_MARGIN_MS } from '../src/core/native/snapshot.js';
import { forwardDiagnostics } from './hub-log.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TARGET = 1.0;
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'value', 'index', 'count', 'result', 'buffer', 'node', 'tree', 'state', 'config', 'error', 'handler'];

/**
 * A source tree of `files` text files (120-280 bytes each, about 200 on average) in nested directories:
 * packages of 1,000 files, 40 modules each, five parts per module. Deterministic.
 */
function generate(root: string, files: number): void {
  let seed = 42;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const made = new Set<string>();
  // files - 1 text files and the .gitignore: exactly `files` files, so 100,000 stays within the snapshot bound.
  for (let i = 0; i < files - 1; i++) {
    const dir = path.join(root, 'packages', `pkg${Math.floor(i / 1000)}`, 'src', `mod${i % 40}`, `part${Math.floor(i / 40) % 5}`);
    if (!made.has(dir)) {
      fs.mkdirSync(dir, { recursive: true });
      made.add(dir);
    }
    let text = `// file ${i}\n`;
    const size = 120 + Math.floor(rnd() * 160);
    while (text.length < size) text += `export const ${WORDS[Math.floor(rnd() * WORDS.length)]}${i} = ${Math.floor(rnd() * 1e6)};\n`;
    fs.writeFileSync(path.join(dir, `f${i}.ts`), text);
  }
  fs.writeFileSync(path.join(root, '.gitignore'), 'node_modules/\n*.log\n');
}

const GIT_ENV = { GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@example.invalid', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@example.invalid' };

function git(cwd: string, ...args: string[]): void {
  const r = spawnSync('git', ['-c', 'init.defaultBranch=main', ...args], { cwd, env: { ...process.env, ...GIT_ENV }, stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${String(r.stderr)}`);
}

function timed(cmd: string, args: readonly string[], o: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv; want?: (stdout: string) => boolean } = {}): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd: o.cwd ?? ROOT, input: o.input ?? '', env: o.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0 || (o.want && !o.want(String(r.stdout)))) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${String(r.stdout).slice(0, 400)} ${String(r.stderr)}`);
  return ms;
}

/** Appends to one file (the same size class of edit an agent makes), so that its stat and bytes change. */
function touchOne(root: string, round: number): void {
  fs.appendFileSync(path.join(root, 'packages', 'pkg0', 'src', 'mod7', 'part0', 'f7.ts'), `// edit ${round}\n`);
}

/**
 * Adds one new file deep in the tree, as an agent adds a source file, so that its directory's stat
 * changes; the file added the round before (the first time, one of the generated files there) goes, so
 * that the tree keeps its count (at 100,000 files, the snapshot bound).
 */
function addOne(root: string, round: number): void {
  const dir = path.join(root, 'packages', 'pkg3', 'src', 'mod5', 'part2');
  fs.mkdirSync(dir, { recursive: true });
  const gone = round === 0 ? fs.readdirSync(dir).sort()[0] : `added${round - 1}.ts`;
  if (gone !== undefined) fs.rmSync(path.join(dir, gone));
  fs.writeFileSync(path.join(dir, `added${round}.ts`), `export const added${round} = ${round};\n`);
}

const ms = (xs: readonly number[]) => `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)}, n=${xs.length})`;

export async function run(): Promise<BenchResult> {
  const files = Number(process.env.AGENTSCM_BENCH_FILES ?? 20_000);
  const rounds = Number(process.env.AGENTSCM_BENCH_ROUNDS ?? 3);
  if (!Number.isSafeInteger(files) || files < 1 || !Number.isSafeInteger(rounds) || rounds < 1) throw new Error('AGENTSCM_BENCH_FILES and AGENTSCM_BENCH_ROUNDS are positive integers');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-bench-wsscale-'));
  const ws = path.join(root, 'ws');
  const tree = path.join(root, 'tree');
  generate(tree, files);
  fs.cpSync(tree, ws, { recursive: true });
  git(ws, 'init', '-q');
  git(ws, 'add', '-A');
  git(ws, 'commit', '-qm', 'generated');
  const bytes = fs.readdirSync(tree, { recursive: true, withFileTypes: true }).reduce((n, d) => (d.isFile() ? n + fs.statSync(path.join(d.parentPath, d.name)).size : n), 0);
  // The files are older than the racy margin, as a workspace's files mostly are.
  await new Promise((r) => setTimeout(r, RACY_MARGIN_MS + 100));

  const cli = path.join(ROOT, 'bin', 'agentscm.js');
  const checkpoint = (dataDir: string) =>
    timed(process.execPath, [cli, 'checkpoint', 'c1', '--data-dir', dataDir, '--repository', 'acme/demo', '--profile', 'default', '--workspace', ws, '--json']);
  const first: number[] = [];
  const second: number[] = [];
  const gitFirst: number[] = [];
  const gitSecond: number[] = [];
  const added: number[] = [];
  const gitAdded: number[] = [];
  const floors: number[] = [];
  // The floor of a second checkpoint on Node: a process that only lstat's each file and each of its
  // directories once with fs.lstatSync on one thread, the least the scan does (git add -A preloads its
  // index on two threads; Node has no other public lstat).
  const listFile = path.join(root, 'lstat-list');
  const listedFiles = String(spawnSync('git', ['ls-files', '-z'], { cwd: ws, maxBuffer: 64 << 20 }).stdout).split('\0').filter((p) => p !== '');
  const dirs = new Set<string>(['.']);
  for (const f of listedFiles) for (let d = path.dirname(f); d !== '.' && !dirs.has(d); d = path.dirname(d)) dirs.add(d);
  fs.writeFileSync(listFile, [...listedFiles, ...dirs].map((p) => path.join(ws, p)).join('\0'));
  const floor = () => timed(process.execPath, ['-e', 'const fs = require("node:fs"); for (const p of fs.readFileSync(process.argv[1], "utf8").split("\\0")) fs.lstatSync(p);', listFile]);
  let dataDir = '';
  let tokenFile = '';
  for (let i = 0; i < rounds; i++) {
    dataDir = path.join(root, `data-${i}`);
    const { token } = exampleAuthority(dataDir, { owner: 'alice', agent: 'bench' });
    tokenFile = path.join(root, `token-${i}`);
    fs.writeFileSync(tokenFile, token + '\n', { mode: 0o600 });
    const copy = path.join(root, `copy-${i}`);
    fs.cpSync(tree, copy, { recursive: true });
    git(copy, 'init', '-q');
    // Alternating which runs first, so that neither always meets a warmer page cache.
    if (i % 2 === 0) {
      first.push(checkpoint(dataDir));
      gitFirst.push(timed('git', ['add', '-A'], { cwd: copy }));
    } else {
      gitFirst.push(timed('git', ['add', '-A'], { cwd: copy }));
      first.push(checkpoint(dataDir));
    }
    touchOne(ws, i);
    touchOne(copy, i);
    second.push(checkpoint(dataDir));
    gitSecond.push(timed('git', ['add', '-A'], { cwd: copy }));
    floors.push(floor());
    fs.rmSync(copy, { recursive: true, force: true });
    if (i < rounds - 1) fs.rmSync(dataDir, { recursive: true, force: true });
  }

  // The Stop hook against the last data dir, with one file touched since its checkpoint.
  const hub = spawn(process.execPath, [cli, 'hub', 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  forwardDiagnostics(hub);
  const hooks: number[] = [];
  const bases: number[] = [];
  const addedHooks: number[] = [];
  const addedBases: number[] = [];
  const lastHooks: number[] = [];
  const lastBases: number[] = [];
  try {
    const url = await new Promise<string>((resolve) => hub.stdout.once('data', (c: Buffer) => resolve(c.toString().split('\n')[0]!)));
    const bundle = path.join(ROOT, 'dist', 'bundles', 'agentscm-stop-hook.cjs');
    const entry = fs.existsSync(bundle) ? bundle : cli;
    const hookArgs = [entry, '--data-dir', dataDir, 'skill-workflow', 'task-codex-stop', 'c1', '--endpoint', url, '--repository', 'acme/demo', '--profile', 'default', '--token-file', tokenFile, '--workspace', ws];
    const env = { PATH: process.env.PATH, AGENTSCM_STATE_DIR: path.join(root, 'state') };
    let seq = 0;
    const payload = () =>
      JSON.stringify({ session_id: `bench-${++seq}`, turn_id: 't', transcript_path: null, cwd: ws, hook_event_name: 'Stop', model: 'm', permission_mode: 'bypassPermissions', stop_hook_active: false, last_assistant_message: null });
    // A dirty workspace blocks with next checkpoint: the whole check runs, the edit is found.
    const dirty = (out: string) => out.startsWith('{"decision":"block"') && out.includes('workspace_dirty');
    touchOne(ws, rounds);
    const hookOnce = () => timed(process.execPath, hookArgs, { input: payload(), env, want: dirty });
    const baseOnce = () => timed('git', ['status', '--porcelain'], { cwd: ws }) + timed(process.execPath, ['-e', '0'], { env });
    hookOnce();
    baseOnce();
    const alternate = (hs: number[], bs: number[]) => {
      for (let i = 0; i < Math.max(rounds, 5); i++) {
        if (i % 2 === 0) {
          hs.push(hookOnce());
          bs.push(baseOnce());
        } else {
          bs.push(baseOnce());
          hs.push(hookOnce());
        }
      }
    };
    alternate(hooks, bases);
    // One new file, after the measures with a target: its checkpoints, each made right after a
    // directory changed, leave that directory racily clean, and every later read lists it again.
    const copy = path.join(root, 'copy-added');
    fs.cpSync(tree, copy, { recursive: true });
    git(copy, 'init', '-q');
    git(copy, 'add', '-A');
    for (let i = 0; i < rounds; i++) {
      addOne(ws, i);
      addOne(copy, i);
      added.push(checkpoint(dataDir));
      gitAdded.push(timed('git', ['add', '-A'], { cwd: copy }));
    }
    addOne(ws, rounds);
    alternate(addedHooks, addedBases);
    // The touched file of the measures above comes early in manifest order, and the hook's first read
    // stops at the first changed file: here the last file in that order is the one touched, so that
    // read looks at every file before it finds it.
    checkpoint(dataDir);
    await new Promise((r) => setTimeout(r, RACY_MARGIN_MS + 100));
    const listed = String(spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: ws, maxBuffer: 64 << 20 }).stdout).split('\0').filter((p) => p !== '');
    const last = listed.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))).at(-1)!;
    fs.appendFileSync(path.join(ws, last), '// edit\n');
    alternate(lastHooks, lastBases);
  } finally {
    hub.kill('SIGTERM');
    fs.rmSync(root, { recursive: true, force: true });
  }
  const r1 = median(first) / median(gitFirst);
  const r2 = median(second) / median(gitSecond);
  const r3 = median(hooks) / median(bases);
  const verdict = (r: number) => `${r.toFixed(2)} (target <= ${TARGET}): ${r <= TARGET ? 'met' : 'MISSED'}`;
  return {
    name: 'workspace-scale',
    lines: [
      `workspace: ${files} files, ${(bytes / 1e6).toFixed(1)} MB, a git work tree`,
      `first checkpoint                        ${ms(first)}`,
      `git add -A (fresh copy)                 ${ms(gitFirst)}`,
      `  ratio ${verdict(r1)}`,
      `second checkpoint (one file touched)    ${ms(second)}`,
      `git add -A (one file touched)           ${ms(gitSecond)}`,
      `  ratio ${verdict(r2)}`,
      `  reported, no target: lstat of each file and directory once, whole process (node -e, one thread)  ${ms(floors)}: ${(median(floors) / median(gitSecond)).toFixed(2)}x git add -A`,
      `task-codex-stop (one file touched)      ${ms(hooks)}`,
      `git status --porcelain + node -e 0      ${ms(bases)}`,
      `  ratio ${verdict(r3)}`,
      `reported, no target: one file added in place of another (its directory listed again)`,
      `  third checkpoint (one file added)     ${ms(added)}`,
      `  git add -A (one file added)           ${ms(gitAdded)}`,
      `    ratio ${(median(added) / median(gitAdded)).toFixed(2)}`,
      `  task-codex-stop (one file added)      ${ms(addedHooks)}`,
      `  git status --porcelain + node -e 0    ${ms(addedBases)}`,
      `    ratio ${(median(addedHooks) / median(addedBases)).toFixed(2)}`,
      `reported, no target: the last file in manifest order touched (the hook's first read stops at the first change)`,
      `  task-codex-stop (last file touched)   ${ms(lastHooks)}`,
      `  git status --porcelain + node -e 0    ${ms(lastBases)}`,
      `    ratio ${(median(lastHooks) / median(lastBases)).toFixed(2)}`,
    ],
    ok: r1 <= TARGET && r2 <= TARGET && r3 <= TARGET,
  };
}
