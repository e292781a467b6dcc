// Bundles tree-ring's hot entries into one CommonJS file each, under dist/hook/:
//   tree-ring-hook.cjs    the lifecycle hook's entry, which the project-local launcher .tree-ring/bin/tree-ring
//                         runs for `--root .tree-ring integrations hook …`: a small loader (hook-loader-main.ts)
//                         that runs tree-ring-hook.body.cjs (hook-main.ts and all it imports) with its cache;
//   tree-ring-recall.cjs  `tree-ring recall`'s entry, which bin/tree-ring.js runs for a plain recall
//                         invocation: a small loader (recall-loader-main.ts) that runs
//   tree-ring-recall.body.cjs  (recall-main.ts and everything it imports) with
//   tree-ring-recall.body.cjs.cache  V8's code cache of the body after one real recall.
// Hosts and agents start a process for each, and a cold start pays per module: CommonJS skips the ES
// module loader, and better-sqlite3's JavaScript is bundled too (src/core/sqlite/bundled.ts), so the only
// files loaded besides the bundle are its native addon and package.json. Nothing else from node_modules
// but commander (the argv parser, src/cli/argv.ts) may enter a bundle; the build fails if something does.

import { build } from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import * as os from 'node:os';
import { fileURLToPath } from 'node:url';
import { cacheFileOf } from '../src/cli/code-cache.js';
import { bundledSqliteOptions, checkOnlySqliteBundled } from './bundle-sqlite.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
async function bundle(entry: string, outfile: string): Promise<void> {
  const result = await build({
    entryPoints: [path.join(root, entry)],
    outfile: path.join(root, outfile),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    ...bundledSqliteOptions(root),
    metafile: true,
    logLevel: 'warning',
  });
  checkOnlySqliteBundled(outfile, result.metafile.inputs);
}

// The asynchronous API: plugins cannot run in esbuild's synchronous one.
await bundle('dist/src/commands/tree-ring/hook-main.js', 'dist/hook/tree-ring-hook.body.cjs');
await bundle('dist/src/commands/tree-ring/hook-loader-main.js', 'dist/hook/tree-ring-hook.cjs');
await bundle('dist/src/commands/tree-ring/recall-main.js', 'dist/hook/tree-ring-recall.body.cjs');
await bundle('dist/src/commands/tree-ring/recall-loader-main.js', 'dist/hook/tree-ring-recall.cjs');
warmCaches();
// Launchers written by an earlier `tree-ring init` name the former ES module bundle: keep that path
// working and hand over to the CommonJS bundle.
fs.writeFileSync(
  path.join(root, 'dist/hook/tree-ring-hook.js'),
  "// Former path of the lifecycle hook bundle, named by launchers from earlier releases.\nimport { createRequire } from 'node:module';\ncreateRequire(import.meta.url)('./tree-ring-hook.cjs');\n",
);

/**
 * V8's code cache of each body after one real run in a throwaway project, for Node 20 (src/cli/code-cache.ts): a
 * recall, and the SessionStart hook as a host runs it. It spares every later run most of its compiling.
 * When this fails the build goes on without it (the command is then only slower).
 */
function warmCaches(): void {
  const hook = path.join(root, 'dist/hook/tree-ring-hook.body.cjs');
  const recall = path.join(root, 'dist/hook/tree-ring-recall.body.cjs');
  for (const body of [hook, recall]) fs.rmSync(cacheFileOf(body), { force: true });
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
    const out = run([warm, hook, cacheFileOf(hook), '--root', '.tree-ring', 'integrations', 'hook', '--harness', 'claude-code', '--input-json-stdin'], event);
    if (!out.startsWith('{"hookSpecificOutput"')) throw new Error(`warm-up hook answered ${out.slice(0, 80)}`);
  } catch (e) {
    for (const body of [hook, recall]) fs.rmSync(cacheFileOf(body), { force: true });
    process.stderr.write(`bundle-tree-ring: no code cache (${(e as Error).message}); tree-ring works without it\n`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
