#!/usr/bin/env node
// Launcher: refuse an unsupported Node.js, answer a bare --version from a module that imports nothing
// (it must start about as fast as bare node: bench/version.bench.ts), else hand argv to the command table.
// CommonJS like bin/tree-ring.js (bin/package.json), loading the ES modules with import().
'use strict';
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
 * The one-file entries of single commands (src/entries/one-command.ts): the same parser, runner and
 * command module with a table of that one command, without the ES module loader. Help and version
 * flags (their text comes from the whole table) and a build without the bundle go to the full CLI.
 */
const ONE_COMMAND_ENTRIES = {
  collect: '../dist/bundles/agentscm-collect-entry.cjs',
  checkpoint: '../dist/bundles/agentscm-checkpoint-entry.cjs',
};
function oneCommandEntry(args) {
  const bundle = args[0] === 'agent-task' && args[1] === 'collect' ? ONE_COMMAND_ENTRIES.collect : args[0] === 'checkpoint' ? ONE_COMMAND_ENTRIES.checkpoint : undefined;
  if (bundle === undefined || args.some((a) => a === '--help' || a === '-h' || a.startsWith('--help=') || a === '--version')) return undefined;
  try {
    return require(bundle);
  } catch (e) {
    if (e.code !== 'MODULE_NOT_FOUND') throw e;
    return undefined;
  }
}
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`agentscm: error: Node.js >= 20.19 is required (this is ${process.versions.node})\n`);
  process.exitCode = 1;
} else if (argv.length === 1 && argv[0] === '--version') {
  versionModule().then(({ versionLine }) => {
    process.stdout.write(versionLine('agentscm') + '\n');
  });
} else {
  const entry = oneCommandEntry(argv);
  if (entry) {
    entry.main(argv).then((code) => {
      process.exitCode = code;
    });
  } else {
    import('../dist/src/entries/cli.js').then(async ({ main }) => {
      process.exitCode = await main(argv, 'agentscm');
    });
  }
}
