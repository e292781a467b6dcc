// Builds the task Stop hooks (skill-workflow task-stop|task-codex-stop) as install-stop registers them:
//
//   dist/hook/agentscm-stop-hook.cjs              the entry: a small loader (hook-loader-main.ts)
//   dist/hook/agentscm-stop-hook.body.cjs         hook-main.js and everything it imports, one file
//   dist/hook/agentscm-stop-hook.body.cjs.cache   V8's code cache of the body after one real run (Node 20;
//                                                 later Nodes keep their own, src/cli/code-cache.ts)
//
// CommonJS: an ES module entry would start Node's ES module loader, which alone costs the hook more time
// than its whole check. The code cache comes from running the hook once against a throwaway data dir
// and a local Hub; when that fails the build goes on without it (the hook is then only slower).

import { buildSync } from 'esbuild';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BODY_NAME, CACHE_NAME } from '../src/commands/skill-workflow/hook-loader.js';
import { exampleCheckpointedWorkspace } from './example-authority.js';
import Database from 'better-sqlite3';
import { AUTHORITY_FILE } from '../src/core/authority/read-only.js';
import { WORKSPACES_FILE } from '../src/core/native/workspace-state.js';
import { parseCreateTable } from '../src/core/sqlite-read/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const hookDir = path.join(root, 'dist', 'hook');
const common = { bundle: true, format: 'cjs', platform: 'node', target: 'node20', packages: 'external', logLevel: 'warning' } as const;

/**
 * The CREATE TABLE statements of the stores the hook reads (an authority and a workspace state, as this
 * project's code creates them), each with its parse: the reader then parses only a statement with other
 * text (src/core/sqlite-read/index.ts, AGENTSCM_PARSED_TABLES).
 */
function parsedTables(): [string, ReturnType<typeof parseCreateTable>][] {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-hook-schema-'));
  try {
    const { dataDir } = exampleCheckpointedWorkspace(tmp, { owner: 'build', agent: 'schema' });
    const out: [string, ReturnType<typeof parseCreateTable>][] = [];
    for (const file of [AUTHORITY_FILE, WORKSPACES_FILE]) {
      const db = new Database(path.join(dataDir, file), { readonly: true, fileMustExist: true });
      try {
        const sqls = db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND sql IS NOT NULL ORDER BY name").pluck().all() as string[];
        for (const sql of sqls) {
          try {
            out.push([sql, parseCreateTable(sql)]);
          } catch {
            // A table the reader does not read (or could not): it is parsed, and refused, at run time.
          }
        }
      } finally {
        db.close();
      }
    }
    return out;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

// The body carries zod/mini (the qualification answer's schema, tree-shaken to what it uses) and commander
// (the argv parser, src/cli/argv.ts); any other package fails the build, as would one the body leaves to be required at run time.
const bodyBuild = buildSync({
  ...common,
  packages: 'bundle',
  entryPoints: [path.join(root, 'dist/src/commands/skill-workflow/hook-main.js')],
  outfile: path.join(hookDir, BODY_NAME),
  define: { AGENTSCM_PARSED_TABLES: JSON.stringify(parsedTables()) },
  metafile: true,
});
const foreign = Object.keys(bodyBuild.metafile.inputs).filter((f) => f.includes('node_modules/') && !f.includes('node_modules/zod/') && !f.includes('node_modules/commander/'));
if (foreign.length > 0) throw new Error(`${BODY_NAME} would bundle packages other than zod/mini and commander: ${foreign.join(', ')}`);
const fullZod = Object.keys(bodyBuild.metafile.inputs).filter((f) => f.includes('node_modules/zod/') && f.includes('/classic/'));
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
