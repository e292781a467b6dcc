#!/usr/bin/env node
// Launcher: refuse an unsupported Node.js, answer a bare --version from a module that imports nothing
// (it must start about as fast as bare node: bench/version.bench.ts), else hand argv to the command table.
const [major, minor] = process.versions.node.split('.').map(Number);
const argv = process.argv.slice(2);
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`tree-ring: error: Node.js >= 20.19 is required (this is ${process.versions.node})\n`);
  process.exitCode = 2;
} else if (argv.length === 1 && argv[0] === '--version') {
  const { versionLine } = await import('../dist/src/version.js');
  process.stdout.write(versionLine('tree-ring') + '\n');
} else {
  const { main } = await import('../dist/src/cli.js');
  process.exitCode = await main(argv, 'tree-ring');
}
