// Entry of `agent-task collect`'s one-file fast path (dist/bundles/agentscm-collect-entry.cjs, built by
// scripts/build-bundles.ts). bin/agentscm.js hands it a plain `agentscm agent-task collect ...` (no help
// or version flag): the same parser, runner, spec and command module as the full CLI (src/entries/cli.ts main),
// with a table of this one command. What it saves is the ES module loader and the command table's
// modules, tens of milliseconds of CPU that collect's start shares with its staging worker's boot and
// the engine on two cores (bench/README.md). The body (collect-flow.ts) loads as before.

import { runProgram, type Program } from '../cli/run.js';
import { ClientConfig } from '../cli/client-config.js';
import type { CommandSpec } from '../cli/types.js';
import { processContext } from '../cli/process-context.js';
import { redactSecrets } from '../core/treering/sensitivity.js';
import { AGENTSCM_VERSION, versionLine } from '../version.js';
import { AGENT_TASK_GROUP, COLLECT_SPEC_DATA } from './collect-spec.js';

/** The table's entry (src/entries/cli.ts): the same data and the same module. */
export const COLLECT_SPEC: CommandSpec = { ...COLLECT_SPEC_DATA, load: () => import('../commands/agent-task/collect.js') };

const PROGRAM: Program = {
  name: 'agentscm',
  version: AGENTSCM_VERSION,
  versionLine: versionLine('agentscm'),
  commands: [COLLECT_SPEC],
  groups: [AGENT_TASK_GROUP],
  defaultErrorPolicy: 'agentscm',
  clientConfig: (env, cwd) => new ClientConfig(env, cwd),
  redact: redactSecrets,
};

/** Runs argv (`agent-task collect ...`) as src/entries/cli.ts main does; the caller sets the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  // A reader that went away (`agentscm … | head`) is not an error worth a stack trace.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  });
  return runProgram(PROGRAM, argv, processContext('agentscm'));
}
