// `agentscm install-stop`: register the task-stop Stop hook in a project's Claude Code or Codex config.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CommandContext, CommandResult, Invocation } from '../cli/types.js';
import { isAgentscmError, usageError } from '../core/errors.js';
import { clientEndpoint, readCaFile, readTokenFile } from '../core/hub-client/client.js';
import { installStopHook, stopCommand } from '../core/hooks/install.js';
import type { StopHost } from '../core/hooks/stop-guard.js';
import { requireAbsolute } from '../core/fs/safe.js';
import { parsePublicKeyHex, toHex } from '../core/crypto/ed25519.js';
import { readHubKey } from '../core/crypto/hub-key.js';
import { readCurrentSubjectUnchecked } from '../core/authority/read-only.js';
import { boolOpt, existingDir, idArg, idOpt, optionalStringOpt, repositoryOpt, requireOpts, stringOpt } from './options.js';

/** This installation's root (dist/src/commands/ -> the package). */
const PKG_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
/**
 * The one-file bundle of the Stop hooks (same parser and modules, faster start), else the launcher.
 * Both take the same arguments.
 */
function ourHookEntry(): string {
  const bundle = path.join(PKG_ROOT, 'dist', 'bundles', 'agentscm-stop-hook.cjs');
  return fs.existsSync(bundle) ? bundle : path.join(PKG_ROOT, 'bin', 'agentscm.js');
}

/**
 * Reads the Change's current subject with the hook's own reader (read-only, nothing created): refuses a
 * data dir without an authority (or of a schema the hook cannot read) and a repository and profile it
 * has no agent-task profile for. Whether the Change has a checkpoint yet (the hook asks for one until
 * it has).
 */
function checkHookStore(dataDir: string, repository: string, profile: string, change: string): boolean {
  try {
    readCurrentSubjectUnchecked(dataDir, repository, profile, change);
    return true;
  } catch (e) {
    if (isAgentscmError(e) && e.code === 'CHANGE_NOT_FOUND') return false;
    throw e;
  }
}

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const hostOpt = stringOpt(inv, 'host');
  if (hostOpt !== 'claude-code' && hostOpt !== 'codex') throw usageError('--host must be claude-code or codex');
  const host: StopHost = hostOpt;
  const hostName = host === 'claude-code' ? 'Claude Code' : 'Codex';
  const project = existingDir(path.resolve(ctx.cwd, optionalStringOpt(inv, 'project') ?? '.'), 'project');
  const workspace = existingDir(path.resolve(ctx.cwd, optionalStringOpt(inv, 'workspace') ?? project), 'workspace');
  if (boolOpt(inv, 'uninstall')) {
    // Only the workspace's own handler goes; the rest of the file (Tree Ring's hooks, the project's) stays.
    const { file, changed } = installStopHook(host, project, workspace, undefined);
    return {
      // uninstalled: whether a handler of the workspace was there and is gone now (false: there was none).
      data: { host, mode: 'task-stop', file, changed, uninstalled: changed },
      text: `${changed ? 'removed' : 'not installed'}: ${hostName} Stop hook for workspace ${workspace} in ${file}`,
    };
  }
  if (inv.args[0] === undefined) throw usageError('CHANGE is required (unless --uninstall)');
  const change = idArg(inv, 0, 'CHANGE');
  requireOpts(inv, ['token-file', 'endpoint', 'data-dir', 'repository', 'profile'], '--uninstall');
  const tokenFile = requireAbsolute(stringOpt(inv, 'token-file'), '--token-file');
  readTokenFile(tokenFile); // refuse now what the hook could never read
  const endpoint = stringOpt(inv, 'endpoint');
  // The hook reads the CA file on every run: an absolute path, refused now when it is not a CA file
  // (or the endpoint not https).
  const caOpt = optionalStringOpt(inv, 'ca-file');
  const caFile = caOpt === undefined ? undefined : requireAbsolute(caOpt, '--ca-file');
  clientEndpoint(endpoint, caFile === undefined ? undefined : readCaFile(caFile));
  const dataDir = existingDir(path.resolve(ctx.cwd, stringOpt(inv, 'data-dir')), 'data dir');
  const repository = repositoryOpt(inv);
  const profile = idOpt(inv, 'profile');
  // What the hook reads on every run, refused now when it is not there: a hook over a data dir without
  // an authority, or for a profile it does not have, could only ever block.
  const checkpointed = checkHookStore(dataDir, repository, profile, change);
  // The pinned Hub key: given, else the one the Hub recorded in the data dir, else none.
  const keyOpt = optionalStringOpt(inv, 'hub-key');
  const pinned = keyOpt !== undefined ? parsePublicKeyHex(keyOpt) : readHubKey(dataDir);
  const hubKey = pinned === undefined ? undefined : toHex(pinned);
  const command = stopCommand({
    node: process.execPath,
    bin: ourHookEntry(),
    host,
    dataDir,
    change,
    endpoint,
    caFile,
    repository,
    profile,
    tokenFile,
    workspace,
    hubKey,
  });
  const { file, changed } = installStopHook(host, project, workspace, command);
  const instructions =
    'The agent\'s guidance is the "Workflow tasks" block (`agentscm init-repo` writes it into AGENTS.md, Cursor rules and ' +
    '.github/copilot-instructions.md): discover with `agentscm agent-task capabilities` and `next`, then fetch ' +
    '`instructions` (criteria inline) and a `reference` only when needed.';
  const lines = [
    `${changed ? 'installed' : 'already installed'}: ${hostName} Stop hook (task-stop mode) for Change ${change} in ${file}`,
    `instructions: ${instructions}`,
    hubKey !== undefined ? `hub key: ${hubKey} (only answers it signs let the session stop)` : 'hub key: none pinned (hub serve --receipt-key-dir, then install-stop again, makes answers signed and checked)',
  ];
  if (!checkpointed) lines.push(`note: Change ${change} has no checkpoint in ${dataDir} yet; until it has one, the hook asks for \`agentscm checkpoint ${change}\``);
  const trust = host === 'codex'
    ? 'Codex skips a new or changed hook until it is trusted: open /hooks in Codex and trust this Stop hook (the project must be trusted too).'
    : undefined;
  if (trust) lines.push(`trust: ${trust}`);
  return {
    data: { host, mode: 'task-stop', file, changed, command, hub_key: hubKey ?? null, change_checkpointed: checkpointed, instructions, ...(trust ? { trust } : {}) },
    text: lines.join('\n'),
  };
}
