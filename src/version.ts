// Versions printed by --version. A test keeps AGENTSCM_VERSION equal to package.json's version.
// This module imports nothing: the launchers answer a bare --version from it alone.

export const AGENTSCM_VERSION = '0.1.0';

/** The upstream Tree Ring CLI surface this `tree-ring` implements; upstream plugins check it. */
export const TREE_RING_VERSION = '0.15.12';

/** What `--version` prints for each program, without the trailing newline. */
export function versionLine(program: 'agentscm' | 'tree-ring'): string {
  return program === 'agentscm' ? `agentscm ${AGENTSCM_VERSION} (tree-ring ${TREE_RING_VERSION})` : `tree-ring ${TREE_RING_VERSION}`;
}
