#!/usr/bin/env node
// Launcher: refuse an unsupported Node.js, then hand argv to the compiled command table.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`agentscm: error: Node.js >= 20.19 is required (this is ${process.versions.node})\n`);
  process.exitCode = 1;
} else {
  const { main } = await import('../dist/src/cli.js');
  process.exitCode = await main(process.argv.slice(2), 'agentscm');
}
