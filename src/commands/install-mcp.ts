// `agentscm install-mcp`: register the Hub's workspace MCP endpoint in a project's Claude Code or Codex
// config. The token stays out of the file: the host reads it from an environment variable.

import * as path from 'node:path';
import type { CommandContext, CommandResult, Invocation } from '../cli/types.js';
import { usageError } from '../core/errors.js';
import { clientEndpoint } from '../core/hub-client/answer.js';
import { ENV_VAR_RE, installMcpServer, MCP_SERVER_NAME_RE, mcpEndpointUrl } from '../core/hooks/mcp-install.js';
import { boolOpt, existingDir, idOpt, optionalStringOpt, repositoryOpt, requireOpts, stringOpt } from './options.js';

export const DEFAULT_TOKEN_ENV = 'AGENTSCM_MCP_TOKEN';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const host = stringOpt(inv, 'host');
  if (host !== 'claude-code' && host !== 'codex') throw usageError('--host must be claude-code or codex');
  const hostName = host === 'claude-code' ? 'Claude Code' : 'Codex';
  const name = optionalStringOpt(inv, 'name') ?? 'agentscm';
  if (!MCP_SERVER_NAME_RE.test(name)) throw usageError('--name must be 1-64 of a-z 0-9 _ - (starting with a letter or digit)');
  const project = existingDir(path.resolve(ctx.cwd, optionalStringOpt(inv, 'project') ?? '.'), 'project');
  if (boolOpt(inv, 'uninstall')) {
    // Only the server of that name goes; every other server and setting of the file stays.
    const { file, changed } = await installMcpServer(host, project, { name, remove: true });
    return {
      data: { host, name, file, changed, uninstalled: changed },
      text: `${changed ? 'removed' : 'not installed'}: ${hostName} MCP server ${name} in ${file}`,
    };
  }
  requireOpts(inv, ['endpoint', 'repository', 'profile'], '--uninstall');
  const endpoint = stringOpt(inv, 'endpoint');
  // The same check as every client's (BAD_INPUT, BAD_ENDPOINT): the Hub's base URL, http or https.
  clientEndpoint(endpoint, undefined);
  const origin = new URL(endpoint).origin;
  const tokenEnv = optionalStringOpt(inv, 'token-env') ?? DEFAULT_TOKEN_ENV;
  if (!ENV_VAR_RE.test(tokenEnv)) throw usageError('--token-env must be an environment variable name (A-Z 0-9 _)');
  const repository = repositoryOpt(inv);
  const profile = idOpt(inv, 'profile');
  const url = mcpEndpointUrl(origin, repository, profile);
  const { file, changed } = await installMcpServer(host, project, { name, url, tokenEnv });
  const how = host === 'claude-code' ? `the Authorization header "Bearer \${${tokenEnv}}", which Claude Code expands from its environment` : `bearer_token_env_var = "${tokenEnv}"`;
  return {
    data: { host, name, url, file, changed, token_env: tokenEnv },
    text: [
      `${changed ? 'installed' : 'already installed'}: ${hostName} MCP server ${name} (${url}) in ${file}`,
      `token: not written to the file; ${how}. Start ${hostName} with ${tokenEnv} set to the workspace token, e.g. ${tokenEnv}="$(cat TOKEN_FILE)".`,
    ].join('\n'),
  };
}
