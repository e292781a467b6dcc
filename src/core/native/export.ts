// `snapshot export`: materializes one immutable revision of the snapshot store as an ordinary, writable
// directory tree (a landed target to work from, or any Change version). Every file is read from the
// store, checked against its SHA-256 and written create-only (O_EXCL, never through a symlink); the
// output directory must not exist or be empty, so nothing there is overwritten.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { HEX64 } from '../crypto/digest.js';
import { badInput, localState, notFound } from '../errors.js';
import { lstatOrUndefined, writeNewFile } from '../fs/safe.js';
import { MAX_SNAPSHOT_BYTES, MODE_EXEC, MODE_SYMLINK, SnapshotStore } from './snapshot.js';

export interface ExportResult {
  readonly revision: string;
  readonly out: string;
  readonly file_count: number;
  readonly bytes: number;
}

export function exportSnapshot(dataDir: string, revision: string, out: string): ExportResult {
  if (!HEX64.test(revision)) throw badInput('--revision must be 64 lowercase hex characters', 'BAD_REVISION');
  const store = new SnapshotStore(dataDir);
  const manifest = store.manifest(revision);
  if (!manifest) throw notFound(`no snapshot ${revision} in the data dir`, 'SNAPSHOT_NOT_FOUND');
  const st = lstatOrUndefined(out);
  if (st) {
    if (!st.isDirectory()) throw badInput(`${out} exists and is not a directory`, 'OUT_NOT_EMPTY');
    if (fs.readdirSync(out).length > 0) throw badInput(`${out} is not empty`, 'OUT_NOT_EMPTY');
  } else {
    fs.mkdirSync(out, { recursive: true, mode: 0o755 });
  }
  const root = fs.realpathSync(out);
  const made = new Set<string>(['']);
  const mkdirs = (rel: string): void => {
    if (made.has(rel)) return;
    const slash = rel.lastIndexOf('/');
    mkdirs(slash > 0 ? rel.slice(0, slash) : '');
    fs.mkdirSync(path.join(root, rel), { mode: 0o755 });
    made.add(rel);
  };
  let bytes = 0;
  for (const e of manifest.entries) {
    const slash = e.path.lastIndexOf('/');
    mkdirs(slash > 0 ? e.path.slice(0, slash) : '');
    const body = store.readBlob(e.sha256, MAX_SNAPSHOT_BYTES);
    if (body === undefined || body === 'limit' || body.length !== e.size) throw localState(`snapshot ${revision}: the blob of ${e.path} is missing or corrupt`, 'STORE_CORRUPT');
    const file = path.join(root, e.path);
    if (e.mode === MODE_SYMLINK) fs.symlinkSync(body.toString('utf8'), file);
    else writeNewFile(file, body, e.mode === MODE_EXEC ? 0o755 : 0o644);
    bytes += body.length;
  }
  return { revision, out: root, file_count: manifest.entries.length, bytes };
}
