// The lifecycle hook's command spec for the bundled entry (treering-hook.ts). It equals the table entry
// `tree-ring integrations hook` in the command table (cli.ts) minus the group word; a test keeps the two equal.

import type { CommandSpec } from '../cli/types.js';

export const HOOK_SPEC: CommandSpec = {
  path: ['integrations', 'hook'],
  summary: 'the Codex / Claude Code lifecycle hook (SessionStart, SubagentStart, Stop, SubagentStop)',
  options: [
    { flag: 'root', value: 'DIR', help: 'memory store root', defaultText: '.tree-ring' },
    { flag: 'harness', value: 'ID', help: 'codex or claude-code', required: true },
    { flag: 'input-json-stdin', help: 'read the host event as JSON on stdin (required)' },
  ],
  json: false,
  errorPolicy: 'hook',
  load: () => import('../commands/tree-ring/integrations-hook.js'),
};

