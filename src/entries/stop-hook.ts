// Entry of the bundled Stop hook body (dist/bundles/agentscm-stop-hook.body.cjs, built by scripts/build-bundles.ts;
// the registered entry dist/bundles/agentscm-stop-hook.cjs loads it with its code cache, see stop-hook-loader.ts).
// Hosts start a process on every stop, and each extra ES module costs start-up time, so install-stop
// registers this one-file bundle. Same parser, runner and modules as `agentscm skill-workflow
// task-stop|task-codex-stop`; only the loading differs.

import { runHookBundle } from '../cli/hook-entry.js';
import type { Program } from '../cli/run.js';
import { AGENTSCM_VERSION } from '../version.js';
import { STOP_HOOK_SPECS } from './stop-hook-spec.js';

const PROGRAM: Program = {
  name: 'agentscm',
  version: AGENTSCM_VERSION,
  versionLine: `agentscm ${AGENTSCM_VERSION}`,
  commands: STOP_HOOK_SPECS,
  groups: [{ path: ['skill-workflow'], summary: 'Stop hooks' }],
  defaultErrorPolicy: 'hook',
};

// No top-level await: the bundle is CommonJS, so that Node's ES module loader (and its scan of every
// CommonJS dependency) never runs on the hook path. runHookBundle sets the exit code itself. When the
// check has returned, the answer is on stdout and the counter file is renamed into place (both
// synchronous); what is left is the Hub connection's close and Node's teardown, which the process skips
// (bench/README.md: 1.3-5.8 ms in alternating runs).
void runHookBundle(PROGRAM, { exitWhenDone: true });
