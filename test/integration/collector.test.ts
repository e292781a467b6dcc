// The collector end to end through the built CLI: a real Hub over HTTP, real podman through dockerode,
// the busybox test image. Passing and failing checks, qualification and its live checks, exact retries,
// and the Hub's refusals of tampered, wrongly signed, revoked and runtime-changed transfers.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseStrictJson } from '../../src/core/canonical/json.js';
import { encodeTransfer, executionRecordBytes, headerBytes, headerSigningDigest, recordEntry, sliceRecords, splitTransfer, type ExecutionRecord, type TransferHeader } from '../../src/core/collector/transfer.js';
import { generateKeyPair, sign } from '../../src/core/crypto/ed25519.js';
import { loadKey } from '../../src/core/crypto/keystore.js';
import { spawn } from 'node:child_process';
import { AGENTSCM_BIN, agentscm, json } from '../support/cli.js';
import { EXAMPLE_WORKSPACE } from '../support/hub.js';
import { checkpoint, claim, collect, collectorRig, executionDir, finalize, hubArgs, installProfile, profileDoc, qualification, retainedTransfers, retryUpload, type Claimed, type CollectorRig } from '../support/collector.js';

describe('agent-task collect', () => {
  let rig: CollectorRig;
  before(async () => {
    rig = await collectorRig();
  });
  after(async () => {
    await rig.stop();
  });

  it('a passing check qualifies the exact subject after finalize, and stops qualifying after revocation', () => {
    checkpoint(rig, 'pass');
    const c = claim(rig, 'pass');
    const r = collect(rig, 'pass', c);
    assert.equal(r.code, 0, r.stderr);
    const out = json(r);
    assert.equal(out.outcome, 'passed');
    assert.equal(out.exit_code, 0);
    assert.equal(r.stderr, '', 'nothing but the one JSON document in --json mode');
    assert.deepEqual(retainedTransfers(rig, c.attempt_id), { count: 1, outcome: 'passed' });

    const before = qualification(rig, 'pass');
    assert.equal(before.code, 8);
    assert.deepEqual(before.doc.next, { operation: 'collector_finalize' });
    const f = finalize(rig, 'pass');
    assert.equal(f.code, 0, f.stderr);
    const receipt = json(f);
    assert.equal(receipt.receipt_version, 2);
    const q = qualification(rig, 'pass');
    assert.equal(q.code, 0, JSON.stringify(q.doc));
    assert.equal(q.doc.qualified, true);
    assert.equal(q.doc.receipt_digest, receipt.receipt_digest);

    // A reinstalled (changed) profile: the receipt's installation is no longer current.
    installProfile(rig, profileDoc(rig, ['sh', './check.sh']));
    const changed = qualification(rig, 'pass');
    assert.equal(changed.doc.qualified, false);
    assert.deepEqual(changed.doc.failures, [{ task_id: c.task_id, code: 'authorization_changed' }]);
    installProfile(rig, profileDoc(rig)); // the same bytes again are a new installation: still not the receipt's
    assert.equal(qualification(rig, 'pass').doc.qualified, false);
  });

  it('a passing transfer whose profile was reinstalled before finalize is authorization_changed, not a finalize to offer', () => {
    restoreWorkspace(rig);
    checkpoint(rig, 'reinstall');
    const c = claim(rig, 'reinstall');
    assert.equal(collect(rig, 'reinstall', c).code, 0);
    assert.deepEqual(qualification(rig, 'reinstall').doc.next, { operation: 'collector_finalize' });
    installProfile(rig, profileDoc(rig, ['sh', './check.sh'])); // a new installation: the transfer's is no longer current
    try {
      const q = qualification(rig, 'reinstall');
      assert.equal(q.doc.qualified, false);
      assert.deepEqual(q.doc.failures, [{ task_id: c.task_id, code: 'authorization_changed' }]);
      assert.notDeepEqual(q.doc.next, { operation: 'collector_finalize' });
      assert.equal(finalize(rig, 'reinstall').code, 7);
    } finally {
      installProfile(rig, profileDoc(rig));
    }
  });

  it('a collect refused before dispatch ends with its error: the early engine reads and the idle staging worker do not hold the process', () => {
    const r = collect(rig, 'never-checkpointed', { task_id: 'task-none', attempt_id: 'att-none' } as Claimed);
    assert.ok(r.code !== 0 && r.code !== -1, `exit ${r.code}: ${r.stderr}`);
    const doc = json(r) as { error?: { code?: string } };
    assert.equal(typeof doc.error?.code, 'string', r.stdout);
  });

  it('a Hub answer the schema refuses stops collect before anything is reserved or run', async () => {
    // collect checks the answers on its way with hand-written checks that only ever accept, and leaves
    // everything else to the zod schemas. A real Hub never sends a malformed descriptor, so this fault
    // is made by a proxy in front of it that adds one member to the descriptor (a candidate "fallback").
    checkpoint(rig, 'tampered');
    const c = claim(rig, 'tampered');
    const upstream = new URL(rig.hub.url);
    const proxy = http.createServer((req, res) => {
      const body: Buffer[] = [];
      req.on('data', (b: Buffer) => body.push(b));
      req.on('end', () => {
        // agent: false: a pooled keep-alive socket could be one the Hub is closing as it is reused.
        const up = http.request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers, agent: false }, (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (b: Buffer) => chunks.push(b));
          answer.on('end', () => {
            let text = Buffer.concat(chunks).toString('utf8');
            const doc = JSON.parse(text) as { operation?: string; descriptor?: Record<string, unknown> };
            if (doc.operation === 'collector_descriptor' && doc.descriptor) {
              doc.descriptor.fallback_image = rig.image;
              text = JSON.stringify(doc);
            }
            res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
            res.end(text);
          });
        });
        up.end(Buffer.concat(body));
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (proxy.address() as { port: number }).port;
      const args = hubArgs(rig).map((a) => (a === rig.hub.url ? `http://127.0.0.1:${port}` : a));
      const r = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, [AGENTSCM_BIN, 'agent-task', 'collect', 'tampered', ...args, '--task-id', c.task_id, '--attempt-id', c.attempt_id, '--key-dir', rig.keyDir, '--json'], { env: rig.env });
        let stdout = '';
        child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
        child.on('close', (code) => resolve({ code, stdout }));
      });
      assert.equal(r.code, 6, r.stdout);
      const doc = JSON.parse(r.stdout) as { error: { code: string; message: string } };
      assert.equal(doc.error.code, 'HUB_MALFORMED');
      assert.match(doc.error.message, /descriptor/);
      assert.throws(() => executionDir(rig, c.attempt_id), /no execution dir|ENOENT/, 'nothing was reserved');
    } finally {
      proxy.close();
    }
  });

  it('a failing check exits 0, uploads a typed failed record and does not qualify', () => {
    fs.writeFileSync(path.join(rig.workspace, 'greet.sh'), "greet() {\n  printf 'bye, %s\\n' \"$1\"\n}\n");
    try {
      checkpoint(rig, 'fail');
      const c = claim(rig, 'fail');
      const r = collect(rig, 'fail', c);
      assert.equal(r.code, 0, r.stderr);
      const out = json(r);
      assert.equal(out.outcome, 'failed');
      assert.equal(out.exit_code, 1);
      assert.deepEqual(retainedTransfers(rig, c.attempt_id), { count: 1, outcome: 'failed' });
      const q = qualification(rig, 'fail');
      assert.equal(q.code, 8);
      assert.equal(q.doc.qualified, false);
      assert.deepEqual(q.doc.failures, [{ task_id: c.task_id, code: 'collector_not_passed' }]);
      assert.equal(finalize(rig, 'fail').code, 7);
      // A new checkpoint gives a new subject; the old one is superseded.
      checkpoint(rig, 'fail');
      assert.equal(qualification(rig, 'fail').doc.subject_current, true);
    } finally {
      restoreWorkspace(rig);
    }
  });

  it('a staged file whose blob no longer matches its digest stops collect before the container starts', () => {
    // Regular files are staged as hard links to their blobs and checked while the container is created:
    // a blob changed after the checkpoint (its own content, unique to this test) must not run.
    const unique = `notes for the corrupt-blob test ${process.pid}\n`;
    fs.writeFileSync(path.join(rig.workspace, 'NOTES.txt'), unique);
    try {
      checkpoint(rig, 'corrupt');
      const c = claim(rig, 'corrupt');
      const sha = createHash('sha256').update(unique).digest('hex');
      const blob = path.join(rig.dataDir, 'snapshots', 'blobs', sha.slice(0, 2), sha);
      assert.equal(fs.existsSync(blob), false, 'a checkpoint writes packs, not loose blobs');
      // A loose blob as an earlier collect run would have written it (0444, in a 0700 directory), then
      // changed: the same size, so that it is linked (a blob of another size is copied from the pack,
      // with the snapshot's bytes; test/unit/snapshot-stage.test.ts).
      fs.mkdirSync(path.dirname(blob), { recursive: true, mode: 0o700 });
      fs.writeFileSync(blob, unique.replace('notes', 'NOTES'), { mode: 0o444 });
      fs.chmodSync(blob, 0o444);
      const r = collect(rig, 'corrupt', c);
      assert.equal(r.code, 9, `${r.code}: ${r.stdout}${r.stderr}`);
      assert.equal((json(r) as { error?: { code?: string } }).error?.code, 'SNAPSHOT_CORRUPT');
      assert.deepEqual(retainedTransfers(rig, c.attempt_id), { count: 0, outcome: undefined }, 'nothing was uploaded');
      assert.equal(fs.existsSync(path.join(executionDir(rig, c.attempt_id), 'container.json')), false, 'no container was recorded as started');
    } finally {
      fs.rmSync(path.join(rig.workspace, 'NOTES.txt'), { force: true });
    }
  });

  it('retry-upload re-sends the identical retained bytes; changed bytes under the same upload id conflict', () => {
    restoreWorkspace(rig);
    checkpoint(rig, 'retry');
    const c = claim(rig, 'retry');
    assert.equal(collect(rig, 'retry', c).code, 0);
    const again = retryUpload(rig, c);
    assert.equal(again.code, 0, again.stderr);
    const view = json(again);
    assert.equal(view.replayed, true);
    assert.equal(view.outcome, 'passed');
    // A second collect run uploads the retained bytes again and never reruns.
    const rerun = collect(rig, 'retry', c);
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.equal(json(rerun).resumed, true);

    const file = path.join(executionDir(rig, c.attempt_id), 'transfer.bin');
    const original = fs.readFileSync(file);
    fs.writeFileSync(file, resign(original, rig, (rec) => ({ ...rec, finished_at: '2000-01-01T00:00:00Z' })));
    const changed = retryUpload(rig, c);
    assert.equal(changed.code, 7, changed.stdout + changed.stderr);
    assert.match(changed.stdout, /UPLOAD_REQUEST_CONFLICT/);
    fs.writeFileSync(file, original);
    assert.deepEqual(retainedTransfers(rig, c.attempt_id), { count: 1, outcome: 'passed' });
  });

  it('collect resolves a relative --key-dir against the current directory', () => {
    restoreWorkspace(rig);
    checkpoint(rig, 'relkey');
    const c = claim(rig, 'relkey');
    const args = ['agent-task', 'collect', 'relkey', ...hubArgs(rig), '--task-id', c.task_id, '--attempt-id', c.attempt_id, '--json'];
    const r = agentscm([...args, '--key-dir', path.relative(rig.root, rig.keyDir)], { env: rig.env, cwd: rig.root, timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(json(r).outcome, 'passed');
    assert.deepEqual(retainedTransfers(rig, c.attempt_id), { count: 1, outcome: 'passed' });
  });

  it('collect refuses a state dir with ":" (which no bind mount can carry) before writing anything, naming the option', () => {
    restoreWorkspace(rig);
    checkpoint(rig, 'colon');
    const c = claim(rig, 'colon');
    const args = ['agent-task', 'collect', 'colon', ...hubArgs(rig), '--task-id', c.task_id, '--attempt-id', c.attempt_id, '--json'];
    // The enrolled key, in a key dir whose name has a ":" (so its default state dir has one too).
    const colonKey = path.join(rig.root, 'key:copy');
    fs.mkdirSync(colonKey, { mode: 0o700 });
    for (const n of fs.readdirSync(rig.keyDir)) if (fs.statSync(path.join(rig.keyDir, n)).isFile()) fs.copyFileSync(path.join(rig.keyDir, n), path.join(colonKey, n));
    const before = fs.readdirSync(colonKey).sort();
    const k = agentscm([...args, '--key-dir', colonKey], { env: rig.env, timeoutMs: 120_000 });
    assert.equal(k.code, 3, k.stdout + k.stderr);
    const kd = json(k) as { error: { code: string; message: string } };
    assert.equal(kd.error.code, 'BAD_STATE_DIR');
    assert.match(kd.error.message, /--key-dir/);
    assert.deepEqual(fs.readdirSync(colonKey).sort(), before, 'nothing was written under the key dir');

    const colonState = path.join(rig.root, 'state:here');
    const s = agentscm([...args, '--key-dir', rig.keyDir, '--state-dir', colonState], { env: rig.env, timeoutMs: 120_000 });
    assert.equal(s.code, 3, s.stdout + s.stderr);
    const sd = json(s) as { error: { code: string; message: string } };
    assert.equal(sd.error.code, 'BAD_STATE_DIR');
    assert.match(sd.error.message, /--state-dir/);
    assert.equal(fs.existsSync(colonState), false, 'the state dir was not created');
    assert.throws(() => executionDir(rig, c.attempt_id), /no execution dir/, 'nothing was reserved in the key dir\'s state either');
    assert.equal(retainedTransfers(rig, c.attempt_id).count, 0);
  });

  it('after a new checkpoint, collect uploads an attempt\'s retained transfer again (as retry-upload does)', () => {
    restoreWorkspace(rig);
    // Retained but not uploaded (killed after retention), then the Change moves on.
    checkpoint(rig, 'moved-on');
    const c = claim(rig, 'moved-on');
    assert.equal(collect(rig, 'moved-on', c, { AGENTSCM_FAULT: 'after-retain' }).code, -1);
    checkpoint(rig, 'moved-on');
    const r = collect(rig, 'moved-on', c);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const out = json(r);
    assert.equal(out.resumed, true);
    assert.equal(out.outcome, 'passed');
    assert.equal((out.upload as Record<string, unknown>).replayed, false);
    assert.deepEqual(retainedTransfers(rig, c.attempt_id), { count: 1, outcome: 'passed' });

    // Uploaded already, and another checkpoint: the Hub answers with its retained view.
    checkpoint(rig, 'moved-on');
    const again = collect(rig, 'moved-on', c);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.equal((json(again).upload as Record<string, unknown>).replayed, true);
    assert.deepEqual(retainedTransfers(rig, c.attempt_id), { count: 1, outcome: 'passed' });

    // An attempt with nothing retained is still refused for a task the current subject does not have.
    const none = collect(rig, 'moved-on', { ...c, attempt_id: 'att-never-collected' });
    assert.equal(none.code, 13, none.stdout + none.stderr);
    assert.equal((json(none) as { error: { code: string } }).error.code, 'TASK_NOT_FOUND');
  });

  it('collector-claim run again with the same --request-id is the identical request: the retained outcome', () => {
    restoreWorkspace(rig);
    checkpoint(rig, 'claim-retry');
    const args = ['agent-task', 'collector-claim', 'claim-retry', ...hubArgs(rig), '--step', 'check', '--lease-ms', '600000', '--executor-id', 'collector-1', '--request-id', 'cc-retry-1', '--json'];
    const first = agentscm(args);
    assert.equal(first.code, 0, first.stdout + first.stderr);
    const again = agentscm(args);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    const a = json(first);
    const b = json(again);
    assert.equal(b.replayed, true);
    assert.deepEqual({ ...b, replayed: false }, a);
  });

  it('an expired lease runs nothing; a transfer that arrives after its lease expired is refused', async () => {
    const reserved = (attemptId: string) => {
      try {
        executionDir(rig, attemptId);
        return true;
      } catch {
        return false;
      }
    };
    restoreWorkspace(rig);
    checkpoint(rig, 'expired');
    const c = claim(rig, 'expired', 1000);
    await new Promise((r) => setTimeout(r, 1500));
    const r = collect(rig, 'expired', c);
    assert.equal(r.code, 7, r.stdout + r.stderr);
    assert.match(r.stdout, /ATTEMPT_NOT_APPLICABLE/);
    assert.equal(reserved(c.attempt_id), false, 'nothing was reserved, so nothing ran');

    // A signed transfer retained in time but uploaded after the lease expired (the collector was killed
    // before its upload): the Hub refuses it, and the task stays unresolved until reconciled.
    checkpoint(rig, 'late');
    const late = claim(rig, 'late', 20000);
    // Taken once the claim has answered: the Hub issued the lease before this moment. The lease leaves
    // a loaded host room to run the command and sign before it expires.
    const claimedAt = Date.now();
    const killed = collect(rig, 'late', late, { AGENTSCM_FAULT: 'after-retain' });
    assert.equal(killed.code, -1, killed.stdout + killed.stderr);
    await new Promise((r) => setTimeout(r, Math.max(0, claimedAt + 20300 - Date.now())));
    const lr = retryUpload(rig, late);
    assert.equal(lr.code, 7, lr.stdout + lr.stderr);
    assert.match(lr.stdout, /LEASE_EXPIRED/);
    const q = qualification(rig, 'late');
    assert.equal(q.doc.qualified, false);
    assert.equal((q.doc.tasks as Record<string, unknown>[]).find((t) => t.task_id === late.task_id)!.state, 'uncertain');
  });

  it('the upload route refuses a declared body over 16 MiB before reading it', async () => {
    const token = fs.readFileSync(rig.tokenFile, 'utf8').trim();
    const url = new URL(rig.hub.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          method: 'POST',
          // A fresh connection: a pooled keep-alive socket could be one the Hub is closing as it is reused.
          agent: false,
          path: `/v1/hub/workspace/repositories/${encodeURIComponent('acme/demo')}/profiles/default/agent-tasks/collector-upload`,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', 'content-length': String(16 * 1024 * 1024 + 1) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      // Only the headers are sent: the answer must come without the body.
      req.flushHeaders();
    });
    assert.equal(status, 413);
  });

  describe('the Hub refuses', () => {
    /** A fresh attempt whose signed transfer is retained but not uploaded (the collector died after retention). */
    const retainedOnly = (change: string) => {
      restoreWorkspace(rig);
      checkpoint(rig, change);
      const c = claim(rig, change);
      const r = collect(rig, change, c, { AGENTSCM_FAULT: 'after-retain' });
      assert.equal(r.code, -1, 'killed by the fault injector');
      const file = path.join(executionDir(rig, c.attempt_id), 'transfer.bin');
      return { c, file, original: fs.readFileSync(file) };
    };

    it('a tampered transfer', () => {
      const { c, file, original } = retainedOnly('tamper');
      const bad = Buffer.from(original);
      const at = bad.length - 10;
      bad.writeUInt8(bad.readUInt8(at) ^ 0x01, at);
      fs.writeFileSync(file, bad);
      const r = retryUpload(rig, c);
      assert.equal(r.code, 3, r.stdout + r.stderr);
      assert.match(r.stdout, /RECORD_DIGEST_MISMATCH|INVALID_TRANSFER/);
      assert.equal(retainedTransfers(rig, c.attempt_id).count, 0);
      fs.writeFileSync(file, original);
      assert.equal(retryUpload(rig, c).code, 0, 'the untouched bytes are accepted');
    });

    it('a transfer signed with another key', () => {
      const { c, file, original } = retainedOnly('wrongkey');
      fs.writeFileSync(file, resign(original, rig, (r) => r, generateKeyPair().secretKey));
      const r = retryUpload(rig, c);
      assert.equal(r.code, 3, r.stdout + r.stderr);
      assert.match(r.stdout, /SIGNATURE_INVALID/);
      assert.equal(retainedTransfers(rig, c.attempt_id).count, 0);
    });

    it('a transfer with a changed runtime identity', () => {
      const { c, file, original } = retainedOnly('runtime');
      const other = 'ab'.repeat(32);
      fs.writeFileSync(file, resign(original, rig, (r) => ({ ...r, observed_runtime_identity_digest: other }), undefined, other));
      const r = retryUpload(rig, c);
      assert.equal(r.code, 3, r.stdout + r.stderr);
      assert.match(r.stdout, /RUNTIME_IDENTITY_MISMATCH/);
      assert.equal(retainedTransfers(rig, c.attempt_id).count, 0);
    });

    // Last: revocation ends this rig's enrollment.
    it('a transfer from a revoked enrollment, and a receipt stops qualifying', () => {
      restoreWorkspace(rig);
      checkpoint(rig, 'rv');
      const done = claim(rig, 'rv');
      assert.equal(collect(rig, 'rv', done).code, 0);
      assert.equal(finalize(rig, 'rv').code, 0);
      assert.equal(qualification(rig, 'rv').doc.qualified, true);
      const { c } = retainedOnly('revoked');
      assert.equal(agentscm(['authority', 'revoke-enrollment', '--yes', '--data-dir', rig.dataDir, '--registration-id', rig.registrationId, '--json']).code, 0);
      const r = retryUpload(rig, c);
      assert.equal(r.code, 7, r.stdout + r.stderr);
      assert.match(r.stdout, /ENROLLMENT_REVOKED/);
      assert.equal(retainedTransfers(rig, c.attempt_id).count, 0);
      const q = qualification(rig, 'rv');
      assert.equal(q.code, 8);
      assert.equal(q.doc.qualified, false);
      assert.equal(q.doc.receipt_digest, null);
    });
  });
});

