// The Stop hooks' command specs for the bundled entry (stop-hook.ts). They equal the table entries
// `skill-workflow task-stop` and `task-codex-stop` in the command table (cli.ts) (which may not import command
// modules statically); a test keeps them equal.

import type { CommandSpec, OptionSpec } from '../cli/types.js';
import { HUB_KEY } from '../cli/shared-options.js';

const OPTIONS: readonly OptionSpec[] = [
  { flag: 'data-dir', value: 'DIR', help: 'the native data dir (authority, snapshots, journal); may also precede the command', required: true },
  { flag: 'endpoint', value: 'URL', help: 'the Hub, http://HOST:PORT or https://HOST:PORT', required: true },
  { flag: 'ca-file', value: 'FILE', help: 'PEM CA certificates an https Hub\'s certificate must chain to', defaultText: 'the system\'s trusted CAs' },
  { flag: 'repository', value: 'OWNER/NAME', help: 'the repository', required: true },
  { flag: 'profile', value: 'ID', help: 'the agent-task profile', required: true },
  { flag: 'token-file', value: 'ABS_PATH', help: 'absolute path of an owner-private (0600) workspace token file', required: true },
  { flag: 'workspace', value: 'PATH', help: 'the checked-out workspace of the Change', required: true },
  HUB_KEY,
];
const CHANGE = { name: 'CHANGE', help: 'the Change id; its current subject is read from the local authority', required: true };

export const STOP_HOOK_SPECS: readonly CommandSpec[] = [
  {
    path: ['skill-workflow', 'task-stop'],
    summary: 'Claude Code Stop hook',
    json: false,
    errorPolicy: 'hook',
    args: [CHANGE],
    options: OPTIONS,
    load: () => import('../commands/skill-workflow/task-stop.js'),
  },
  {
    path: ['skill-workflow', 'task-codex-stop'],
    summary: 'Codex Stop hook',
    json: false,
    errorPolicy: 'hook',
    args: [CHANGE],
    options: OPTIONS,
    load: () => import('../commands/skill-workflow/task-codex-stop.js'),
  },
];
