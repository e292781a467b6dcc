// Versions printed by --version. A test keeps AGENTSCM_VERSION equal to package.json's version.

export const AGENTSCM_VERSION = '0.1.0';

/** The upstream Tree Ring CLI surface this `tree-ring` implements; upstream plugins check it. */
export const TREE_RING_VERSION = '0.15.6';
