// Bundles after tsc (`npm run build`), for the processes whose start-up time matters: hosts start a process
// per hook event, agents one per recall, and each extra module costs start-up time. Everything goes to
// dist/bundles/, each file one CommonJS bundle (an ES module entry would start Node's ES module loader,
// which alone costs a hook more than its whole check):
//
//   version.cjs                         src/version.ts, for the launchers' bare --version
//   stage-worker.cjs                    the snapshot staging worker (src/collectors/stage-worker.ts)
//   agentscm-collect.body.cjs (+.cache) agent-task collect's body (collect-flow.ts and what it imports)
//   agentscm-collect-entry.cjs          agent-task collect's one-file entry: a loader
//                                       (src/entries/one-command-loader.ts) of
//   agentscm-collect-entry.body.cjs     src/entries/collect.ts and what it imports but the body
//   agentscm-checkpoint-entry.cjs       checkpoint's one-file entry: the same loader, of
//   agentscm-checkpoint-entry.body.cjs (+.cache)  src/entries/checkpoint.ts and everything it imports
//   agentscm-stop-hook.cjs              the task Stop hooks as install-stop registers them: a small loader
//                                       (src/entries/stop-hook-loader.ts) of
//   agentscm-stop-hook.body.cjs (+.cache)  src/entries/stop-hook.ts and everything it imports
//   tree-ring-hook.cjs                  the lifecycle hook as the project-local launcher runs it: a loader
//                                       (src/entries/treering-hook-loader.ts) of
//   tree-ring-hook.body.cjs (+.cache)   src/entries/treering-hook.ts and everything it imports
//   tree-ring-recall.cjs                `tree-ring recall`'s entry, run by bin/tree-ring.js: a loader
//                                       (src/entries/recall-loader.ts) of
//   tree-ring-recall.body.cjs (+.cache) src/entries/recall.ts and everything it imports
//
// A `.cache` (named `<body>.v8-<V8 version>.cache`) is V8's code cache of the body after one real run
// with the Node that builds (src/cli/code-cache.ts). When a warm-up run fails the build goes on without
// that cache (the command is then only slower). dist/hook/ keeps only hand-overs at the paths earlier
// releases wrote into hook files and launchers (see the end).

import { build, type BuildOptions, type Plugin } from 'esbuild';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheFileOf } from '../src/cli/code-cache.js';
import { BODY_NAME } from '../src/entries/stop-hook-files.js';
import { exampleAuthority, exampleCheckpointedWorkspace } from './example-authority.js';
import { bundledSqliteOptions, checkOnlySqliteBundled } from './bundle-sqlite.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const outDir = path.join(root, 'dist', 'bundles');
const out = (name: string) => path.join(outDir, name);
const compiled = (rel: string) => path.join(root, 'dist', 'src', rel);
const common = { bundle: true, format: 'cjs', platform: 'node', target: 'node20', logLevel: 'warning' } as const satisfies BuildOptions;

/**
 * commander's `require('node:child_process')` resolved to src/cli/lazy-child-process.ts, which loads the
 * module on its first call: commander spawns only for executable subcommands (none of ours), and a
 * hook or recall process would otherwise load child_process, dgram and the socket list for nothing.
 * The build fails if commander uses anything of child_process but spawn.
 */
const commanderSource = fs.readFileSync(path.join(root, 'node_modules/commander/lib/command.js'), 'utf8');
const commanderUses = new Set([...commanderSource.matchAll(/\bchildProcess\.(\w+)/g)].map((m) => m[1]));
if ([...commanderUses].some((name) => name !== 'spawn')) throw new Error(`commander uses child_process.${[...commanderUses].join(', ')}: extend src/cli/lazy-child-process.ts`);
const lazyChildProcess: Plugin = {
  name: 'lazy-child-process',
  setup(b) {
    b.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer) ? { path: compiled('cli/lazy-child-process.js') } : undefined,
    );
  },
};

