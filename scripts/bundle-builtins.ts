// esbuild turns each `import * as x from 'node:…'` into an ES-module namespace copy of the builtin
// (__toESM: one getter per export, at every import site: node:fs alone has a hundred), which a cold start
// pays for. Builtins need no interop for namespace and named imports, so the one-file bundles use them
// directly. A default import of a builtin would read `.default`, which only the copy has: the build
// refuses such a bundle instead of shipping one that fails at run time.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { wrapBodyText } from '../src/cli/code-cache.js';

export function useBuiltinsDirectly(file: string): void {
  // A builtin comes from process.getBuiltinModule (Node 20.16+), not from require: the first public
  // require of a builtin in a process runs the CommonJS loader's resolution and builds the builtin's
  // ES module facade (about 0.15 ms for node:path in a cold process, against 0.05 ms).
  const text = fs
    .readFileSync(file, 'utf8')
    .replace(/__toESM\(require\("(node:[a-z_/]+)"\)(?:, 1)?\)/g, 'require("$1")')
    .replace(/\brequire\("(node:[a-z_/]+)"\)/g, '(process.getBuiltinModule?.("$1") ?? require("$1"))');
  const defaultUse = /\bimport_node_[a-z_]+\d*\.default\b/.exec(text);
  if (defaultUse) throw new Error(`${file}: a default import of a Node builtin (${defaultUse[0]}); use import * as`);
  fs.writeFileSync(file, lazyCommanderChildProcess(file, text));
}

/**
 * commander (the argv parser, bundled in) takes node:child_process when it loads, for the executable
 * subcommands this project never has; a cold process pays about as much for loading that builtin as for
 * all of commander's own code. Its one use (`childProcess.spawn`) then loads it. The build fails when
 * a bundle carries commander and the line is not there, so that a new commander cannot undo this unseen.
 */
function lazyCommanderChildProcess(file: string, text: string): string {
  if (!text.includes('commander.unknownCommand')) return text;
  const eager = 'var childProcess = (process.getBuiltinModule?.("node:child_process") ?? require("node:child_process"));';
  if (!text.includes(eager)) throw new Error(`${file}: commander's require of node:child_process is not where the build expects it`);
  return text.replace(eager, 'var childProcess = { spawn: (...args) => (process.getBuiltinModule?.("node:child_process") ?? require("node:child_process")).spawn(...args) };');
}

/**
 * esbuild options that give a hook bundle src/core/fs/direct.ts wherever its modules import `node:fs`:
 * the same functions, reaching the fs binding without node:fs's JavaScript, which a cold process would
 * compile on first use (see direct.ts). A name direct.ts does not export fails the build instead of
 * being undefined at run time. (better-sqlite3's own `require('fs')` in tree-ring's bundles is left to
 * node:fs: it measured the same either way.)
 */
export function directFsOptions(root: string): { alias: Record<string, string>; logOverride: Record<string, 'error'> } {
  return { alias: { 'node:fs': path.join(root, 'dist/src/core/fs/direct.js') }, logOverride: { 'import-is-undefined': 'error' } };
}

/**
 * Writes a body as the function expression its loader compiles (src/cli/code-cache.ts, BODY_HEAD), so
 * that a run need not copy it into a wrapped second string. The loaders read a body as Latin-1 when it
 * is ASCII: esbuild's default output is, and a body that is not would only be read more slowly.
 */
export function wrapBody(file: string): void {
  fs.writeFileSync(file, wrapBodyText(fs.readFileSync(file, 'utf8')));
}