function restoreWorkspace(rig: CollectorRig): void {
  fs.copyFileSync(path.join(EXAMPLE_WORKSPACE, 'greet.sh'), path.join(rig.workspace, 'greet.sh'));
}

/**
 * Rebuilds a retained transfer with a changed record (and optionally another observed runtime identity
 * in the header), signed with the enrolled key or another one: a fabricated transfer for refusal tests.
 */
function resign(bytes: Buffer, rig: CollectorRig, change: (r: ExecutionRecord) => ExecutionRecord, secretKey?: Uint8Array, observed?: string): Buffer {
  const parts = splitTransfer(bytes);
  const header = parseStrictJson(parts.header, { maxBytes: 1 << 16, what: 'header' }) as unknown as TransferHeader;
  const [req, rec] = sliceRecords(parts.rest, header.records);
  const record = change(JSON.parse(rec!.toString('utf8')) as ExecutionRecord);
  const recBytes = executionRecordBytes(record);
  const h: TransferHeader = {
    ...header,
    observed_runtime_identity_digest: observed ?? header.observed_runtime_identity_digest,
    records: [recordEntry('execution_request', req!), recordEntry('execution_record', recBytes)],
  };
  const hb = headerBytes(h);
  const sig = sign(headerSigningDigest(hb), secretKey ?? loadKey(rig.keyDir).secretKey);
  return encodeTransfer(hb, sig, [req!, recBytes]);
}
