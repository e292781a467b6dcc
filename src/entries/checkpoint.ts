// Entry of `checkpoint`'s one-file fast path (dist/bundles/agentscm-checkpoint-entry.cjs, built by
// scripts/build-bundles.ts). bin/agentscm.js hands it a plain `agentscm checkpoint ...` (no help or
// version flag): the same parser, runner, spec and command module as the full CLI, with a table of this
// one command (src/entries/one-command.ts). The bundle carries the command module and what it imports,
// so a checkpoint starts without the ES module loader (bench/README.md, workspace-scale).

import type { CommandSpec } from '../cli/types.js';
import { CHECKPOINT_SPEC_DATA } from './checkpoint-spec.js';
import { oneCommandProgram, runOneCommand } from './one-command.js';

/** The table's entry (src/entries/cli.ts): the same data and the same module. */
export const CHECKPOINT_SPEC: CommandSpec = { ...CHECKPOINT_SPEC_DATA, load: () => import('../commands/checkpoint.js') };

const PROGRAM = oneCommandProgram(CHECKPOINT_SPEC);

/** Runs argv (`checkpoint ...`) as src/entries/cli.ts main does; the caller sets the exit code. */
export const main = (argv: readonly string[]): Promise<number> => runOneCommand(PROGRAM, argv);
