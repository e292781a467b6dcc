// `agentscm install-mcp`: merges one server entry into .mcp.json (Claude Code) or .codex/config.toml
// (Codex), idempotent, replacing its own entry in place, never writing a token.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { agentscm, json } from '../support/cli.js';
import { tempDir } from '../support/hub.js';

const install = (project: string, host: string, ...rest: string[]) =>
  agentscm(['install-mcp', '--host', host, '--endpoint', 'http://127.0.0.1:7777', '--repository', 'acme/demo', '--profile', 'default', '--project', project, ...rest, '--json']);
const URL_ = 'http://127.0.0.1:7777/v1/hub/workspace/mcp?repository=acme%2Fdemo&profile=default';

test('install-mcp --host claude-code: merges mcpServers.agentscm with an env-expanded header, idempotent', () => {
  const project = tempDir('mcp-claude');
  fs.writeFileSync(path.join(project, '.mcp.json'), JSON.stringify({ mcpServers: { other: { type: 'stdio', command: 'x' } }, extra: 1 }));
  const r = install(project, 'claude-code');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(json(r).changed, true);
  const doc = JSON.parse(fs.readFileSync(path.join(project, '.mcp.json'), 'utf8'));
  assert.deepEqual(doc, {
    mcpServers: { other: { type: 'stdio', command: 'x' }, agentscm: { type: 'http', url: URL_, headers: { Authorization: 'Bearer ${AGENTSCM_MCP_TOKEN}' } } },
    extra: 1,
  });
  const before = fs.readFileSync(path.join(project, '.mcp.json'), 'utf8');
  const again = install(project, 'claude-code');
  assert.equal(json(again).changed, false);
  assert.equal(fs.readFileSync(path.join(project, '.mcp.json'), 'utf8'), before);
  const other = install(project, 'claude-code', '--token-env', 'MY_TOKEN');
  assert.equal(json(other).changed, true);
  assert.equal(JSON.parse(fs.readFileSync(path.join(project, '.mcp.json'), 'utf8')).mcpServers.agentscm.headers.Authorization, 'Bearer ${MY_TOKEN}');
  assert.doesNotMatch(fs.readFileSync(path.join(project, '.mcp.json'), 'utf8'), /agentscm_wt1_/);
});

test('install-mcp --host codex: one [mcp_servers.agentscm] table with bearer_token_env_var, other lines kept, idempotent', () => {
  const project = tempDir('mcp-codex');
  fs.mkdirSync(path.join(project, '.codex'));
  const file = path.join(project, '.codex', 'config.toml');
  fs.writeFileSync(file, 'model = "x"\n\n[mcp_servers.agentscm]\nurl = "http://old"\n\n[mcp_servers.agentscm.env]\nA = "1"\n\n[mcp_servers.other]\ncommand = "y"\n');
  const r = install(project, 'codex');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(json(r).changed, true);
  assert.equal(fs.readFileSync(file, 'utf8'), `model = "x"\n\n[mcp_servers.agentscm]\nurl = "${URL_}"\nbearer_token_env_var = "AGENTSCM_MCP_TOKEN"\n\n[mcp_servers.other]\ncommand = "y"\n`);
  assert.equal(json(install(project, 'codex')).changed, false);
  const fresh = tempDir('mcp-codex-new');
  assert.equal(install(fresh, 'codex').code, 0);
  assert.equal(fs.readFileSync(path.join(fresh, '.codex', 'config.toml'), 'utf8'), `[mcp_servers.agentscm]\nurl = "${URL_}"\nbearer_token_env_var = "AGENTSCM_MCP_TOKEN"\n`);
});

