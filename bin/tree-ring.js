#!/usr/bin/env node
// Launcher: refuse an unsupported Node.js, answer a bare --version from a module that imports nothing
// (it must start about as fast as bare node: bench/version.bench.ts), run a plain `recall` from its
// one-file bundle, else hand argv to the command table. CommonJS (bin/package.json): an ES module entry
// alone costs a cold start about 10 ms, which recall, run on every agent turn, cannot afford.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const [major, minor] = process.versions.node.split('.').map(Number);
const argv = process.argv.slice(2);

/** src/version.ts as the build's CommonJS copy (no ES module loader), or the ES module after a bare tsc. */
function versionModule() {
  try {
    return Promise.resolve(require('../dist/bundles/version.cjs'));
  } catch (e) {
    if (e.code !== 'MODULE_NOT_FOUND') throw e;
    return import('../dist/src/version.js');
  }
}

/**
 * `recall` preceded only by --root/--json, with no help flag and no hook words anywhere (those change
 * how the full command table reports errors): the bundle has the same parser, runner and command module.
 */
function recallFastPath(args) {
  if (args.some((a) => a === '--help' || a === '-h' || a.startsWith('--help='))) return false;
  if (args.some((a, i) => a === 'integrations' && args[i + 1] === 'hook')) return false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--json' || a.startsWith('--root=')) continue;
    if (a === '--root') {
      i++;
      continue;
    }
    return a === 'recall';
  }
  return false;
}

if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`tree-ring: error: Node.js >= 20.19 is required (this is ${process.versions.node})\n`);
  process.exitCode = 2;
} else if (argv.length === 1 && argv[0] === '--version') {
  versionModule().then(({ versionLine }) => {
    process.stdout.write(versionLine('tree-ring') + '\n');
  });
} else if (recallFastPath(argv) && fs.existsSync(path.join(__dirname, '../dist/bundles/tree-ring-recall.cjs'))) {
  require('../dist/bundles/tree-ring-recall.cjs');
} else {
  import('../dist/src/entries/cli.js').then(async ({ main }) => {
    process.exitCode = await main(argv, 'tree-ring');
  });
}
