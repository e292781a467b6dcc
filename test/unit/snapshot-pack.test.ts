// Snapshot packs (src/core/native/pack.ts) on disk: the v2 bytes against a vector written out here by
// hand, reads through the index, the v1 packs of older stores and a v2 pack whose index does not check
// out (both read by walking their records), a pack published after a reader missed, and the bounds.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { PackSet, PackWriter, repackPacks } from '../../src/core/native/pack.js';

const roots: string[] = [];
after(() => roots.forEach((r) => fs.rmSync(r, { recursive: true, force: true })));

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-pack-'));
  roots.push(d);
  return d;
}

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const u64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
};

const A = Buffer.from('alpha\n');
const B = Buffer.from('second blob\n');

function packs(dir: string): string[] {
  return fs.readdirSync(dir).filter((n) => n.endsWith('.pack'));
}

describe('snapshot packs', () => {
  it('writes records in the order read, each distinct blob once, then the index sorted by SHA-256 and the trailer', () => {
    const dir = tmp();
    const w = new PackWriter(dir);
    w.add(sha(A), A);
    w.add(sha(B), B);
    w.add(sha(A), A);
    w.publish();
    const [name] = packs(dir);
    assert.ok(name, 'one pack');
    assert.deepEqual(fs.readdirSync(dir), [name], 'no temporary file is left');
    assert.equal(fs.statSync(path.join(dir, name!)).mode & 0o777, 0o400);

    // The bytes, spelled out: magic, two records, index (sorted by digest), trailer.
    const magic = Buffer.from('agentscm-pack-v2\n', 'latin1');
    const recA = Buffer.concat([Buffer.from(sha(A), 'hex'), u64(A.length), A]);
    const recB = Buffer.concat([Buffer.from(sha(B), 'hex'), u64(B.length), B]);
    const atA = magic.length + 40;
    const atB = magic.length + recA.length + 40;
    const ix = [
      { d: sha(A), at: atA, len: A.length },
      { d: sha(B), at: atB, len: B.length },
    ].sort((x, y) => (x.d < y.d ? -1 : 1));
    const index = Buffer.concat(ix.map((e) => Buffer.concat([Buffer.from(e.d, 'hex'), u64(e.at), u64(e.len)])));
    const indexAt = magic.length + recA.length + recB.length;
    const want = Buffer.concat([magic, recA, recB, index, u64(indexAt), u64(2), Buffer.from('agentscm-pack-ix', 'latin1')]);
    assert.deepEqual(fs.readFileSync(path.join(dir, name!)), want);
    // The vector's own first bytes, independent of the writer above.
    assert.equal(want.subarray(0, 17).toString('hex'), '6167656e7473636d2d7061636b2d76320a');

    const set = new PackSet(dir);
    assert.deepEqual(set.read(sha(A), 1 << 20), A);
    assert.deepEqual(set.read(sha(B), 1 << 20), B);
    assert.equal(set.read(sha('absent'), 1 << 20), undefined);

    // Reads go through the index: with record A's own digest changed, A is still found where the index
    // says (a walk of the records would not find it).
    const file = path.join(dir, name!);
    const bytes = fs.readFileSync(file);
    bytes[magic.length] = bytes[magic.length]! ^ 0xff;
    fs.chmodSync(file, 0o600);
    fs.writeFileSync(file, bytes);
    assert.deepEqual(new PackSet(dir).read(sha(A), 1 << 20), A);
  });

  it('answers limit from the index without reading, and nothing for a record whose bytes are not its digest', () => {
    const dir = tmp();
    const w = new PackWriter(dir);
    w.add(sha(B), B);
    w.publish();
    assert.equal(new PackSet(dir).read(sha(B), B.length - 1), 'limit');
    assert.deepEqual(new PackSet(dir).read(sha(B), B.length), B);
    // One byte of the blob changed on disk: the index still points at it, the digest check refuses it.
    const file = path.join(dir, packs(dir)[0]!);
    const bytes = fs.readFileSync(file);
    bytes[17 + 40] = bytes[17 + 40]! ^ 1;
    fs.chmodSync(file, 0o600);
    fs.writeFileSync(file, bytes);
    assert.equal(new PackSet(dir).read(sha(B), 1 << 20), undefined);
    // With those bytes changed, the limit answer still comes: it was given without reading them.
    assert.equal(new PackSet(dir).read(sha(B), B.length - 1), 'limit');
  });

  it('reads v1 packs and a v2 pack whose index does not check out by walking their records', () => {
    const dir = tmp();
    // v1: records only, the last one torn (as a crash may have left it before v2).
    const v1 = Buffer.concat([Buffer.from('agentscm-pack-v1\n', 'latin1'), Buffer.from(sha(A), 'hex'), u64(A.length), A, Buffer.from(sha(B), 'hex'), u64(B.length), B.subarray(0, 3)]);
    fs.writeFileSync(path.join(dir, 'old.pack'), v1);
    const set = new PackSet(dir);
    assert.deepEqual(set.read(sha(A), 1 << 20), A);
    assert.equal(set.read(sha(B), 1 << 20), undefined);

    const dir2 = tmp();
    const w = new PackWriter(dir2);
    w.add(sha(A), A);
    w.add(sha(B), B);
    w.publish();
    const file = path.join(dir2, packs(dir2)[0]!);
    const bytes = fs.readFileSync(file);
    // Swap the two index entries: out of order, so the index is not used; the records still are.
    const indexAt = Number(bytes.readBigUInt64BE(bytes.length - 32));
    const e0 = Buffer.from(bytes.subarray(indexAt, indexAt + 48));
    bytes.copy(bytes, indexAt, indexAt + 48, indexAt + 96);
    e0.copy(bytes, indexAt + 48);
    fs.chmodSync(file, 0o600);
    fs.writeFileSync(file, bytes);
    const set2 = new PackSet(dir2);
    assert.deepEqual(set2.read(sha(A), 1 << 20), A);
    assert.deepEqual(set2.read(sha(B), 1 << 20), B);
  });

  it('finds a pack published after a read missed, and never reads a temporary pack', () => {
    const dir = path.join(tmp(), 'packs');
    const set = new PackSet(dir);
    assert.equal(set.read(sha(A), 1 << 20), undefined, 'no packs directory yet');
    fs.mkdirSync(dir, { recursive: true });
    const w = new PackWriter(dir);
    w.add(sha(A), A);
    assert.equal(set.read(sha(A), 1 << 20), undefined, 'an unpublished pack is not read');
    w.publish();
    assert.deepEqual(set.read(sha(A), 1 << 20), A);
    const empty = new PackWriter(dir);
    empty.publish();
    assert.equal(packs(dir).length, 1, 'a pack with nothing added is not written');
    const discarded = new PackWriter(dir);
    discarded.add(sha(B), B);
    discarded.discard();
    assert.equal(fs.readdirSync(dir).length, 1, 'a discarded pack leaves nothing');
  });

  it('finds every blob of many packs in any order of reads (the pack that held the last one is searched first)', () => {
    const dir = tmp();
    const blobs: Buffer[] = [];
    for (let k = 0; k < 20; k++) {
      const w = new PackWriter(dir);
      // Each pack: two blobs of its own and one that every pack holds.
      for (const b of [Buffer.from(`pack ${k} a\n`), Buffer.from(`pack ${k} b\n`)]) {
        w.add(sha(b), b);
        blobs.push(b);
      }
      w.add(sha(A), A);
      w.publish();
    }
    const set = new PackSet(dir);
    // Forward, backward and interleaved: each read finds its bytes whichever pack came first.
    const order = [...blobs, ...[...blobs].reverse(), ...blobs.filter((_, i) => i % 3 === 0), A, ...blobs.filter((_, i) => i % 3 !== 0), A];
    for (const b of order) assert.deepEqual(set.read(sha(b), 1 << 20), b);
    assert.equal(set.read(sha(B), 1 << 20), undefined, 'a blob no pack holds');
    assert.deepEqual(set.read(sha(blobs[7]!), 1 << 20), blobs[7]);
  });

  it('repacks every blob of every pack into one, each once; a reader that had loaded the old packs finds them in the new one', () => {
    const dir = tmp();
    const blobs: Buffer[] = [];
    for (let k = 0; k < 6; k++) {
      const w = new PackWriter(dir);
      const own = Buffer.from(`repack ${k}\n`);
      w.add(sha(own), own);
      w.add(sha(A), A);
      w.publish();
      blobs.push(own);
    }
    // A v1 pack of an older store: records only.
    fs.writeFileSync(path.join(dir, 'v1.pack'), Buffer.concat([Buffer.from('agentscm-pack-v1\n'), Buffer.from(sha(B), 'hex'), u64(B.length), B]));
    blobs.push(A, B);
    const reader = new PackSet(dir);
    assert.deepEqual(reader.read(sha(blobs[0]!), 1 << 20), blobs[0]);
    const r = repackPacks(dir);
    assert.deepEqual(r, { packs_before: 7, packs_after: 1, blobs: 8, bytes: blobs.reduce((n, b) => n + b.length, 0), kept: [], removed_temporary: [] });
    assert.equal(packs(dir).length, 1);
    assert.deepEqual(fs.readdirSync(dir).filter((n) => !n.endsWith('.pack')), [], 'no temporary file left');
    for (const b of blobs) {
      assert.deepEqual(reader.read(sha(b), 1 << 20), b, 'the reader of before');
      assert.deepEqual(new PackSet(dir).read(sha(b), 1 << 20), b, 'a new reader');
    }
    // One pack: nothing to do, nothing written.
    const name = packs(dir)[0]!;
    assert.deepEqual(repackPacks(dir), { packs_before: 1, packs_after: 1, blobs: 0, bytes: 0, kept: [], removed_temporary: [] });
    assert.deepEqual(packs(dir), [name]);
  });

  it('repack keeps a pack with a record that is not its digest, and copies its good records', () => {
    const dir = tmp();
    const w = new PackWriter(dir);
    w.add(sha(A), A);
    w.publish();
    // A v1 pack whose second record's bytes are not its digest (bit rot), its first record fine.
    const bad = Buffer.from('bit rot\n');
    const C = Buffer.from('third\n');
    fs.writeFileSync(path.join(dir, 'damaged.pack'), Buffer.concat([Buffer.from('agentscm-pack-v1\n'), Buffer.from(sha(C), 'hex'), u64(C.length), C, Buffer.from(sha(B), 'hex'), u64(bad.length), bad]));
    const r = repackPacks(dir);
    assert.deepEqual(r.kept, ['damaged.pack']);
    assert.equal(r.blobs, 2);
    assert.equal(r.packs_after, 2);
    assert.ok(packs(dir).includes('damaged.pack'));
    const set = new PackSet(dir);
    assert.deepEqual(set.read(sha(A), 1 << 20), A);
    assert.deepEqual(set.read(sha(C), 1 << 20), C);
    assert.equal(set.read(sha(B), 1 << 20), undefined);
  });

  it('repack keeps a pack that is not whole (a record or the index cut short) and copies its whole records', () => {
    const dir = tmp();
    const w = new PackWriter(dir);
    w.add(sha(A), A);
    w.publish();
    const C = Buffer.from('third blob\n');
    const D = Buffer.from('fourth blob, its record cut short\n');
    // A v2 pack cut in its last record (its index and trailer gone), one cut just before its index, and
    // a v1 pack cut in its last record: the readable records are copied, each pack is kept and named.
    const v2 = new PackWriter(dir);
    v2.add(sha(C), C);
    v2.add(sha(D), D);
    v2.publish();
    const v2Name = packs(dir).find((n) => fs.readFileSync(path.join(dir, n)).includes(D))!;
    const v2Bytes = fs.readFileSync(path.join(dir, v2Name));
    const recordsEnd = v2Bytes.indexOf(D) + D.length;
    fs.writeFileSync(path.join(dir, 'cut-record.pack'), v2Bytes.subarray(0, recordsEnd - 5));
    fs.writeFileSync(path.join(dir, 'cut-index.pack'), v2Bytes.subarray(0, recordsEnd));
    fs.rmSync(path.join(dir, v2Name));
    fs.writeFileSync(path.join(dir, 'v1-cut.pack'), Buffer.concat([Buffer.from('agentscm-pack-v1\n'), Buffer.from(sha(B), 'hex'), u64(B.length), B, Buffer.from(sha(D), 'hex'), u64(D.length), D.subarray(0, 4)]));
    const r = repackPacks(dir);
    assert.deepEqual([...r.kept].sort(), ['cut-index.pack', 'cut-record.pack', 'v1-cut.pack']);
    assert.equal(r.packs_after, 4);
    const set = new PackSet(dir);
    for (const b of [A, B, C, D]) assert.deepEqual(set.read(sha(b), 1 << 20), b, 'every whole record is still read');
    // The next repack copies again and keeps the same three: nothing of theirs is lost.
    assert.deepEqual([...repackPacks(dir).kept].sort(), ['cut-index.pack', 'cut-record.pack', 'v1-cut.pack']);
  });

  it('repack removes the temporary packs of writers that died an hour ago or more, and nothing else', () => {
    const dir = tmp();
    const w = new PackWriter(dir);
    w.add(sha(A), A);
    w.publish();
    // A pid that was used and is gone: a child that has exited.
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
    const hourAgo = (Date.now() - 61 * 60 * 1000) / 1000;
    const name = (pid: number, r: string) => `.${pid}.${r.repeat(16)}.pack.tmp`;
    const files = { dead: name(gone, 'a'), fresh: name(gone, 'b'), live: name(process.pid, 'c'), other: `.${gone}.notours.tmp` };
    for (const [k, n] of Object.entries(files)) {
      fs.writeFileSync(path.join(dir, n), 'agentscm-pack-v2\npart');
      if (k !== 'fresh') fs.utimesSync(path.join(dir, n), hourAgo, hourAgo);
    }
    const r = repackPacks(dir);
    assert.deepEqual(r.removed_temporary, [files.dead]);
    assert.deepEqual(fs.readdirSync(dir).filter((n) => n.startsWith('.')).sort(), [files.fresh, files.live, files.other].sort());
    assert.deepEqual(new PackSet(dir).read(sha(A), 1 << 20), A, 'the published pack stays');
  });

  it('writes a blob larger than its write chunk whole', () => {
    const dir = tmp();
    const big = Buffer.alloc(3 * (1 << 20) + 5, 0x5a);
    const w = new PackWriter(dir);
    w.add(sha(A), A);
    w.add(sha(big), big);
    w.add(sha(B), B);
    w.publish();
    const set = new PackSet(dir);
    assert.deepEqual(set.read(sha(big), big.length), big);
    assert.deepEqual(set.read(sha(B), 1 << 20), B);
  });
});
