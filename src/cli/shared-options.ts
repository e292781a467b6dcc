// Option specs shared by several commands of the table (src/entries/cli.ts) and by the one-file entries that
// run a single command of it (src/entries/collect-spec.ts), so that both are the same data.

import type { OptionSpec } from './types.js';

export const KEY_DIR: OptionSpec = { flag: 'key-dir', value: 'DIR', help: 'owner-private directory holding the Ed25519 signing key', required: true };
export const DOCKER_HOST: OptionSpec = {
  flag: 'docker-host',
  value: 'URL',
  help: 'Docker Engine API endpoint, unix:///path or tcp://host:port',
  defaultText: 'DOCKER_HOST, else /var/run/docker.sock, else the podman socket',
};
export const DATA_DIR: OptionSpec = { flag: 'data-dir', value: 'DIR', help: 'the native data dir (authority, snapshots, journal); may also precede the command', required: true };
export const REPOSITORY: OptionSpec = { flag: 'repository', value: 'OWNER/NAME', help: 'the repository', required: true };
export const PROFILE: OptionSpec = { flag: 'profile', value: 'ID', help: 'the agent-task profile', required: true };
export const ENDPOINT: OptionSpec = { flag: 'endpoint', value: 'URL', help: 'the Hub, http://HOST:PORT or https://HOST:PORT', required: true };
export const CA_FILE: OptionSpec = {
  flag: 'ca-file',
  value: 'FILE',
  help: 'PEM CA certificates an https Hub\'s certificate must chain to',
  defaultText: 'the system\'s trusted CAs',
};
export const TOKEN_FILE: OptionSpec = { flag: 'token-file', value: 'ABS_PATH', help: 'absolute path of an owner-private (0600) workspace token file', required: true };
export const HUB_CALL: readonly OptionSpec[] = [DATA_DIR, ENDPOINT, CA_FILE, REPOSITORY, PROFILE, TOKEN_FILE];
/** A call that works from another machine: without --data-dir the Hub derives the Change's current subject. */
export const REMOTE_CALL: readonly OptionSpec[] = [
  { ...DATA_DIR, required: false, help: 'the native data dir to read the Change\'s current subject from and check the answer against', defaultText: 'none: the Hub derives the subject from the Change id' },
  ...HUB_CALL.slice(1),
];
export const REMOTE_CHANGE_ARG = { name: 'CHANGE', help: 'the Change id; its current subject is read from --data-dir, else derived by the Hub', required: true };
export const CHANGE_ARG = { name: 'CHANGE', help: 'the Change id; its current subject is read from the local authority', required: true };
export const TASK_SELECT: readonly OptionSpec[] = [
  { flag: 'task-id', value: 'ID', help: 'the task (from next or requirements)' },
  { flag: 'step', value: 'STEP', help: 'the task of this requirement step (instead of --task-id)' },
];
export const CALL_EXIT =
  'Exit codes: 4 when the Hub rejects the token (401/403), 5 when it cannot be reached (a TLS failure too: an untrusted ' +
  'certificate names --ca-file), 6 when its answer fails strict validation, ' +
  '11 on a schema mismatch; see agentscm(1) EXIT STATUS.';
export const HUB_KEY: OptionSpec = { flag: 'hub-key', value: 'HEX', help: 'the Hub\'s pinned receipt public key: only answers it signed for this request count', defaultText: 'answers are not signature-checked' };
