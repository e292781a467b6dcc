// Locating the project-local Tree Ring root. `--root` (default .tree-ring) names the memory root; its
// parent is the project. The default, ./.tree-ring and an absolute path to the same directory are the
// same root; a root whose last component is not .tree-ring is a different store and is refused here.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { localState, usageError } from '../../errors.js';
import { parseManifest, MANIFEST_FILE, type ActivationManifest } from './manifest.js';
import { ProjectFs } from './projectfs.js';
import { ShapeError } from './validate.js';

export interface ActivationRoot {
  readonly memoryRoot: string;
  readonly projectRoot: string;
  /** Canonical real path of the project root (for fingerprints and containment checks). */
  readonly realProjectRoot: string;
  readonly pfs: ProjectFs;
}

export type RootKind = 'absent' | 'dir';

export interface ResolveOptions {
  /**
   * Status only: a project root this process cannot reach is an answer (needs-project-mount), not an
   * error. The returned root then has `reachable: false` and its real path is the lexical one.
   */
  readonly allowUnreachable?: boolean;
}

export function resolveRoot(cwd: string, rootOpt: string | undefined, opts: ResolveOptions = {}): ActivationRoot & { readonly reachable: boolean } {
  const memoryRoot = path.resolve(cwd, rootOpt ?? '.tree-ring');
  if (path.basename(memoryRoot) !== '.tree-ring') throw usageError(`--root must name a project-local .tree-ring directory (got ${JSON.stringify(rootOpt)})`, 'ROOT_NOT_PROJECT_LOCAL');
  const projectRoot = path.dirname(memoryRoot);
  let realProjectRoot: string;
  try {
    const st = fs.lstatSync(projectRoot);
    if (!st.isDirectory()) throw localState('the project root is not a directory', 'PROJECT_ROOT');
    // realpath(3) in one call: the JavaScript resolver walks and lstat()s every component, which a
    // hook process would compile and run on each event for the same answer.
    realProjectRoot = fs.realpathSync.native(projectRoot);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const unreachable = code === 'ENOENT' || code === 'EACCES' || code === 'ENOTDIR';
    if (opts.allowUnreachable && unreachable) return { memoryRoot, projectRoot, realProjectRoot: projectRoot, pfs: new ProjectFs(projectRoot), reachable: false };
    if (code === 'ENOENT') throw localState('the project root does not exist', 'PROJECT_ROOT');
    throw e;
  }
  return { memoryRoot, projectRoot, realProjectRoot, pfs: new ProjectFs(projectRoot), reachable: true };
}

/** 'absent' only when nothing is there; a symlink, file or other entry is an error requiring repair. */
export function rootKind(root: ActivationRoot): RootKind {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(root.memoryRoot);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw localState('cannot inspect the .tree-ring root', 'FS_ERROR');
  }
  if (st.isSymbolicLink()) throw localState('.tree-ring is a symlink; refusing it (repair the project root)', 'ROOT_SYMLINK');
  if (!st.isDirectory()) throw localState('.tree-ring is not a directory (repair the project root)', 'ROOT_NOT_DIRECTORY');
  return 'dir';
}

export type ManifestLoad = { kind: 'absent' } | { kind: 'invalid'; reason: string } | { kind: 'ok'; manifest: ActivationManifest; bytes: Buffer };

export function loadManifest(root: ActivationRoot): ManifestLoad {
  let bytes: Buffer | undefined;
  try {
    bytes = root.pfs.read(`.tree-ring/${MANIFEST_FILE}`, 256 * 1024);
  } catch (e) {
    return { kind: 'invalid', reason: e instanceof Error ? e.message : String(e) };
  }
  if (bytes === undefined) return { kind: 'absent' };
  try {
    return { kind: 'ok', manifest: parseManifest(bytes), bytes };
  } catch (e) {
    if (e instanceof ShapeError || e instanceof Error) return { kind: 'invalid', reason: e.message };
    throw e;
  }
}

/** The manifest or a LOCAL_STATE error: explicit preflight and hooks require valid activation. */
export function requireManifest(root: ActivationRoot): ActivationManifest {
  if (rootKind(root) === 'absent') throw localState('no .tree-ring root here; run tree-ring init', 'NOT_INITIALIZED');
  const m = loadManifest(root);
  if (m.kind === 'absent') throw localState('.tree-ring/activation.json is missing; run tree-ring init', 'MANIFEST_MISSING');
  if (m.kind === 'invalid') throw localState(`.tree-ring/activation.json is invalid: ${m.reason}`, 'MANIFEST_INVALID');
  return m.manifest;
}
