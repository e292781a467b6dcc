// `tree-ring recall`'s command spec for its one-file fast path (recall.ts). It equals the table
// entry `tree-ring recall` in the command table (cli.ts) minus the group word; a test keeps the two equal.

import type { CommandSpec } from '../cli/types.js';

export const RECALL_SPEC: CommandSpec = {
  path: ['recall'],
  summary: 'recall ranked memories (--json: an array of {memory, score, ranking})',
  details:
    'Full-text recall with every filter applied before the candidate limit: AND query first, then variants without one ' +
    'ring-intent word, then an OR fallback. Only normal-sensitivity, live (not superseded, expired or redacted) memories unless asked. ' +
    'Identity filters fall back to the TREE_RING_* environment variables. Never creates or modifies the store.',
  args: [{ name: 'QUERY', help: 'words to look for', required: true }],
  options: [
    { flag: 'root', value: 'DIR', help: 'memory store root', defaultText: '.tree-ring' },
    { flag: 'project', value: 'NAME', help: 'project the memory belongs to' },
    { flag: 'agent-profile', value: 'ID', help: 'agent profile (default $TREE_RING_AGENT_PROFILE)' },
    { flag: 'workflow-id', value: 'ID', help: 'workflow id (default $TREE_RING_WORKFLOW_ID)' },
    { flag: 'session-id', value: 'ID', help: 'session id (default $TREE_RING_SESSION_ID)' },
    { flag: 'scope', value: 'SCOPE', help: 'only this scope' },
    { flag: 'ring', value: 'RING', help: 'only these rings (repeatable)', repeatable: true },
    { flag: 'event-type', value: 'TYPE', help: 'only these event types (repeatable)', repeatable: true },
    { flag: 'limit', value: 'N', help: 'at most N results (up to 10000)', defaultText: '8' },
    { flag: 'include-sensitive', help: 'also recall sensitive memories' },
    { flag: 'include-superseded', help: 'also recall superseded memories' },
    { flag: 'include-expired', help: 'also recall expired memories' },
  ],
  errorPolicy: 'tree-ring',
  load: () => import('../commands/tree-ring/recall.js'),
};
