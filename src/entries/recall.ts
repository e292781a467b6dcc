// Entry of `tree-ring recall`'s one-file fast path (dist/bundles/tree-ring-recall.cjs, built by
// scripts/build-bundles.ts). Agents recall on every turn and each run is a new process, so
// bin/tree-ring.js hands a plain `recall` invocation (see recallFastPath there) to this CommonJS
// bundle. Same parser, runner and command module as the full CLI; only the loading differs.

import { runHookBundle } from '../cli/hook-entry.js';
import type { Program } from '../cli/run.js';
import { redactSecrets } from '../core/treering/sensitivity.js';
import { TREE_RING_VERSION } from '../version.js';
import { RECALL_SPEC } from './recall-spec.js';

const PROGRAM: Program = {
  name: 'tree-ring',
  version: TREE_RING_VERSION,
  versionLine: `tree-ring ${TREE_RING_VERSION}`,
  commands: [RECALL_SPEC],
  groups: [],
  defaultErrorPolicy: 'tree-ring',
  redact: redactSecrets,
};

// No top-level await: the bundle is CommonJS.
void runHookBundle(PROGRAM);