/**
 * Each `import * as fs from 'node:fs'` of a module becomes, in a CommonJS bundle, its own copy of the
 * builtin's namespace (esbuild's __toESM: a getter per export, about a hundred for node:fs); a hook
 * body made some 20 of them, 3-5 ms of a run. Here every import of a builtin from our modules goes
 * through one module per builtin (`export * from 'node:fs'`), so each namespace is copied once.
 */
const BUILTIN_NS = 'builtin-namespace';
const oneNamespacePerBuiltin: Plugin = {
  name: 'one-namespace-per-builtin',
  setup(b) {
    b.onResolve({ filter: /^node:[a-z_/]+$/ }, (args) =>
      args.namespace === 'file' && !/[\\/]node_modules[\\/]/.test(args.importer) ? { path: args.path, namespace: BUILTIN_NS } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: BUILTIN_NS }, (args) => ({ contents: `export * from ${JSON.stringify(args.path)};\n`, loader: 'js' }));
  },
};

/** Build options with the lazy child_process for commander and one namespace per builtin added to their plugins. */
const withBundlePlugins = <T extends { plugins: Plugin[] }>(o: T): T => ({ ...o, plugins: [lazyChildProcess, oneNamespacePerBuiltin, ...o.plugins] });

/** The node_modules inputs of a build's metafile outside the allowed packages (`node_modules/NAME/`). */
function foreignInputs(metafile: { inputs: Record<string, unknown> }, allowed: readonly string[]): string[] {
  return Object.keys(metafile.inputs).filter((f) => f.includes('node_modules/') && !allowed.some((a) => f.includes(`node_modules/${a}`)));
}

// A fresh directory: nothing from an earlier build or an earlier layout stays beside the bundles.
fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });

// ---- version.cjs, stage-worker.cjs ----------------------------------------------------------------------

/** A CommonJS copy of a compiled module, for CommonJS callers to require. */
const cjsCopy = (entry: string, name: string) => build({ ...common, entryPoints: [compiled(entry)], outfile: out(name) });

// The launchers answer a bare --version from this copy of src/version.ts: an import() of the ES module
// would start the ES module loader, about a quarter of a bare node start.
await cjsCopy('version.js', 'version.cjs');

// The snapshot staging worker (stager.ts) as one CommonJS file: a worker thread boots without Node's
// start-up snapshot, and an ES module entry would also make it load the ES module loader, tens of
// milliseconds of CPU that collect's first half second shares with the engine answering its facts.
await cjsCopy('collectors/stage-worker.js', 'stage-worker.cjs');

// ---- agent-task collect: body and entry -----------------------------------------------------------------

