// Entry of the bundled lifecycle hook (dist/bundles/tree-ring-hook.cjs, built by scripts/build-bundles.ts).
// Hosts start a process per event, and on small machines each extra module costs milliseconds, so the
// project-local launcher runs this one-file CommonJS bundle for `--root .tree-ring integrations hook …`.
// Same parser, runner and module as `tree-ring integrations hook`; only the loading differs.

import { runHookBundle } from '../cli/hook-entry.js';
import type { Program } from '../cli/run.js';
import { TREE_RING_VERSION } from '../version.js';
import { HOOK_SPEC } from './treering-hook-spec.js';

const PROGRAM: Program = {
  name: 'tree-ring',
  version: TREE_RING_VERSION,
  versionLine: `tree-ring ${TREE_RING_VERSION}`,
  commands: [HOOK_SPEC],
  groups: [],
  defaultErrorPolicy: 'hook',
};

// No top-level await: the bundle is CommonJS. The runner maps errors to exit codes; anything that still
// escaped would end the process as an uncaught rejection (exit 1), as it did with top-level await.
void runHookBundle(PROGRAM);
