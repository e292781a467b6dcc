// `checkpoint`: snapshot the workspace, then make a new Change version (a new subject).

import * as fs from 'node:fs';
import { Authority } from '../authority/store.js';
import type { Subject } from '../authority/types.js';
import { badInput } from '../errors.js';
import { SnapshotStore } from './snapshot.js';
import { beginCheckpoint, completeCheckpoint, openWorkspacesForWrite } from './workspace.js';

export interface CheckpointResult {
  readonly subject: Subject;
  readonly file_count: number;
  readonly generation: number;
  readonly tasks: readonly { task_id: string; task_digest: string; step_id: string; required: boolean }[];
}

export function checkpoint(dataDir: string, input: { repository: string; profile: string; change_id: string; workspace: string }): CheckpointResult {
  const st = fs.statSync(input.workspace, { throwIfNoEntry: false });
  if (!st || !st.isDirectory()) throw badInput(`workspace ${input.workspace} is not a directory`, 'BAD_WORKSPACE');
  const authority = Authority.open(dataDir);
  try {
    authority.requireProfile(input.repository, input.profile);
    const ws = openWorkspacesForWrite(dataDir);
    try {
      beginCheckpoint(ws, input.workspace, input.repository, input.change_id);
      const { revision, manifest } = new SnapshotStore(dataDir).record(input.workspace);
      authority.recordChangeVersion(input.repository, input.change_id, revision);
      const state = completeCheckpoint(ws, input.workspace, revision);
      const subject = authority.currentSubject(input.repository, input.profile, input.change_id);
      const tasks = authority.tasksFor(subject).map((t) => ({ task_id: t.task_id, task_digest: t.task_digest, step_id: t.step.id, required: t.step.required }));
      return { subject, file_count: manifest.entries.length, generation: state.generation, tasks };
    } finally {
      ws.close();
    }
  } finally {
    authority.close();
  }
}
