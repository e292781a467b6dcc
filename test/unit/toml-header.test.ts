// The TOML table headers install-mcp finds in a Codex config.toml (src/core/hooks/mcp-install.ts): only
// real headers, with their keys unquoted; a line of a multi-line array that starts with "[" is none.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'smol-toml';
import { mergeCodexMcp, mergeCodexMcpChecked, tableHeader, tableHeaders } from '../../src/core/hooks/mcp-install.js';

test('tableHeader: bare, quoted and literal keys, dotted with spaces, arrays of tables, a trailing comment; other lines are none', () => {
  assert.deepEqual(tableHeader('[mcp_servers.agentscm]'), ['mcp_servers', 'agentscm']);
  assert.deepEqual(tableHeader('  [ mcp_servers . "agentscm" . env ]  # mine'), ['mcp_servers', 'agentscm', 'env']);
  assert.deepEqual(tableHeader("[projects.'/home/a b/x']"), ['projects', '/home/a b/x']);
  assert.deepEqual(tableHeader('[projects."/x/y.z"]'), ['projects', '/x/y.z']);
  assert.deepEqual(tableHeader('[[profiles]]'), ['profiles']);
  for (const notHeader of ['  [1, 2],', '[1, 2]', '["a", "b"]', '[[1, 2], [3]]', '[a.]', '[.a]', '[]', '[a] b', '[[a]', '[a]]', 'a = [', '[a."b\\"c"]']) {
    assert.equal(tableHeader(notHeader), undefined, notHeader);
  }
});

test('mergeCodexMcp: a multi-line array whose lines start with "[" stays inside its table, ours or another', () => {
  const other = '[tools.matrix]\nrows = [\n  [1, 2],\n  [3, 4],\n]\n';
  const change = { name: 'agentscm', url: 'http://h/mcp', tokenEnv: 'T' };
  // Ours, with such an array in it: the whole old table goes, the next table stays whole.
  const old = '[mcp_servers.agentscm]\nurl = "http://old"\nextra = [\n  [1],\n  [2]\n]\n\n' + other;
  const merged = mergeCodexMcp(old, change);
  assert.equal(merged.text, '[mcp_servers.agentscm]\nurl = "http://h/mcp"\nbearer_token_env_var = "T"\n\n' + other);
  // Another table's array is kept as it was.
  assert.equal(mergeCodexMcp(other, change).text, other + '\n[mcp_servers.agentscm]\nurl = "http://h/mcp"\nbearer_token_env_var = "T"\n');
  // A quoted [mcp_servers] header still has its inline definition of the server refused.
  assert.throws(() => mergeCodexMcp('["mcp_servers"]\nagentscm = { url = "x" }\n', change), /defines mcp_servers\.agentscm other than/);
});

test('tableHeaders: lines inside a multi-line array are no headers; brackets in strings and comments do not count', () => {
  const lines = [
    '[a]', 'x = [', '  [2]', '  ["]", \'[\'],', ']', '[b]', 'y = "[" # [', '[c]', 's = "a\\"[" ', '[d]', 'z = [ # ]', '  [1]]', '[e]',
  ];
  assert.deepEqual(tableHeaders(lines), [['a'], undefined, undefined, undefined, undefined, ['b'], undefined, ['c'], undefined, ['d'], undefined, undefined, ['e']]);
});

test('mergeCodexMcp on a CRLF config: the comment above the next table stays, new lines end in CRLF, other bytes are kept', () => {
  const change = { name: 'agentscm', url: 'http://h/mcp', tokenEnv: 'T' };
  const remove = { name: 'agentscm', remove: true } as const;
  const ours = '[mcp_servers.agentscm]\r\nurl = "http://h/mcp"\r\nbearer_token_env_var = "T"\r\n';
  const crlf = '[a]\r\nx = 1\r\n\r\n[mcp_servers.agentscm]\r\nurl = "http://old"\r\n\r\n# about b\r\n[b]\r\ny = 2\r\n';
  assert.equal(mergeCodexMcp(crlf, change).text, `[a]\r\nx = 1\r\n\r\n${ours}\r\n# about b\r\n[b]\r\ny = 2\r\n`);
  assert.equal(mergeCodexMcp(mergeCodexMcp(crlf, change).text, change).changed, false);
  assert.equal(mergeCodexMcp(crlf, remove).text, '[a]\r\nx = 1\r\n\r\n# about b\r\n[b]\r\ny = 2\r\n');
  // Appended to a CRLF file, and removed again: the file is what it was. A comment with a trailing
  // space before its CRLF and an LF line in a CRLF file keep their bytes.
  const other = '# top \r\n[b]\r\ny = 2\n# about c\r\n[c]\r\n';
  const installed = mergeCodexMcp(other, change).text;
  assert.equal(installed, other + '\r\n' + ours);
  assert.equal(mergeCodexMcp(installed, remove).text, other);
  // A CRLF file whose last line has no line ending gets a CRLF one.
  assert.equal(mergeCodexMcp('[b]\r\ny = 2', change).text, '[b]\r\ny = 2\r\n\r\n' + ours);
});

