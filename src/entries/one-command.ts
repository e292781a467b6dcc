// What the one-file entries of single commands share (src/entries/collect.ts, src/entries/checkpoint.ts):
// the full CLI's program (src/entries/cli.ts) with a table of that one command, run as main runs it.
// bin/agentscm.js hands such an entry a plain invocation of its command (no help or version flag: their
// text comes from the whole table). What it saves is the ES module loader and the command table's
// modules: tens of milliseconds on every run (bench/README.md).

import { runProgram, type Program } from '../cli/run.js';
import { ClientConfig } from '../cli/client-config.js';
import type { CommandSpec, GroupSpec } from '../cli/types.js';
import { processContext } from '../cli/process-context.js';
import { redactSecrets } from '../core/treering/sensitivity.js';
import { AGENTSCM_VERSION, versionLine } from '../version.js';

/** The program of agentscm with `commands` (and the groups they belong to) in its table. */
export function agentscmProgram(commands: readonly CommandSpec[], groups: readonly GroupSpec[]): Program {
  return {
    name: 'agentscm',
    version: AGENTSCM_VERSION,
    versionLine: versionLine('agentscm'),
    commands,
    groups,
    defaultErrorPolicy: 'agentscm',
    clientConfig: (env, cwd) => new ClientConfig(env, cwd),
    redact: redactSecrets,
  };
}

/** The program of agentscm with only `command` (and the groups it belongs to) in its table. */
export const oneCommandProgram = (command: CommandSpec, groups: readonly GroupSpec[] = []): Program => agentscmProgram([command], groups);

/** Runs argv as src/entries/cli.ts main does; the caller sets the exit code. */
export const runOneCommand = (program: Program, argv: readonly string[]): Promise<number> => runProgram(program, argv, processContext('agentscm'));
