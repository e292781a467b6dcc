// The command table as a contract: every command loads and has help; the man pages are generated from
// it and the committed ones must be current.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { AGENTSCM, COMMANDS, TREE_RING } from '../../src/entries/cli.js';
import { runProgram } from '../../src/cli/run.js';
import { usageLine } from '../../src/cli/help.js';
import type { CommandContext } from '../../src/cli/types.js';
import { EXIT_CODES } from '../../src/core/errors.js';
import { manPages } from '../../scripts/man-pages.js';
import { REPO_ROOT } from '../support/cli.js';

function memoryContext(): { ctx: CommandContext; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  const ctx: CommandContext = {
    stdout: { write: (c: string | Uint8Array) => (out += String(c)) },
    stderr: { write: (c: string | Uint8Array) => (err += String(c)) },
    stdin: process.stdin,
    env: {},
    cwd: REPO_ROOT,
    program: 'agentscm',
  };
  return { ctx, out: () => out, err: () => err };
}

test('every command has a unique path, loads a module with run(), and answers --help', async () => {
  const seen = new Set<string>();
  for (const c of COMMANDS) {
    const key = c.path.join(' ');
    assert.ok(!seen.has(key), `duplicate command ${key}`);
    seen.add(key);
    assert.ok(c.summary.length > 0, `${key} has a summary`);
    const mod = await c.load();
    assert.equal(typeof mod.run, 'function', `${key} exports run`);
    const m = memoryContext();
    assert.equal(await runProgram(AGENTSCM, [...c.path, '--help'], m.ctx), 0, key);
    assert.ok(m.out().startsWith(`usage: ${usageLine('agentscm', c)}\n`), key);
    for (const o of c.options ?? []) assert.ok(m.out().includes(`--${o.flag}`), `${key} --help names --${o.flag}`);
  }
});

test('top-level help lists every exit code', async () => {
  const m = memoryContext();
  assert.equal(await runProgram(AGENTSCM, ['--help'], m.ctx), 0);
  for (const [kind, code] of Object.entries(EXIT_CODES)) assert.match(m.out(), new RegExp(`\\b${code}\\s+${kind}: `), kind);
  const t = memoryContext();
  assert.equal(await runProgram(TREE_RING, ['--help'], t.ctx), 0);
  const rows = t.out().slice(t.out().indexOf('exit codes:')).split('\n').slice(1).filter((l) => /^ {2}\d/.test(l));
  assert.deepEqual(rows.map((l) => l.trim().split(/\s+/)[0]), ['0', '1', '2'], 'tree-ring: errors exit 2, the lifecycle hook\'s 1');
});

test('the README exit-code table matches the one in src/core/errors.ts', () => {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const rows = [...readme.matchAll(/^\| (\d+) \| ([A-Z_]+) \|/gm)].map((m) => [m[2], Number(m[1])]);
  assert.deepEqual(rows, Object.entries(EXIT_CODES));
});

test('committed man pages are current', () => {
  for (const page of manPages()) {
    let committed = '';
    try {
      committed = readFileSync(path.join(REPO_ROOT, page.file), 'utf8');
    } catch {
      // reported below
    }
    assert.ok(committed === page.content, `${page.file} is stale: run npm run man and commit the result`);
  }
});

test('man pages cover every command, are reproducible and carry no build date', () => {
  const [agentscmPage, treeRingPage] = manPages().map((p) => p.content);
  assert.deepEqual(manPages(), manPages());
  for (const c of AGENTSCM.commands) assert.ok(agentscmPage!.includes(`.SS "agentscm ${c.path.join(' ').replace(/-/g, '\\-')}"`), c.path.join(' '));
  for (const c of TREE_RING.commands) assert.ok(treeRingPage!.includes(`.SS "tree\\-ring ${c.path.join(' ').replace(/-/g, '\\-')}"`), c.path.join(' '));
  for (const [kind, code] of Object.entries(EXIT_CODES)) assert.ok(agentscmPage!.includes(`.TP\n.B ${code}\n${kind}: `), `agentscm.1 exit status ${code}`);
  const treeRingStatus = treeRingPage!.slice(treeRingPage!.indexOf('.SH EXIT STATUS'));
  assert.deepEqual([...treeRingStatus.matchAll(/^\.B (\d+)$/gm)].map((m) => m[1]), ['0', '1', '2'], 'tree-ring: errors exit 2, the lifecycle hook\'s 1');
  const today = new Date().toISOString().slice(0, 10);
  for (const page of [agentscmPage!, treeRingPage!]) assert.ok(!page.includes(today), 'no generation date in the page');
});