test('install-mcp --host codex keeps the comments above the next table, also at the end of the file', () => {
  const project = tempDir('mcp-codex-comments');
  fs.mkdirSync(path.join(project, '.codex'));
  const file = path.join(project, '.codex', 'config.toml');
  fs.writeFileSync(file, '[mcp_servers.agentscm]\nurl = "http://old"\n\n# Trusted projects: do not remove\n[projects."/x"]\ntrust_level = "trusted"\n');
  assert.equal(install(project, 'codex').code, 0);
  const want = `[mcp_servers.agentscm]\nurl = "${URL_}"\nbearer_token_env_var = "AGENTSCM_MCP_TOKEN"\n\n# Trusted projects: do not remove\n[projects."/x"]\ntrust_level = "trusted"\n`;
  assert.equal(fs.readFileSync(file, 'utf8'), want);
  assert.equal(json(install(project, 'codex')).changed, false);
  assert.equal(fs.readFileSync(file, 'utf8'), want);
  fs.writeFileSync(file, '[mcp_servers.agentscm]\nurl = "http://old"\n# the end\n');
  assert.equal(install(project, 'codex').code, 0);
  const tail = `[mcp_servers.agentscm]\nurl = "${URL_}"\nbearer_token_env_var = "AGENTSCM_MCP_TOKEN"\n\n# the end\n`;
  assert.equal(fs.readFileSync(file, 'utf8'), tail);
  assert.equal(json(install(project, 'codex')).changed, false);
});

test('install-mcp --host codex refuses a server defined another way (TOML would declare it twice), changing nothing', () => {
  for (const text of [
    '[mcp_servers]\nagentscm = { url = "http://old" }\n',
    '[mcp_servers]\n"agentscm".url = "http://old"\n',
    'mcp_servers.agentscm.url = "http://old"\n',
    'mcp_servers = { other = { command = "x" } }\n',
    "[mcp_servers]\n'agentscm' = { url = \"http://old\" }\n",
    '"mcp_servers".agentscm.url = "http://old"\n',
  ]) {
    const project = tempDir('mcp-codex-other-form');
    fs.mkdirSync(path.join(project, '.codex'));
    const file = path.join(project, '.codex', 'config.toml');
    fs.writeFileSync(file, text);
    const r = install(project, 'codex');
    assert.equal(r.code, 3, text);
    assert.equal(json<{ error: { code: string } }>(r).error.code, 'BAD_MCP_CONFIG');
    assert.equal(fs.readFileSync(file, 'utf8'), text);
  }
  // Another server's inline definition in [mcp_servers] is no conflict.
  const project = tempDir('mcp-codex-other-server');
  fs.mkdirSync(path.join(project, '.codex'));
  fs.writeFileSync(path.join(project, '.codex', 'config.toml'), '[mcp_servers]\nother = { command = "x" }\n');
  assert.equal(install(project, 'codex').code, 0);
});

test('install-mcp --host codex refuses a config.toml that is not TOML, on install and --uninstall, changing nothing', () => {
  const project = tempDir('mcp-codex-not-toml');
  fs.mkdirSync(path.join(project, '.codex'));
  const file = path.join(project, '.codex', 'config.toml');
  const text = '[mcp_servers.agentscm]\nurl = "http://old"\nurl = "http://again"\n';
  fs.writeFileSync(file, text);
  for (const r of [install(project, 'codex'), agentscm(['install-mcp', '--host', 'codex', '--project', project, '--uninstall', '--json'])]) {
    assert.equal(r.code, 3, r.stderr);
    const err = json<{ error: { code: string; message: string } }>(r).error;
    assert.equal(err.code, 'BAD_MCP_CONFIG');
    assert.match(err.message, /^the existing config\.toml is not valid TOML: .*\(line 3, column \d+\)/);
    assert.equal(fs.readFileSync(file, 'utf8'), text);
  }
});

test('install-mcp refuses a bad endpoint, env var name or host, and a damaged .mcp.json, changing nothing', () => {
  const project = tempDir('mcp-bad');
  assert.equal(agentscm(['install-mcp', '--host', 'vim', '--endpoint', 'http://h:1', '--repository', 'a/b', '--profile', 'p', '--project', project]).code, 2);
  // An endpoint that fails validation is BAD_INPUT (3), as for every client command; a project that does not exist too.
  assert.equal(agentscm(['install-mcp', '--host', 'codex', '--endpoint', 'http://h:1/x?y', '--repository', 'a/b', '--profile', 'p', '--project', project]).code, 3);
  assert.equal(agentscm(['install-mcp', '--host', 'codex', '--endpoint', 'notaurl', '--repository', 'a/b', '--profile', 'p', '--project', project]).code, 3);
  const missing = path.join(project, 'no', 'such');
  assert.equal(agentscm(['install-mcp', '--host', 'codex', '--endpoint', 'http://h:1', '--repository', 'a/b', '--profile', 'p', '--project', missing]).code, 3);
  assert.equal(fs.existsSync(path.join(project, 'no')), false);
  assert.equal(install(project, 'codex', '--token-env', 'bad-name').code, 2);
  fs.writeFileSync(path.join(project, '.mcp.json'), '{"mcpServers": [');
  const r = install(project, 'claude-code');
  assert.notEqual(r.code, 0);
  assert.equal(fs.readFileSync(path.join(project, '.mcp.json'), 'utf8'), '{"mcpServers": [');
  assert.equal(fs.existsSync(path.join(project, '.codex')), false);
});

