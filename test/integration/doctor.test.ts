// `agentscm doctor` against real parts: a real Hub over HTTP with a real token, a real data dir, hook
// files written by `install-stop`, a Codex config.toml, and engine endpoints that do and do not answer.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AGENTSCM_BIN, agentscm, json, type RunResult } from '../support/cli.js';
import { adminSetup, PROFILE, REPO, startHub, type RunningHub, type Setup } from '../support/hub.js';
import { copyTree } from '../support/files.js';
import { nodeCheck } from '../../src/commands/doctor.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The CLI without blocking this process's event loop (for a stand-in served from this process). */
function agentscmAsync(args: string[], env: NodeJS.ProcessEnv): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [AGENTSCM_BIN, ...args], { encoding: 'utf8', env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

describe('agentscm doctor', () => {
  let s: Setup;
  let hub: RunningHub;
  let codexHome: string;
  let env: NodeJS.ProcessEnv;

  const doctor = (...extra: string[]): RunResult =>
    agentscm(['doctor', '--data-dir', s.dataDir, '--endpoint', hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile, '--project', s.workspace, ...extra], { env });
  const byName = (r: RunResult): Record<string, Doc> => Object.fromEntries((json<Doc>(r).checks as Doc[]).map((c) => [c.name, c]));

  before(async () => {
    s = adminSetup();
    hub = await startHub(s.dataDir);
    codexHome = path.join(s.root, 'codex-home');
    fs.mkdirSync(codexHome);
    // No engine variable from the test's environment: the well-known sockets decide (ok or warn, never fail).
    env = { ...process.env, CODEX_HOME: codexHome, DOCKER_HOST: '' };
    for (const host of ['claude-code', 'codex']) {
      const r = agentscm(['install-stop', 'c1', '--host', host, '--project', s.workspace, '--data-dir', s.dataDir, '--endpoint', hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile]);
      assert.equal(r.code, 0, r.stderr);
    }
  });
  after(async () => {
    await hub.stop();
    fs.rmSync(s.root, { recursive: true, force: true });
  });

  test('a healthy setup: every check ok or warn, exit 0; Codex hook trust is reported as unknown', () => {
    fs.writeFileSync(path.join(codexHome, 'config.toml'), `model = "x"\n\n[projects.${JSON.stringify(s.workspace)}]\ntrust_level = "trusted"\n`);
    const r = doctor('--json');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const doc = json<Doc>(r);
    assert.equal(doc.ok, true);
    const c = byName(r);
    // ok, or a warning on a Node line past its end of life (Node 20 here).
    const nodeStatus = nodeCheck(process.versions.node).status;
    assert.equal(c.node!.status, nodeStatus);
    assert.notEqual(c.engine!.status, 'fail');
    assert.equal(c['data-dir']!.status, 'ok');
    assert.equal(c['data-dir']!.detail.mode, '0700');
    assert.equal(c.authority!.status, 'ok');
    assert.equal(c.packs!.status, 'ok');
    assert.equal(typeof c.packs!.detail.packs, 'number');
    assert.equal(c.hub!.status, 'ok', c.hub!.message);
    assert.equal(c.hub!.detail.capability, 'agentscm.agent-workflow-tasks/v1');
    assert.equal(c['hook:claude-code']!.status, 'ok', c['hook:claude-code']!.message);
    assert.equal(c['hook:codex']!.status, 'ok');
    assert.equal(c['codex-trust']!.status, 'ok');
    assert.equal(c['codex-trust']!.detail.project_trust, 'trusted');
    assert.equal(c['codex-trust']!.detail.hook_trust, 'unknown');
    const text = doctor();
    assert.equal(text.code, 0);
    assert.match(text.stdout, nodeStatus === 'ok' ? /^ok {4}node +Node \d+\.\d+\.\d+$/m : /^warn {2}node +Node \d+\.\d+\.\d+: Node \d+ reached its end of life on /m);
    assert.match(text.stdout, /^ok {4}hub +/m);
    assert.match(text.stdout, /hook trust: unknown/);
    assert.match(text.stdout, /no check failed/);
  });

  test('an untrusted Codex project warns (exit 0); a revoked token fails (exit 21)', () => {
    fs.writeFileSync(path.join(codexHome, 'config.toml'), 'model = "x"\n');
    const warn = doctor('--json');
    assert.equal(warn.code, 0);
    assert.equal(byName(warn)['codex-trust']!.status, 'warn');
    assert.match(byName(warn)['codex-trust']!.message, /does not trust/);

    const root = s.root;
    const other = path.join(root, 'token-2');
    const t = json<Doc>(agentscm(['authority', 'token', 'issue', '--data-dir', s.dataDir, '--owner', 'o', '--agent', 'a', '--out', other, '--json']));
    assert.equal(agentscm(['authority', 'token', 'revoke', '--data-dir', s.dataDir, '--token-id', t.token_id]).code, 0);
    const r = agentscm(['doctor', '--endpoint', hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', other, '--project', s.workspace, '--json'], { env });
    assert.equal(r.code, 21, r.stdout + r.stderr);
    const hubCheck = byName(r).hub!;
    assert.equal(hubCheck.status, 'fail');
    assert.equal(hubCheck.detail.kind, 'AUTH_REJECTED');
    assert.match(hubCheck.message, /rejected the token.*unauthenticated/);
    assert.equal(json<Doc>(r).ok, false);
  });

  test('an unreachable Hub, a named engine that does not answer and a loose data dir each fail', async () => {
    const dead = http.createServer();
    await new Promise<void>((res) => dead.listen(0, '127.0.0.1', res));
    const port = (dead.address() as { port: number }).port;
    await new Promise<void>((res) => dead.close(() => res()));
    const r = agentscm(['doctor', '--endpoint', `http://127.0.0.1:${port}`, '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile, '--project', s.workspace, '--docker-host', `unix://${path.join(s.root, 'no-engine.sock')}`, '--json'], { env });
    assert.equal(r.code, 21);
    const c = byName(r);
    assert.equal(c.hub!.status, 'fail');
    assert.equal(c.hub!.detail.kind, 'HUB_UNREACHABLE');
    assert.equal(c.engine!.status, 'fail');
    assert.match(c.engine!.message, /--docker-host\) does not answer/);

    // A TCP endpoint that answers /_ping with OK counts as an engine that answers.
    const engine = http.createServer((req, res) => res.end(req.url === '/_ping' ? 'OK' : 'no'));
    await new Promise<void>((res) => engine.listen(0, '127.0.0.1', res));
    try {
      const ok = await agentscmAsync(['doctor', '--project', s.workspace, '--json'], { ...env, DOCKER_HOST: `tcp://127.0.0.1:${(engine.address() as { port: number }).port}` });
      assert.equal(byName(ok).engine!.status, 'ok');
      assert.equal(byName(ok).engine!.detail.source, 'env');
    } finally {
      engine.close();
    }

    fs.chmodSync(s.dataDir, 0o755);
    try {
      const loose = doctor('--json');
      assert.equal(loose.code, 21);
      assert.equal(byName(loose)['data-dir']!.status, 'fail');
      assert.match(byName(loose)['data-dir']!.message, /mode 0755/);
    } finally {
      fs.chmodSync(s.dataDir, 0o700);
    }
    const missing = agentscm(['doctor', '--data-dir', path.join(s.root, 'nope'), '--project', s.workspace, '--json'], { env });
    assert.equal(missing.code, 21);
    assert.match(byName(missing)['data-dir']!.message, /does not exist/);
  });

  test('more than 256 snapshot packs warn (exit 0), naming snapshot repack', () => {
    // A copy of the data dir with 300 packs: doctor counts the published ones (never a temporary one).
    const copy = path.join(s.root, 'many-packs');
    copyTree(s.dataDir, copy);
    const packs = path.join(copy, 'snapshots', 'packs');
    fs.mkdirSync(packs, { recursive: true });
    for (let k = 0; k < 300; k++) fs.writeFileSync(path.join(packs, `p${k}.pack`), 'agentscm-pack-v1\n');
    fs.writeFileSync(path.join(packs, '.1.tmp.pack.tmp'), '');
    const r = agentscm(['doctor', '--data-dir', copy, '--project', s.workspace, '--json'], { env });
    const c = byName(r);
    assert.equal(c.packs!.status, 'warn');
    assert.equal(c.packs!.detail.packs, 300);
    assert.match(c.packs!.message, /agentscm snapshot repack --data-dir /);
    assert.notEqual(r.code, 21, 'a warning is no failure');
  });

  test('a Stop handler whose program is gone fails; a project without hook files warns', () => {
    const file = path.join(s.workspace, '.claude', 'settings.json');
    const before = fs.readFileSync(file, 'utf8');
    const doc = JSON.parse(before) as Doc;
    const handler = doc.hooks.Stop[0].hooks[0] as Doc;
    const entry = handler.command.split(' ').find((w: string) => /agentscm(-stop-hook\.cjs|\.js)$/.test(w)) as string;
    assert.ok(entry && fs.existsSync(entry), handler.command);
    // As after an uninstall or a moved install prefix: the same command naming an entry that is gone.
    handler.command = handler.command.replace(entry, path.join(s.root, 'gone', path.basename(entry)));
    fs.writeFileSync(file, JSON.stringify(doc));
    try {
      const r = doctor('--json');
      assert.equal(r.code, 21, r.stdout);
      const c = byName(r)['hook:claude-code']!;
      assert.equal(c.status, 'fail');
      assert.match(c.message, /no longer exists/);
      assert.equal(byName(r)['hook:codex']!.status, 'ok');
    } finally {
      fs.writeFileSync(file, before);
    }
    const bare = path.join(s.root, 'bare');
    fs.mkdirSync(bare);
    const r = agentscm(['doctor', '--project', bare, '--json'], { env });
    assert.equal(r.code, 0);
    assert.equal(byName(r).hooks!.status, 'warn');
    assert.equal(byName(r)['codex-trust'], undefined, 'no Codex hook, no trust check');
  });
});
