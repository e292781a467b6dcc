// The read-only workspace scan (src/core/native/snapshot.ts readWorkspaceLater, which reads at once and
// hashes later): file digests and the
// revision against node:crypto and the digest rule written out independently, for a small workspace
// (hashed without node:crypto) and one past the size where the scan loads node:crypto first.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { DOMAINS } from '../../src/core/crypto/digest.js';
import { readWorkspaceLater } from '../../src/core/native/snapshot.js';
import { referenceDomainDigest } from '../support/crypto.js';

const roots: string[] = [];
after(() => roots.forEach((r) => fs.rmSync(r, { recursive: true, force: true })));

function workspace(files: Record<string, Buffer>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-scan-'));
  roots.push(root);
  for (const [rel, bytes] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), bytes, { mode: rel.endsWith('.sh') ? 0o755 : 0o644 });
  }
  fs.symlinkSync('docs/a.md', path.join(root, 'link'));
  return root;
}

/** The expected manifest, built from the files with node:crypto, and its revision by the digest rule. */
function expected(files: Record<string, Buffer>): { entries: { path: string; mode: number; size: number; sha256: string }[]; revision: string } {
  const entries = [
    ...Object.entries(files).map(([rel, bytes]) => ({ path: rel, mode: rel.endsWith('.sh') ? 0o100755 : 0o100644, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') })),
    { path: 'link', mode: 0o120000, size: 'docs/a.md'.length, sha256: createHash('sha256').update('docs/a.md').digest('hex') },
  ].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  // Insertion order, as the manifest declares it: version, entries (path, mode, size, sha256).
  const canonical = `{"version":1,"entries":[${entries.map((e) => `{"path":${JSON.stringify(e.path)},"mode":${e.mode},"size":${e.size},"sha256":"${e.sha256}"}`).join(',')}]}`;
  return { entries, revision: referenceDomainDigest(DOMAINS.snapshot, Buffer.from(canonical)) };
}

for (const [name, bigSize] of [['small', 3000], ['large (past the size that loads node:crypto first)', 400 * 1024]] as const) {
  test(`a ${name} workspace scans to the manifest and revision of its bytes`, () => {
    const big = Buffer.alloc(bigSize);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 10)) & 0xff;
    const files: Record<string, Buffer> = {
      'README.md': Buffer.from('# readme\n'),
      'docs/a.md': Buffer.from('a\n'),
      'run.sh': Buffer.from('#!/bin/sh\necho hi\n'),
      'data/blob.bin': big,
      'empty': Buffer.alloc(0),
    };
    const root = workspace(files);
    const got = readWorkspaceLater(root).scanned();
    const want = expected(files);
    assert.deepEqual(got.manifest.entries, want.entries);
    assert.equal(got.revision, want.revision);

    // Read now, hashed later: the revision of the bytes as they were read, whatever happens after.
    const later = readWorkspaceLater(root);
    fs.writeFileSync(path.join(root, 'README.md'), '# changed after the read\n');
    fs.writeFileSync(path.join(root, 'new.txt'), 'added after the read\n');
    assert.equal(later.scanned().revision, want.revision);
    assert.equal(later.scanned().revision, want.revision, 'the same on a second call');
    assert.notEqual(readWorkspaceLater(root).scanned().revision, want.revision, 'a new read sees the changes');
  });
}
