// Shared option handling of the tree-ring integrations commands (kept free of heavy imports: the
// lifecycle hook command uses it).

import { usageError } from '../../core/errors.js';
import { isMaintainedHarness, type MaintainedHarness } from '../../core/treering/activation/constants.js';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resolveRoot, type ActivationRoot, type ResolveOptions } from '../../core/treering/activation/root.js';
import type { CommandContext, Invocation } from '../../cli/types.js';
import { optionalStringOpt, stringOpt } from '../options.js';

export function harnessOpt(inv: Invocation): MaintainedHarness {
  const h = stringOpt(inv, 'harness');
  if (!isMaintainedHarness(h)) throw usageError(`--harness must be one of codex, claude-code, pi, agent-zero (got ${JSON.stringify(h)})`);
  return h;
}

/**
 * The activation root: `--source-root P` names the project (its `.tree-ring`), as upstream's
 * integrations commands take it; otherwise `--root` (default .tree-ring). The Agent Zero plugin
 * passes both (`--root <P>/.tree-ring ... --source-root <P>`): that is accepted when they name the
 * same store, and refused when --root names another one.
 */
export function rootFrom(ctx: CommandContext, inv: Invocation, opts: ResolveOptions = {}): ActivationRoot & { readonly reachable: boolean } {
  const source = optionalStringOpt(inv, 'source-root');
  const root = optionalStringOpt(inv, 'root');
  if (source === undefined) return resolveRoot(ctx.cwd, root, opts);
  const fromSource = path.join(path.resolve(ctx.cwd, source), '.tree-ring');
  if (root !== undefined && !samePath(path.resolve(ctx.cwd, root), fromSource)) throw usageError('--root names another store than the .tree-ring of --source-root; give one of them');
  return resolveRoot(ctx.cwd, fromSource, opts);
}

/** Equal as real paths where they exist (parents resolved), else lexically. */
function samePath(a: string, b: string): boolean {
  const real = (p: string): string => {
    try {
      return path.join(fs.realpathSync.native(path.dirname(p)), path.basename(p));
    } catch {
      return p;
    }
  };
  return a === b || real(a) === real(b);
}
