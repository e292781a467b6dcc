// `checkpoint`'s command spec without its loader: the table's entry (src/entries/cli.ts) and the whole
// table of checkpoint's one-file entry (src/entries/checkpoint.ts), which bin/agentscm.js runs for a
// plain checkpoint. Each adds the same module's import, written relative to itself.

import { DATA_DIR, PROFILE, REPOSITORY } from '../cli/shared-options.js';
import type { CommandSpec } from '../cli/types.js';

export const CHECKPOINT_SPEC_DATA: Omit<CommandSpec, 'load'> = {
  path: ['checkpoint'],
  summary: 'record the workspace as an immutable snapshot and a new Change version (a fresh subject)',
  details:
    'In a git work tree the file set is `git ls-files -co --exclude-standard`; otherwise every file. Symlinks that leave the ' +
    'workspace are refused. Prints the new subject (revision, context digest, policy epoch) and its task ids, and `git`: ' +
    'for a profile with publish_forge_status, the work tree\'s HEAD and whether the snapshot equals its tree. The target\'s revision ' +
    'now is recorded as this version\'s base, which `land` swaps from.',
  args: [{ name: 'CHANGE', help: 'the Change id', required: true }],
  options: [DATA_DIR, REPOSITORY, PROFILE, { flag: 'workspace', value: 'PATH', help: 'the workspace directory', required: true }],
};
