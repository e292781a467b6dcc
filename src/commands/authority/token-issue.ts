import * as fs from 'node:fs';
import * as path from 'node:path';
import { Authority } from '../../core/authority/store.js';
import { badInput, localState, usageError } from '../../core/errors.js';
import { publishCreateOnly, requireAbsolute } from '../../core/fs/safe.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { boolOpt, idOpt, repositoryOpt, stringOpt } from '../options.js';

export async function run(_ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const owner = idOpt(inv, 'owner');
  const agent = idOpt(inv, 'agent');
  const repository = inv.opts.repository === undefined ? null : repositoryOpt(inv);
  const scope = inv.opts.scope === undefined ? 'full' : stringOpt(inv, 'scope');
  if (scope !== 'full' && scope !== 'read') throw usageError('--scope must be full or read', 'BAD_SCOPE');
  const out = requireAbsolute(stringOpt(inv, 'out'), '--out');
  const parent = fs.lstatSync(path.dirname(out), { throwIfNoEntry: false });
  if (!parent || !parent.isDirectory()) throw localState(`the directory of --out does not exist`, 'MISSING');
  if (fs.lstatSync(out, { throwIfNoEntry: false })) throw localState(`${out} already exists; refusing to overwrite it`, 'FILE_EXISTS');
  const a = Authority.open(stringOpt(inv, 'data-dir'));
  try {
    const mayIntegrate = boolOpt(inv, 'may-integrate');
    if (mayIntegrate && scope === 'read') throw badInput('--may-integrate needs a full-scope token (approve and land are mutations)', 'BAD_SCOPE');
    const { token_id, token } = a.underWriteLock(() => {
      const t = a.issueToken(owner, agent, repository, scope);
      if (mayIntegrate) a.grantIntegration(t.token_id);
      return t;
    });
    let written = false;
    try {
      written = publishCreateOnly(out, token + '\n', 0o600);
    } finally {
      // A token whose file was never written must not stay valid.
      if (!written) a.deleteToken(token_id);
    }
    if (!written) throw localState(`${out} already exists; refusing to overwrite it`, 'FILE_EXISTS');
    return { data: { token_id, owner_id: owner, agent_id: agent, repository, scope, may_integrate: mayIntegrate, token_file: out } };
  } finally {
    a.close();
  }
}
