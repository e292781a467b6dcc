// The shared body of `skill-workflow task-stop` (Claude Code) and `task-codex-stop` (Codex): decode the
// Stop payload, consult the continuation counter, run the read-only check, answer in the host's shape.
// Allow = exit 0 with empty stdout; block = exit 0 with {"decision":"block","reason":…} and nothing else
// (the one shape both hosts accept). Malformed stdin or a counter error exits 1, which never blocks;
// a counter directory others can write blocks (local_store).

import * as path from 'node:path';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { AgentscmError } from '../../core/errors.js';
import { blockAnswer, ContinuationCounter, COUNTER_DIR_UNSAFE, decodeStopPayload, readFdBounded, readStdin, type StopHost } from '../../core/hooks/stop-guard.js';
import { blockReason, evaluateTaskStop } from '../../core/hooks/task-stop.js';
import { idArg, idOpt, optionalStringOpt, repositoryOpt, stringOpt } from '../options.js';

export async function runTaskStop(host: StopHost, ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const change = idArg(inv, 0, 'CHANGE');
  const input = {
    dataDir: stringOpt(inv, 'data-dir'),
    change,
    endpoint: stringOpt(inv, 'endpoint'),
    caFile: optionalStringOpt(inv, 'ca-file'),
    repository: repositoryOpt(inv),
    profile: idOpt(inv, 'profile'),
    tokenFile: stringOpt(inv, 'token-file'),
    workspace: path.resolve(ctx.cwd, stringOpt(inv, 'workspace')),
    hubKey: optionalStringOpt(inv, 'hub-key'),
  };
  const payload = decodeStopPayload(ctx.stdinFd !== undefined ? readFdBounded(ctx.stdinFd) : await readStdin(ctx.stdin));
  let counter: ContinuationCounter;
  try {
    counter = ContinuationCounter.open(ctx.env, host, payload, {
      repository: input.repository,
      profile: input.profile,
      change_id: change,
      workspace: input.workspace,
    });
  } catch (e) {
    // Counts another user could write are no counts: fail closed, as for an unsafe data dir.
    if (e instanceof AgentscmError && e.code === COUNTER_DIR_UNSAFE) {
      return { raw: blockAnswer(blockReason(change, { allow: false, error: 'local_store', local: [], failures: [], next: null })) };
    }
    throw e;
  }
  // Enough continuations: let the session stop without asking the Hub again.
  if (counter.exhausted) {
    ctx.stderr.write(`agentscm: stop check: ${counter.count} continuations granted; ending continuation\n`);
    return { raw: '' };
  }
  const verdict = await evaluateTaskStop(input);
  if (verdict.allow) return { raw: '' };
  counter.recordContinuation();
  return { raw: blockAnswer(blockReason(change, verdict)) };
}
