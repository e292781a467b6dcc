// Entry of `agent-task collect`'s one-file fast path (dist/bundles/agentscm-collect-entry.cjs, built by
// scripts/build-bundles.ts). bin/agentscm.js hands it a plain `agentscm agent-task collect ...` (no help
// or version flag): the same parser, runner, spec and command module as the full CLI (src/entries/cli.ts main),
// with a table of this one command (src/entries/one-command.ts). What it saves is the ES module loader and
// the command table's modules, tens of milliseconds of CPU that collect's start shares with its staging
// worker's boot and the engine on two cores (bench/README.md). The body (collect-flow.ts) loads as before.

import type { CommandSpec } from '../cli/types.js';
import { AGENT_TASK_GROUP, COLLECT_SPEC_DATA } from './collect-spec.js';
import { oneCommandProgram, runOneCommand } from './one-command.js';

/** The table's entry (src/entries/cli.ts): the same data and the same module. */
export const COLLECT_SPEC: CommandSpec = { ...COLLECT_SPEC_DATA, load: () => import('../commands/agent-task/collect.js') };

const PROGRAM = oneCommandProgram(COLLECT_SPEC, [AGENT_TASK_GROUP]);

/** Runs argv (`agent-task collect ...`) as src/entries/cli.ts main does; the caller sets the exit code. */
export const main = (argv: readonly string[]): Promise<number> => runOneCommand(PROGRAM, argv);
