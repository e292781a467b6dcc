// The project stands on Node's public APIs: no file under src/ may reach Node's private internals
// (docs/DEVELOPING.md, "Rules"): process.binding, internalBinding, the internal bindings by name, Node's
// internal module ids, or the private fields and methods of its streams, sockets and buffers. A comment
// naming one counts too: the check is a plain text scan, so an explanation of how a private path would
// work is as unwelcome as the code.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../support/cli.js';

/** Each pattern with what it stands for. */
export const INTERNALS: readonly [RegExp, string][] = [
  [/\bprocess\s*\.\s*binding\b|\bprocess\s*\[\s*['"`]binding['"`]\s*\]/, 'process.binding'],
  [/\b_?linkedBinding\b|\binternalBinding\b/, 'internalBinding / _linkedBinding'],
  [
    /\b(?:tcp|pipe|tty|udp|stream|process|signal|fs_event|fs_dir|js_stream|js_udp|cares|uv|timers|http_parser|crypto|buffer|fs|os|util|module)_wrap\b|\bhttp_parser\b|\bcares_wrap\b/,
    'an internal binding name',
  ],
  [/['"`](?:node:)?internal\//, "an internal module id ('internal/…')"],
  [/\bprimordials\b/, 'primordials'],
  [/\.\s*(?:_handle|_writableState|_readableState|_events|_eventsCount|_idleNext|_idlePrev)\b/, 'a private field of a Node object'],
  [/\.\s*(?:latin1Slice|utf8Slice|asciiSlice|hexSlice|ucs2Slice|base64Slice|latin1Write|utf8Write|asciiWrite)\s*\(/, "one of Buffer's private codec methods"],
];

/** Every .ts file under dir. */
function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => path.join(e.parentPath, e.name));
}

/** "file:line: what" for every line of text that mentions one of the internals. */
export function internalsIn(file: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const [re, what] of INTERNALS) if (re.test(line)) found.push(`${file}:${i + 1}: ${what}: ${line.trim().slice(0, 120)}`);
  });
  return found;
}

test('no file under src/ mentions a private Node internal', () => {
  const found = sources(path.join(REPO_ROOT, 'src')).flatMap((f) => internalsIn(path.relative(REPO_ROOT, f), fs.readFileSync(f, 'utf8')));
  assert.deepEqual(found, []);
});

test('self-test: the scan finds each kind of internal, and passes public APIs', () => {
  const flagged = [
    "const tcp = process.binding('tcp_wrap');",
    "process['binding']('fs')",
    "const { internalBinding } = require('internal/test/binding');",
    "require('node:internal/fs/utils')",
    'new (stream_wrap.WriteWrap)()',
    'fs_event_wrap',
    'socket._handle.fd',
    'stream._readableState.length',
    'buf.latin1Slice(0, n)',
  ];
  for (const line of flagged) assert.notDeepEqual(internalsIn('x.ts', line), [], line);
  const clean = [
    "import * as fs from 'node:fs';",
    "process.getBuiltinModule('node:crypto')",
    "import { enableCompileCache } from 'node:module';",
    'const binding = loadAddon(); // better-sqlite3 finds its addon',
    "buf.toString('latin1', 0, n)",
    'const internal = { handle: 1 };',
  ];
  for (const line of clean) assert.deepEqual(internalsIn('x.ts', line), [], line);
});
