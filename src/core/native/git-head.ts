// The git commit a checkpoint describes, for forge commit statuses: the work tree's HEAD and whether
// the snapshot just taken equals HEAD's tree. The snapshot's file set is git's tracked and untracked
// but not ignored files (snapshot.ts listWorkspace), so it equals HEAD's tree exactly when `git status`
// reports nothing (no modified, staged, deleted or untracked file) and HEAD did not move meanwhile.
// Asked after the snapshot: a file that changes during the checkpoint makes it differ, never match.

import { execFileSync } from 'node:child_process';
import { isGitWorkTreeRoot } from './snapshot.js';

export interface GitCommitOfSnapshot {
  /** The 40- (or 64-) hex commit id of HEAD; null outside a git work tree or before the first commit. */
  readonly head: string | null;
  readonly tree_matches: boolean;
}

const git = (root: string, args: readonly string[]): string => execFileSync('git', args, { cwd: root, maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'ignore'] }).toString('utf8');

function head(root: string): string | null {
  try {
    const h = git(root, ['rev-parse', '--verify', '-q', 'HEAD^{commit}']).trim();
    return /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(h) ? h : null;
  } catch {
    return null;
  }
}

/** HEAD before and after `git status`, which must be clean; read once the snapshot is recorded. */
export function gitCommitOfSnapshot(workspace: string, before: string | null): GitCommitOfSnapshot {
  if (before === null) return { head: null, tree_matches: false };
  let clean: boolean;
  try {
    clean = git(workspace, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=none']) === '';
  } catch {
    clean = false;
  }
  return { head: before, tree_matches: clean && head(workspace) === before };
}

/** HEAD of the workspace when it is a git work tree's top level (read before the snapshot). */
export function gitHeadBefore(workspace: string): string | null {
  return isGitWorkTreeRoot(workspace) ? head(workspace) : null;
}