test('mergeCodexMcp refuses the server defined with quoted or literal keys, in [mcp_servers] or at the top level, on install and removal', () => {
  const change = { name: 'agentscm', url: 'http://h/mcp', tokenEnv: 'T' };
  const remove = { name: 'agentscm', remove: true } as const;
  for (const text of [
    "[mcp_servers]\n'agentscm' = { url = \"http://other\" }\n",
    "[mcp_servers]\n'agentscm'.url = \"http://other\"\n",
    '"mcp_servers".agentscm.url = "http://other"\n',
    "'mcp_servers'.\"agentscm\".url = \"http://other\"\n",
    "mcp_servers.'agentscm'.url = \"http://other\"\n",
    "'mcp_servers' = { agentscm = { url = \"http://other\" } }\n",
    '"mcp_servers" = {}\n',
  ]) {
    assert.throws(() => mergeCodexMcp(text, change), /defines mcp_servers\.agentscm other than/, text);
    assert.throws(() => mergeCodexMcp(text, remove), /defines mcp_servers\.agentscm other than/, text);
  }
  // Another server, however its key is spelled, is no conflict; nor is a key that only starts with NAME.
  for (const text of ["[mcp_servers]\n'other' = { url = \"x\" }\n", '"mcp_servers".other.url = "x"\n', "[mcp_servers]\n'agentscm-2' = { url = \"x\" }\n"]) {
    assert.equal(mergeCodexMcp(text, change).changed, true, text);
  }
});

test('tableHeaders: lines inside multi-line basic and literal strings are neither headers nor brackets', () => {
  const lines = [
    '[a]', "notes = '''", 'see [the docs', '[not.a.header]', "'''", '[b]', 's = """', '  \\""" [ still in', '[c]', 'end"""" # [', '[d]',
    'x = [ """', ']', '"""', '  [1],', ']', '[e]', "t = '''one line [''' # [", '[f]', 'u = """a\\\\""" [', '[g]', ']', '[h]',
  ];
  assert.deepEqual(tableHeaders(lines), [
    ['a'], undefined, undefined, undefined, undefined, ['b'], undefined, undefined, undefined, undefined, ['d'],
    undefined, undefined, undefined, undefined, undefined, ['e'], undefined, ['f'], undefined, undefined, undefined, ['h'],
  ]);
});

test('mergeCodexMcp: an unbalanced "[" or a header-like line in a multi-line string hides no table; installing twice is one table', () => {
  const change = { name: 'agentscm', url: 'http://h/mcp', tokenEnv: 'T' };
  const ours = '[mcp_servers.agentscm]\nurl = "http://h/mcp"\nbearer_token_env_var = "T"\n';
  const mls = "[profile]\nnotes = '''\nsee [the docs\n'''\n\n[mcp_servers.agentscm]\nurl = \"http://old\"\n";
  const once = mergeCodexMcp(mls, change);
  assert.equal(once.text, "[profile]\nnotes = '''\nsee [the docs\n'''\n\n" + ours);
  assert.deepEqual(mergeCodexMcp(once.text, change), { text: once.text, changed: false });
  // A header-like line or a definition of the server inside a string is the string's text.
  const text = '[mcp_servers.other]\nhelp = """\n[mcp_servers.agentscm]\n"""\n\n[mcp_servers]\nx = \'\'\'\nagentscm = 1\n\'\'\'\n';
  assert.equal(mergeCodexMcp(text, change).text, text + '\n' + ours);
  // The line that closes a string in our table is not a comment of the next table's.
  const closing = "[mcp_servers.agentscm]\nnotes = '''\n# x'''\n[b]\n";
  assert.equal(mergeCodexMcp(closing, change).text, ours + '\n[b]\n');
});

test('mergeCodexMcpChecked: a config that is not TOML, or a merge a TOML parser reads as more than the one change, is BAD_MCP_CONFIG', () => {
  const parseToml = (t: string) => parse(t, { integersAsBigInt: 'asNeeded' });
  const change = { name: 'agentscm', url: 'http://h/mcp', tokenEnv: 'T' };
  const remove = { name: 'agentscm', remove: true } as const;
  const ours = '[mcp_servers.agentscm]\nurl = "http://h/mcp"\nbearer_token_env_var = "T"\n';
  // The parser's first line and position, not its excerpt of the file (which could hold a secret).
  for (const e of [change, remove]) {
    assert.throws(
      () => mergeCodexMcpChecked(parseToml, 'token = "s3cret"\na = \n', e),
      (err: Error & { code?: string }) => err.code === 'BAD_MCP_CONFIG' && /^the existing config\.toml is not valid TOML: .+ \(line 2, column 5\)/.test(err.message) && !err.message.includes('s3cret'),
    );
  }
  // Keys with escapes, which the line reader does not take apart: the parser sees the second definition.
  for (const text of ['"mcp_s\\u0065rvers".agentscm.url = "x"\n', '[mcp_servers]\n"agents\\u0063m" = { url = "x" }\n']) {
    for (const e of [change, remove]) assert.throws(() => mergeCodexMcpChecked(parseToml, text, e), /cannot be changed line by line/, text);
  }
  assert.throws(() => mergeCodexMcpChecked(parseToml, 'mcp_servers = 1\n', remove), /not a table|other than/);
  // What merges cleanly passes unchanged: values the parser turns into dates and big integers, other
  // servers, an [mcp_servers] table that stays, and the file with no mcp_servers left at all.
  const other = 'big = 9223372036854775807\nd = 1979-05-27T07:32:00Z\n\n[mcp_servers]\n\n[mcp_servers.other]\ncommand = "x"\n';
  const installed = mergeCodexMcpChecked(parseToml, other, change);
  assert.equal(installed.text, other + '\n' + ours);
  assert.deepEqual(mergeCodexMcpChecked(parseToml, installed.text, remove), { text: other, changed: true });
  assert.deepEqual(mergeCodexMcpChecked(parseToml, 'x = 1\n\n' + ours, remove), { text: 'x = 1\n', changed: true });
  assert.deepEqual(mergeCodexMcpChecked(parseToml, undefined, change), { text: ours, changed: true });
  assert.deepEqual(mergeCodexMcpChecked(parseToml, ours, change), { text: ours, changed: false });
});
