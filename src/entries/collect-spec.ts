// `agent-task collect`'s command spec without its loader: the table's entry (src/entries/cli.ts) and the whole
// table of collect's one-file entry (src/entries/collect.ts), which bin/agentscm.js runs
// for a plain collect. Each adds the same module's import, written relative to itself.

import { CALL_EXIT, CHANGE_ARG, DOCKER_HOST, HUB_CALL, KEY_DIR, TASK_SELECT } from '../cli/shared-options.js';
import type { CommandSpec, GroupSpec } from '../cli/types.js';

/** The group collect belongs to, as the table lists it. */
export const AGENT_TASK_GROUP: GroupSpec = { path: ['agent-task'], summary: 'typed v1 agent-task calls, keys, observations, collection' };

export const COLLECT_SPEC_DATA: Omit<CommandSpec, 'load'> = {
  path: ['agent-task', 'collect'],
  summary: 'run the pinned check of a claimed collector attempt on the exact snapshot, sign, retain and upload the transfer',
  details:
    'Reads the server-derived descriptor and recompiles it against the local authority in --data-dir (registration, installed ' +
    'profile, execution request); checks the attempt is still applicable before running and before signing; durably reserves ' +
    'the execution in the owner-private state dir before any external effect; materializes the snapshot; runs the recipe in a ' +
    'container (no network, read-only snapshot, timeout, bounded output, confirmed removal); signs the transfer with the ' +
    'enrolled key; retains it; uploads it. Exits 0 when the check failed too: the typed failed record was uploaded. Run again ' +
    'after a crash: it never reruns a command (a started container is waited for; a retained transfer is only uploaded). ' +
    'No claim loop and no fallback runtime. A review attempt (a finite-review profile) instead prepares the review from the ' +
    'snapshot, reserves each call and runs the Claude Code CLI given by --reviewer (its SHA-256 checked before the first ' +
    'and after the last call) headless in a private directory; a retained observation is never asked again. ' +
    'Exit 7 when the attempt is no longer applicable or the execution is uncertain, ' +
    '12 when the runtime is unavailable. ' + CALL_EXIT,
  args: [CHANGE_ARG],
  options: [
    ...HUB_CALL,
    ...TASK_SELECT,
    { flag: 'attempt-id', value: 'ID', help: 'the claimed attempt (from collector-claim)', required: true },
    KEY_DIR,
    { flag: 'state-dir', value: 'DIR', help: 'owner-private collector state', defaultText: 'KEY_DIR/state' },
    DOCKER_HOST,
    { flag: 'reviewer', value: 'PATH', help: 'a review attempt: the operator-selected Claude Code executable (absolute; its SHA-256 must be the profile\'s)' },
  ],
};
