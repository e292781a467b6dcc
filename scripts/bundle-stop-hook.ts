// Builds the task Stop hooks (skill-workflow task-stop|task-codex-stop) as install-stop registers them:
//
//   dist/hook/agentscm-stop-hook.cjs              the entry: a small loader (hook-loader-main.ts)
//   dist/hook/agentscm-stop-hook.body.cjs         hook-main.js and everything it imports, one file
//   dist/hook/agentscm-stop-hook.body.cjs.cache   V8's code cache of the body after one real run (Node 20;
//                                                 later Nodes keep their own, src/cli/code-cache.ts)
//
// CommonJS: an ES module entry would start Node's ES module loader, which alone costs the hook more time
// than its whole check. better-sqlite3's JavaScript is bundled in the body, its addon loaded from the
// installed package (scripts/bundle-sqlite.ts). The code cache comes from running the hook once against a throwaway data dir
// and a local Hub; when that fails the build goes on without it (the hook is then only slower).

import { build, buildSync } from 'esbuild';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BODY_NAME, CACHE_NAME } from '../src/commands/skill-workflow/hook-loader.js';
import { exampleCheckpointedWorkspace } from './example-authority.js';
import { bundledSqliteOptions, checkOnlySqliteBundled } from './bundle-sqlite.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const hookDir = path.join(root, 'dist', 'hook');
const common = { bundle: true, format: 'cjs', platform: 'node', target: 'node20', packages: 'external', logLevel: 'warning' } as const;

// The body carries zod/mini (the qualification answer's schema, tree-shaken to what it uses), commander
// (the argv parser) and better-sqlite3's JavaScript; any other package fails the build.
// The asynchronous API: plugins cannot run in esbuild's synchronous one.
const body = await build({
  ...common,
  packages: 'bundle',
  entryPoints: [path.join(root, 'dist/src/commands/skill-workflow/hook-main.js')],
  outfile: path.join(hookDir, BODY_NAME),
  ...bundledSqliteOptions(root),
  metafile: true,
});
checkOnlySqliteBundled(BODY_NAME, body.metafile!.inputs, ['zod/']);
const fullZod = Object.keys(body.metafile!.inputs).filter((f) => f.includes('node_modules/zod/') && f.includes('/classic/'));
if (fullZod.length > 0) throw new Error(`${BODY_NAME} would bundle the full zod: ${fullZod.join(', ')}`);
buildSync({ ...common, entryPoints: [path.join(root, 'dist/src/commands/skill-workflow/hook-loader-main.js')], outfile: path.join(hookDir, 'agentscm-stop-hook.cjs') });
const cacheFile = path.join(hookDir, CACHE_NAME);
fs.rmSync(cacheFile, { force: true });

async function warm(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-hook-cache-'));
  let hub: ReturnType<typeof spawn> | undefined;
  try {
    const { dataDir, tokenFile, ws } = exampleCheckpointedWorkspace(tmp, { owner: 'build', agent: 'code-cache' });
    const server = spawn(process.execPath, [path.join(root, 'bin', 'agentscm.js'), 'hub', 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'ignore'] });
    hub = server;
    const url = await new Promise<string>((resolve, reject) => {
      server.once('exit', () => reject(new Error('hub serve exited')));
      server.stdout!.once('data', (c: Buffer) => resolve(c.toString().split('\n')[0]!));
    });
    const args = [
      '--data-dir', dataDir, 'skill-workflow', 'task-codex-stop', 'c1', '--endpoint', url, '--repository', 'acme/demo',
      '--profile', 'default', '--token-file', tokenFile, '--workspace', ws,
    ];
    const input = JSON.stringify({ session_id: 'code-cache', hook_event_name: 'Stop', stop_hook_active: false });
    const r = spawnSync(process.execPath, [path.join(root, 'dist', 'scripts', 'warm-code-cache.js'), path.join(hookDir, BODY_NAME), cacheFile, ...args], {
      input,
      env: { PATH: process.env.PATH, AGENTSCM_STATE_DIR: path.join(tmp, 'state') },
      encoding: 'utf8',
    });
    if (r.status !== 0 || !r.stdout.startsWith('{"decision":"block"')) throw new Error(`warm-up run failed: ${r.stderr}`);
  } finally {
    hub?.kill('SIGTERM');
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

try {
  await warm();
} catch (e) {
  fs.rmSync(cacheFile, { force: true });
  process.stderr.write(`bundle-stop-hook: no code cache (${(e as Error).message}); the Stop hook works without it\n`);
}
