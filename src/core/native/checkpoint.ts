// `checkpoint`: snapshot the workspace, then make a new Change version (a new subject).

import * as fs from 'node:fs';
import { Authority } from '../authority/store.js';
import type { Subject } from '../authority/types.js';
import { badInput } from '../errors.js';
import { gitCommitOfSnapshot, gitHeadBefore } from './git-head.js';
import { SnapshotStore } from './snapshot.js';
import { abandonCheckpoint, beginCheckpoint, completeCheckpoint, openWorkspacesForWrite, readStatCache } from './workspace.js';

export interface CheckpointResult {
  readonly subject: Subject;
  readonly file_count: number;
  readonly generation: number;
  /** The work tree's HEAD and whether the snapshot equals its tree (null head: not a git work tree). */
  readonly git: { readonly head: string | null; readonly tree_matches: boolean };
  readonly tasks: readonly { task_id: string; task_digest: string; step_id: string; required: boolean }[];
}

export function checkpoint(dataDir: string, input: { repository: string; profile: string; change_id: string; workspace: string }): CheckpointResult {
  const st = fs.statSync(input.workspace, { throwIfNoEntry: false });
  if (!st || !st.isDirectory()) throw badInput(`workspace ${input.workspace} is not a directory`, 'BAD_WORKSPACE');
  const authority = Authority.open(dataDir);
  try {
    const profile = authority.requireProfile(input.repository, input.profile);
    const ws = openWorkspacesForWrite(dataDir);
    try {
      // The previous checkpoint's stat cache: files whose stat it vouches for are not read again.
      const cache = readStatCache(ws, input.workspace);
      // Only a profile that publishes forge statuses needs the commit (and pays for `git status`).
      const head = profile.publish_forge_status ? gitHeadBefore(fs.realpathSync(input.workspace)) : null;
      const pending = beginCheckpoint(ws, input.workspace, input.repository, input.change_id);
      let snapshot;
      try {
        snapshot = new SnapshotStore(dataDir).record(input.workspace, cache);
      } catch (e) {
        // Refused (a symlink that escapes, a device, an unreadable file) before any Change version was
        // recorded: the checkpoint had no effect, so the workspace row is put back as it was. The pack
        // it may have published holds content-addressed bytes that no manifest names.
        try {
          abandonCheckpoint(ws, pending);
        } catch {
          // The row stays pending, as after a crash: the Stop hook blocks until a checkpoint completes.
        }
        throw e;
      }
      const { revision } = snapshot;
      const commit = gitCommitOfSnapshot(fs.realpathSync(input.workspace), head);
      authority.recordChangeVersion(input.repository, input.change_id, revision, profile.target, commit);
      const state = completeCheckpoint(ws, input.workspace, snapshot);
      const subject = authority.currentSubject(input.repository, input.profile, input.change_id);
      const tasks = authority.tasksFor(subject).map((t) => ({ task_id: t.task_id, task_digest: t.task_digest, step_id: t.step.id, required: t.step.required }));
      return { subject, file_count: snapshot.fileCount, generation: state.generation, git: commit, tasks };
    } finally {
      ws.close();
    }
  } finally {
    authority.close();
  }
}