// agent-task collect pays for every module it loads on every run: its body (collect-flow.js) and
// everything it imports, zod included, become one CommonJS file, agentscm-collect.body.cjs, which
// collect.ts runs with V8's code cache (src/cli/code-cache.ts; made below by loading the body once).
// Kept outside and handed in by collect.ts under fixed ids (SHARED_WITH_BODY): errors.js (the CLI runner
// maps errors to exit codes by their class, so there must be one AgentscmError) and the progress reporter
// (its ink view is a dynamic import, so ink and react load only on a terminal). The staging worker is
// started by collect.ts (stager.ts finds the worker's file beside it). Packages that are native or lazily
// loaded stay packages.
const shared: Record<string, string> = {
  [compiled('core/errors.js')]: 'agentscm:errors',
  [compiled('collectors/progress.js')]: 'agentscm:progress',
};
const collectBody = out('agentscm-collect.body.cjs');
// better-sqlite3's JavaScript is bundled (src/core/sqlite/bundled.ts in place of ./open.ts, which needs
// import.meta.url); its addon comes from the installed package.
const collectSqlite = bundledSqliteOptions(root);
await build({
  ...common,
  entryPoints: [compiled('commands/agent-task/collect-flow.js')],
  outfile: collectBody,
  external: ['dockerode', 'ink', 'react', ...collectSqlite.external],
  define: collectSqlite.define,
  // Whitespace and comments out (about a quarter of a megabyte): every collect reads and compiles the
  // whole body. Names stay, for stack traces.
  minifyWhitespace: true,
  plugins: [
    ...collectSqlite.plugins,
    {
      name: 'shared-with-collect',
      setup(b) {
        b.onResolve({ filter: /^\.\.?\// }, (args) => {
          const id = shared[path.resolve(args.resolveDir, args.path)];
          return id === undefined ? undefined : { path: id, external: true };
        });
      },
    },
  ],
});
if (/\bimport\(/.test(fs.readFileSync(collectBody, 'utf8').replace(/\/\/.*$/gm, ''))) throw new Error(`${collectBody}: a dynamic import() cannot run in a vm.Script body`);
const collectCache = cacheFileOf(collectBody);
const warmedCollect = spawnSync(process.execPath, [path.join(root, 'dist/scripts/warm-collect-cache.js'), collectCache], { env: { PATH: process.env.PATH }, encoding: 'utf8' });
if (warmedCollect.status !== 0) {
  fs.rmSync(collectCache, { force: true });
  process.stderr.write(`build-bundles: no code cache for agent-task collect (${warmedCollect.stderr.trim()}); it works without it\n`);
}

/**
 * A one-file entry of a single command (src/entries/one-command.ts), which bin/agentscm.js runs for a
 * plain invocation of it instead of importing the ES module command table: `<name>.body.cjs`, loaded with
 * a code cache by `<name>.cjs` (src/entries/one-command-loader.ts). Its modules' own URLs
 * (import.meta.url: where collect.ts finds the body, stager.ts the worker) are their places under
 * dist/src, computed from the bundle's directory at run time; `outside` names compiled modules that stay
 * files of their own. commander (the argv parser, src/cli/argv.ts) is the one package bundled in, and
 * with `sqlite` better-sqlite3's JavaScript (scripts/bundle-sqlite.ts).
 */
async function oneCommandEntry(
  entry: string,
  name: string,
  external: readonly string[],
  outside: Readonly<Record<string, string>> = {},
  { sqlite = false }: { sqlite?: boolean } = {},
): Promise<string> {
  const body = out(name.replace(/\.cjs$/, '.body.cjs'));
  const bundledSqlite = sqlite ? bundledSqliteOptions(root) : { plugins: [], define: {}, external: [] };
  const result = await build({
    ...common,
    entryPoints: [compiled(entry)],
    outfile: body,
    external: [...external, ...bundledSqlite.external],
    define: bundledSqlite.define,
    banner: { js: 'const __agentscmModuleUrl = (rel) => require("node:url").pathToFileURL(require("node:path").join(__dirname, rel)).href;' },
    // Whitespace and comments out, as in the hook bodies: every run reads the whole body.
    minifyWhitespace: true,
    metafile: true,
    ...withBundlePlugins({ plugins: [
      ...bundledSqlite.plugins,
      {
        name: 'one-command-entry',
        setup(b) {
          for (const [filter, rel] of Object.entries(outside)) b.onResolve({ filter: new RegExp(filter) }, () => ({ path: rel, external: true }));
          b.onLoad({ filter: /\/dist\/src\/.*\.js$/ }, async (args) => {
            const text = await fs.promises.readFile(args.path, 'utf8');
            if (!text.includes('import.meta.url')) return undefined;
            const rel = path.relative(path.dirname(body), args.path);
            return { contents: text.replaceAll('import.meta.url', `__agentscmModuleUrl(${JSON.stringify(rel)})`), loader: 'js' };
          });
        },
      },
    ] }),
  });
  const allowed = sqlite ? ['commander/', 'better-sqlite3/lib/'] : ['commander/'];
  const foreign = foreignInputs(result.metafile, allowed);
  if (foreign.length > 0) throw new Error(`${body} would bundle packages other than ${allowed.join(', ')}: ${foreign.join(', ')}`);
  await build({ ...common, packages: 'external', entryPoints: [compiled('entries/one-command-loader.js')], outfile: out(name) });
  return body;
}

// agent-task collect's entry (src/entries/collect.ts); collect-flow.js, which collect.ts imports only
// when the body bundle is missing, stays outside. Its code cache is Node's own (22.1 and later): a
// warm-up run would need an engine and a claimed attempt.
await oneCommandEntry('entries/collect.js', 'agentscm-collect-entry.cjs', ['better-sqlite3', 'dockerode', 'ink', 'react', 'zod'], {
  '/collect-flow\\.js$': '../src/commands/agent-task/collect-flow.js',
});

// checkpoint's entry (src/entries/checkpoint.ts), with the command module and everything it imports. Its
// code cache comes from a second checkpoint of the example workspace as a git work tree: the stat cache
// and the git listing cache answer, and one edited file is read, as in most checkpoints.
// better-sqlite3's JavaScript is bundled too, its addon loaded from the installed package
// (src/core/sqlite/bundled.ts): resolving and loading its files cost a 20,000-file checkpoint about 10 ms
// (bench/README.md).
const checkpointBody = await oneCommandEntry('entries/checkpoint.js', 'agentscm-checkpoint-entry.cjs', ['zod'], {}, { sqlite: true });
function warmCheckpoint(): void {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-checkpoint-cache-'));
  try {
    const dataDir = path.join(tmp, 'data');
    exampleAuthority(dataDir, { owner: 'build', agent: 'code-cache' });
    const ws = path.join(tmp, 'ws');
    fs.cpSync(path.join(root, 'examples', 'workspace'), ws, { recursive: true });
    const git = spawnSync('git', ['init', '-q'], { cwd: ws, encoding: 'utf8' });
    if (git.status !== 0) throw new Error(`git init failed: ${git.stderr}`);
    const args = ['checkpoint', 'c1', '--data-dir', dataDir, '--repository', 'acme/demo', '--profile', 'default', '--workspace', ws, '--json'];
    const first = spawnSync(process.execPath, [path.join(root, 'bin', 'agentscm.js'), ...args], { env: { PATH: process.env.PATH }, encoding: 'utf8' });
    if (first.status !== 0) throw new Error(`first checkpoint failed: ${first.stderr}`);
    const edited = fs.readdirSync(ws, { recursive: true, withFileTypes: true }).find((d) => d.isFile() && !d.parentPath.includes('.git'));
    if (edited === undefined) throw new Error('the example workspace has no file');
    fs.appendFileSync(path.join(edited.parentPath, edited.name), '\n');
    const r = spawnSync(process.execPath, [path.join(root, 'dist', 'scripts', 'warm-code-cache.js'), checkpointBody, cacheFileOf(checkpointBody), ...args], { env: { PATH: process.env.PATH }, encoding: 'utf8' });
    if (r.status !== 0 || !r.stdout.startsWith('{"subject"')) throw new Error(`warm-up checkpoint failed: ${r.stderr}`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
try {
  warmCheckpoint();
} catch (e) {
  fs.rmSync(cacheFileOf(checkpointBody), { force: true });
  process.stderr.write(`build-bundles: no code cache for checkpoint (${(e as Error).message}); it works without it\n`);
}

// ---- the task Stop hooks (skill-workflow task-stop|task-codex-stop) -------------------------------------

// The body carries zod/mini (the qualification answer's schema, tree-shaken to what it uses), commander
// (the argv parser, src/cli/argv.ts), @noble/ed25519 (loaded only to tell a pinned key that is no
// Ed25519 point from a bad signature, src/core/hooks/task-stop.ts) and better-sqlite3's JavaScript (its addon loaded from the
// installed package, scripts/bundle-sqlite.ts); any other package fails the build.
const stopBody = await build({
  ...common,
  packages: 'bundle',
  entryPoints: [compiled('entries/stop-hook.js')],
  outfile: out(BODY_NAME),
  ...withBundlePlugins(bundledSqliteOptions(root)),
  // Whitespace and comments out (commander's comments and the indentation were 100 of 340 KB): the
  // loader reads the whole body into a string on every stop, about 150 fewer page faults a run.
  minifyWhitespace: true,
  metafile: true,
});
checkOnlySqliteBundled(BODY_NAME, stopBody.metafile.inputs, ['zod/', '@noble/ed25519/']);
const fullZod = Object.keys(stopBody.metafile.inputs).filter((f) => f.includes('node_modules/zod/') && f.includes('/classic/'));
if (fullZod.length > 0) throw new Error(`${BODY_NAME} would bundle the full zod: ${fullZod.join(', ')}`);
await build({ ...common, packages: 'external', entryPoints: [compiled('entries/stop-hook-loader.js')], outfile: out('agentscm-stop-hook.cjs') });

/**
 * Runs the Stop hook body once against a throwaway data dir and a local Hub with a receipt key, the hook
 * pinning it as install-stop registers it, writing its code cache: the cache then holds the answer's
 * signature check too (an unpinned run compiles a subset of what a pinned one does).
 */
async function warmStopHook(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-hook-cache-'));
  let hub: ReturnType<typeof spawn> | undefined;
  try {
    const { dataDir, tokenFile, ws } = exampleCheckpointedWorkspace(tmp, { owner: 'build', agent: 'code-cache' });
    const keyDir = path.join(tmp, 'receipt-key');
    const key = spawnSync(process.execPath, [path.join(root, 'bin', 'agentscm.js'), 'agent-task', 'key', 'generate', '--key-dir', keyDir, '--json'], { encoding: 'utf8' });
    if (key.status !== 0) throw new Error(`key generate failed: ${key.stderr}`);
    const hubKey = String((JSON.parse(key.stdout) as { public_key: string }).public_key);
    const server = spawn(process.execPath, [path.join(root, 'bin', 'agentscm.js'), 'hub', 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--receipt-key-dir', keyDir], { stdio: ['ignore', 'pipe', 'ignore'] });
    hub = server;
    const url = await new Promise<string>((resolve, reject) => {
      server.once('exit', () => reject(new Error('hub serve exited')));
      server.stdout!.once('data', (c: Buffer) => resolve(c.toString().split('\n')[0]!));
    });
    const args = [
      '--data-dir', dataDir, 'skill-workflow', 'task-codex-stop', 'c1', '--endpoint', url, '--repository', 'acme/demo',
      '--profile', 'default', '--token-file', tokenFile, '--workspace', ws, '--hub-key', hubKey,
    ];
    const input = JSON.stringify({ session_id: 'code-cache', hook_event_name: 'Stop', stop_hook_active: false });
    const r = spawnSync(process.execPath, [path.join(root, 'dist', 'scripts', 'warm-code-cache.js'), out(BODY_NAME), cacheFileOf(out(BODY_NAME)), ...args], {
      input,
      env: { PATH: process.env.PATH, AGENTSCM_STATE_DIR: path.join(tmp, 'state') },
      encoding: 'utf8',
    });
    if (r.status !== 0 || !r.stdout.startsWith('{"decision":"block"') || r.stdout.includes('answer not signed')) throw new Error(`warm-up run failed: ${r.stderr}`);
  } finally {
    hub?.kill('SIGTERM');
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

try {
  await warmStopHook();
} catch (e) {
  fs.rmSync(cacheFileOf(out(BODY_NAME)), { force: true });
  process.stderr.write(`build-bundles: no code cache for the Stop hook (${(e as Error).message}); it works without it\n`);
}

// ---- tree-ring: the lifecycle hook and recall -----------------------------------------------------------

// better-sqlite3's JavaScript is bundled too (src/core/sqlite/bundled.ts), so the only files loaded
// besides the bundle are its native addon and package.json. Nothing else from node_modules but commander
// (the argv parser, src/cli/argv.ts) may enter a bundle; the build fails if something does.
async function treeRingBundle(entry: string, name: string): Promise<void> {
  const result = await build({ ...common, entryPoints: [compiled(entry)], outfile: out(name), ...withBundlePlugins(bundledSqliteOptions(root)), metafile: true });
  checkOnlySqliteBundled(name, result.metafile.inputs);
}

await treeRingBundle('entries/treering-hook.js', 'tree-ring-hook.body.cjs');
await treeRingBundle('entries/treering-hook-loader.js', 'tree-ring-hook.cjs');
await treeRingBundle('entries/recall.js', 'tree-ring-recall.body.cjs');
await treeRingBundle('entries/recall-loader.js', 'tree-ring-recall.cjs');

/**
 * V8's code cache of each tree-ring body after one real run in a throwaway project: a recall, and the
 * SessionStart hook as a host runs it.
 */
function warmTreeRing(): void {
  const hook = out('tree-ring-hook.body.cjs');
  const recall = out('tree-ring-recall.body.cjs');
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tree-ring-code-cache-')));
  const env = { PATH: process.env.PATH };
  const run = (args: string[], input?: string) => {
    const r = spawnSync(process.execPath, args, { cwd: tmp, env, input, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${path.basename(args[0]!)} ${args.slice(1, 4).join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  };
  const cli = path.join(root, 'bin/tree-ring.js');
  const warm = path.join(root, 'dist/scripts/warm-code-cache.js');
  try {
    run([cli, 'init']);
    run([cli, 'remember', 'Run database migrations before the integration tests.', '--project', 'cache', '--event-type', 'lesson', '--scope', 'project']);
    run([cli, 'remember', 'Prefer small reversible migrations.', '--project', 'cache', '--event-type', 'decision', '--scope', 'project']);
    if (!run([warm, recall, cacheFileOf(recall), 'recall', 'migrations', '--project', 'cache', '--json']).startsWith('[{')) throw new Error('warm-up recall found nothing');
    const event = JSON.stringify({ session_id: 'code-cache', transcript_path: null, cwd: tmp, hook_event_name: 'SessionStart', source: 'startup', model: 'm', permission_mode: 'default' });
    const answer = run([warm, hook, cacheFileOf(hook), '--root', '.tree-ring', 'integrations', 'hook', '--harness', 'claude-code', '--input-json-stdin'], event);
    if (!answer.startsWith('{"hookSpecificOutput"')) throw new Error(`warm-up hook answered ${answer.slice(0, 80)}`);
  } catch (e) {
    for (const body of [hook, recall]) fs.rmSync(cacheFileOf(body), { force: true });
    process.stderr.write(`build-bundles: no code cache for tree-ring (${(e as Error).message}); tree-ring works without it\n`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
warmTreeRing();

// ---- former paths ---------------------------------------------------------------------------------------

// Hook files written by an earlier `install-stop` and launchers written by an earlier `tree-ring init`
// name entries under dist/hook/ (the lifecycle hook's even as the former ES module bundle
// tree-ring-hook.js). Each of those paths hands over to its bundle here, so an installed hook keeps its
// check until install-stop or init is run again and writes the new path.
const formerDir = path.join(root, 'dist', 'hook');
fs.rmSync(formerDir, { recursive: true, force: true });
fs.mkdirSync(formerDir, { recursive: true });
const formerNote = '// Former path of a bundle, named by hook files and launchers from earlier releases: hands over to dist/bundles/.\n';
for (const name of ['agentscm-stop-hook.cjs', 'tree-ring-hook.cjs']) {
  fs.writeFileSync(path.join(formerDir, name), `${formerNote}require("../bundles/${name}");\n`);
}
fs.writeFileSync(
  path.join(formerDir, 'tree-ring-hook.js'),
  `${formerNote}import { createRequire } from 'node:module';\ncreateRequire(import.meta.url)('../bundles/tree-ring-hook.cjs');\n`,
);
