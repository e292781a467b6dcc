// The two man pages, rendered from the command table. `npm run man` writes them to man/; a test renders
// them in memory and fails when the committed files differ.

import { AGENTSCM, TREE_RING } from '../src/entries/cli.js';
import { renderManPage } from '../src/cli/help.js';
import { AGENTSCM_VERSION } from '../src/version.js';

export interface ManPage {
  /** Path relative to the repository root. */
  readonly file: string;
  readonly content: string;
}

// The date field names the release, not the day the page was generated, so regeneration is reproducible.
const DATE = `agentscm ${AGENTSCM_VERSION}`;

const ENVIRONMENT = {
  title: 'Environment',
  body: 'AGENTSCM_DEBUG=1 prints the stack of an internal error (exit 1) on stderr.',
};

export function manPages(): ManPage[] {
  return [
    {
      file: 'man/agentscm.1',
      content: renderManPage({
        program: AGENTSCM.name,
        version: AGENTSCM.version,
        date: DATE,
        summary: 'prove agent work before it may stop, and remember what was learned',
        description:
          'agentscm is a Unix toolkit for coding agents and their operators: typed agent-task calls, Ed25519 keys and ' +
          'signed observations, signed collector evidence, Stop hooks and Tree Ring memory. Commands talk to a Hub only ' +
          'over authenticated HTTP.\n\n' +
          'Every command that returns data accepts --json and then prints exactly one JSON document on stdout; an error ' +
          'in --json mode is printed there too, as {"error":{"kind","code","message","exit_code"}}, with a non-zero exit. ' +
          'Human text goes to stdout, diagnostics to stderr.\n\n' +
          'The same program is installed as tree-ring: "tree-ring X" is "agentscm tree-ring X" (see tree-ring(1)).',
        commands: AGENTSCM.commands,
        extraSections: [ENVIRONMENT, { title: 'See also', body: 'tree-ring(1)' }],
      }),
    },
    {
      file: 'man/tree-ring.1',
      content: renderManPage({
        program: TREE_RING.name,
        version: TREE_RING.version,
        date: DATE,
        summary: 'Tree Ring memory for coding agents',
        description:
          'tree-ring is agentscm entered at its tree-ring group: "tree-ring X" and "agentscm tree-ring X" are the same ' +
          `command. tree-ring --version prints the upstream Tree Ring CLI version (${TREE_RING.version}) whose surface it implements.`,
        commands: TREE_RING.commands,
        extraSections: [{ title: 'See also', body: 'agentscm(1)' }],
        ...(TREE_RING.exitStatus ? { exitStatus: TREE_RING.exitStatus } : {}),
      }),
    },
  ];
}
