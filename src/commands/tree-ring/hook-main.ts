// Entry of the bundled lifecycle hook (dist/hook/tree-ring-hook.js, built by scripts/bundle-hook.ts).
// Hosts start a process per event, and on small machines each extra ES module costs milliseconds, so
// the project-local launcher runs this one-file bundle for `--root .tree-ring integrations hook …`.
// Same parser, runner and module as `tree-ring integrations hook`; only the loading differs.

import { runHookBundle } from '../../cli/hook-entry.js';
import type { Program } from '../../cli/run.js';
import { TREE_RING_VERSION } from '../../version.js';
import { HOOK_SPEC } from './hook-spec.js';

const PROGRAM: Program = {
  name: 'tree-ring',
  version: TREE_RING_VERSION,
  versionLine: `tree-ring ${TREE_RING_VERSION}`,
  commands: [HOOK_SPEC],
  groups: [],
  defaultErrorPolicy: 'hook',
};

await runHookBundle(PROGRAM);
