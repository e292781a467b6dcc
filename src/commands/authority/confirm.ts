// The one confirmation of the authority commands that change who may produce evidence (enroll,
// revoke-enrollment): a question on stderr answered at a terminal, or --yes in scripts. Without a
// terminal and without --yes it refuses (exit 2) and writes nothing.

import * as readline from 'node:readline';
import { AgentscmError, usageError } from '../../core/errors.js';
import type { CommandContext, Invocation } from '../../cli/types.js';
import { boolOpt } from '../options.js';

async function ask(ctx: CommandContext, question: string): Promise<boolean> {
  const rl = readline.createInterface({ input: ctx.stdin, output: ctx.stderr as NodeJS.WritableStream, terminal: false });
  try {
    const answer = await new Promise<string>((resolve) => {
      ctx.stderr.write(question);
      rl.once('line', resolve);
      rl.once('close', () => resolve(''));
    });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

export async function confirmOrYes(ctx: CommandContext, inv: Invocation, verb: string, question: string): Promise<void> {
  if (boolOpt(inv, 'yes')) return;
  const tty = (ctx.stdin as { isTTY?: boolean }).isTTY === true;
  if (!tty) throw usageError(`${verb} asks for confirmation at a terminal; pass --yes to ${verb} non-interactively`);
  if (!(await ask(ctx, question))) throw new AgentscmError('USAGE', 'NOT_CONFIRMED', `${verb} not confirmed; nothing was written`);
}