test('install-mcp --uninstall removes its server and nothing else: the file is again what it was; nothing to remove changes nothing', () => {
  const uninstall = (project: string, host: string, ...rest: string[]) => agentscm(['install-mcp', '--host', host, '--project', project, '--uninstall', ...rest, '--json']);
  // Claude Code: the document without the entry (re-indented, every other value kept).
  const claude = tempDir('mcp-claude-un');
  const file = path.join(claude, '.mcp.json');
  const original = { mcpServers: { other: { type: 'stdio', command: 'x' } }, extra: 1 };
  fs.writeFileSync(file, JSON.stringify(original));
  assert.equal(install(claude, 'claude-code').code, 0);
  let r = uninstall(claude, 'claude-code');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual([json(r).changed, json(r).uninstalled], [true, true]);
  assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), original);
  const bytes = fs.readFileSync(file);
  r = uninstall(claude, 'claude-code');
  assert.deepEqual([json(r).changed, json(r).uninstalled], [false, false]);
  assert.deepEqual(fs.readFileSync(file), bytes);
  // Codex: byte for byte what was there before install, at the end of the file and between tables.
  for (const before of ['model = "x"\n', 'model = "x"\n\n# Trusted projects\n[projects."/x"]\ntrust_level = "trusted"\n']) {
    const codex = tempDir('mcp-codex-un');
    fs.mkdirSync(path.join(codex, '.codex'));
    const toml = path.join(codex, '.codex', 'config.toml');
    fs.writeFileSync(toml, before);
    assert.equal(install(codex, 'codex').code, 0);
    assert.match(fs.readFileSync(toml, 'utf8'), /\[mcp_servers\.agentscm\]/);
    r = uninstall(codex, 'codex');
    assert.equal(json(r).changed, true, r.stderr);
    assert.equal(fs.readFileSync(toml, 'utf8'), before);
    assert.equal(json(uninstall(codex, 'codex')).changed, false);
  }
  // A table of ours (and its sub-table) between others goes; the comments above the next table stay.
  const mid = tempDir('mcp-codex-mid');
  fs.mkdirSync(path.join(mid, '.codex'));
  const midFile = path.join(mid, '.codex', 'config.toml');
  fs.writeFileSync(midFile, 'model = "x"\n\n[mcp_servers.agentscm]\nurl = "http://old"\n\n[mcp_servers.agentscm.env]\nA = "1"\n\n# keep me\n[mcp_servers.other]\ncommand = "y"\n');
  assert.equal(json(uninstall(mid, 'codex')).changed, true);
  assert.equal(fs.readFileSync(midFile, 'utf8'), 'model = "x"\n\n# keep me\n[mcp_servers.other]\ncommand = "y"\n');
  // Another name is another server (the comment above its header is not the table's: it stays); a
  // missing file is not created.
  assert.equal(json(uninstall(mid, 'codex', '--name', 'other')).changed, true);
  assert.equal(fs.readFileSync(midFile, 'utf8'), 'model = "x"\n\n# keep me\n');
  const none = tempDir('mcp-none');
  assert.equal(json(uninstall(none, 'codex')).changed, false);
  assert.equal(fs.existsSync(path.join(none, '.codex')), false);
  // A server defined another way is refused, as on install.
  for (const text of ['[mcp_servers]\nagentscm = { url = "http://x" }\n', "[mcp_servers]\n'agentscm' = { url = \"http://x\" }\n"]) {
    fs.writeFileSync(midFile, text);
    r = uninstall(mid, 'codex');
    assert.equal(r.code, 3, r.stderr);
    assert.equal(fs.readFileSync(midFile, 'utf8'), text);
  }
  // Installing still needs the endpoint, repository and profile.
  r = agentscm(['install-mcp', '--host', 'codex', '--project', none]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /missing required option --endpoint \(unless --uninstall\)/);
});
