// Receipt bundles end to end: a subject qualified by the real collector flow, a Hub serving with a
// receipt key, `receipt export`, then `receipt verify` offline — and every tampering fails with exit
// 10: a flipped byte anywhere, another trusted key, a swapped transfer (even one validly re-signed by
// the enrolled collector key), another revision. The Sigstore bundle verifies with sigstore-js's
// @sigstore/verify and the Hub's public key as trust material. The pinned Stop hook passes with the
// real Hub's signed qualified answer, and blocks the same answer replayed by a fake on its port.

import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { bundleFromJSON } from '@sigstore/bundle';
import { toSignedEntity, Verifier, type TrustMaterial } from '@sigstore/verify';
import { verifyBundle } from '../../src/core/attest/receipt-bundle.js';
import { canonicalJson, canonicalJsonBytes } from '../../src/core/canonical/json.js';
import { encodeTransfer, headerSigningDigest, splitTransfer, transferBytesDigest, transferDigest } from '../../src/core/collector/transfer.js';
import { generateKeyPair, sign, verificationKeyId } from '../../src/core/crypto/ed25519.js';
import { loadKey } from '../../src/core/crypto/keystore.js';
import { isAgentscmError } from '../../src/core/errors.js';
import { agentscm, json } from '../support/cli.js';
import { PROFILE, REPO, startHub } from '../support/hub.js';
import { COLLECTOR_SKIP, qualifiedRig } from '../support/qualified.js';
import { hookArgs, reasonDoc, runAsync, STOP_HOOK_BUNDLE, stopPayload } from '../support/stop-hook.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** sigstore-js: the Sigstore bundle JSON, verified with exactly one trusted public key and no tlog or timestamps. */
function sigstoreVerify(bundleJson: unknown, publicKeyHex: string): void {
  const pk = Buffer.from(publicKeyHex, 'hex');
  const hint = verificationKeyId(pk);
  const trust: TrustMaterial = {
    certificateAuthorities: [],
    timestampAuthorities: [],
    tlogs: [],
    ctlogs: [],
    publicKey: (h: string) => {
      if (h !== hint) throw new Error(`unknown key hint ${h}`);
      return { publicKey: createPublicKey({ key: Buffer.concat([SPKI_PREFIX, pk]), format: 'der', type: 'spki' }), validFor: () => true };
    },
  };
  const verifier = new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 });
  verifier.verify(toSignedEntity(bundleFromJSON(bundleJson)));
}

describe('receipt bundles', () => {
  test('export, offline verify, every tampering exits 10, Sigstore verification, and the pinned hook with the real signed answer', { skip: COLLECTOR_SKIP }, async () => {
    const rig = await qualifiedRig();
    const root = rig.root;
    const hubCall = (url: string) => ['--data-dir', rig.dataDir, '--endpoint', url, '--repository', REPO, '--profile', PROFILE, '--token-file', rig.tokenFile];
    // A Hub without a receipt key makes no bundle.
    let r = agentscm(['receipt', 'export', 'c1', ...hubCall(rig.hub.url), '--out', path.join(root, 'none.json')]);
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /no_receipt_key|receipt key/);
    assert.equal(fs.existsSync(path.join(root, 'none.json')), false);
    await rig.stop();

    const keyDir = path.join(root, 'receipt-key');
    const k = agentscm(['agent-task', 'key', 'generate', '--key-dir', keyDir, '--json']);
    assert.equal(k.code, 0, k.stderr);
    const pk = String(json(k).public_key);
    let hub = await startHub(rig.dataDir, ['--receipt-key-dir', keyDir]);
    try {
      const out = path.join(root, 'bundle.json');
      const sigOut = path.join(root, 'bundle.sigstore.json');
      r = agentscm(['receipt', 'export', 'c1', ...hubCall(hub.url), '--out', out, '--sigstore-out', sigOut, '--json']);
      assert.equal(r.code, 0, r.stderr);
      const exported = json(r);
      const q = agentscm(['agent-task', 'qualification', 'c1', ...hubCall(hub.url), '--json']);
      const revision = String(json(q).revision);
      assert.equal(exported.revision, revision);
      assert.equal(exported.receipt_digest, json(q).receipt_digest);
      // Create-only.
      assert.equal(agentscm(['receipt', 'export', 'c1', ...hubCall(hub.url), '--out', out]).code, 3);

      const text = fs.readFileSync(out, 'utf8');
      const bundle = JSON.parse(text) as Doc;
      assert.equal(bundle.media_type, 'application/vnd.agentscm.receipt-bundle.v1+json');
      assert.equal(bundle.transfers.length, 1);
      assert.equal(bundle.enrollments.length, 1);
      assert.equal(bundle.enrollments[0].revoked_at, null);
      const statement = JSON.parse(Buffer.from(bundle.dsse_envelope.payload, 'base64').toString('utf8')) as Doc;
      assert.equal(statement._type, 'https://in-toto.io/Statement/v1');
      assert.equal(statement.predicateType, 'https://in-toto.io/attestation/test-result/v0.1');
      assert.deepEqual(statement.subject, [{ digest: { sha256: revision }, name: 'agentscm.snapshot.v1' }]);
      assert.equal(statement.predicate.result, 'PASSED');
      assert.ok(statement.predicate.passedTests.length > 0 && statement.predicate.passedTests.every((t: string) => t.startsWith('check/')));
      assert.deepEqual(JSON.parse(fs.readFileSync(sigOut, 'utf8')), bundle.sigstore_bundle);
      assert.equal(bundle.sigstore_bundle.mediaType, 'application/vnd.dev.sigstore.bundle.v0.3+json');
      assert.deepEqual(bundle.sigstore_bundle.verificationMaterial.tlogEntries, []);

      // Offline: no Hub, no data dir.
      await hub.stop();
      const verify = (file: string, key = pk, extra: string[] = []) => agentscm(['receipt', 'verify', file, '--trusted-key', key, '--json', ...extra]);
      r = verify(out, pk, ['--revision', revision]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(json(r).verified, true);
      assert.equal((json(r).tasks as unknown[]).length, 1);

      // Wrong key, other revision.
      const other = Buffer.from(generateKeyPair().publicKey).toString('hex');
      r = verify(out, other);
      assert.equal(r.code, 10, r.stderr);
      r = verify(out, pk, ['--revision', 'f'.repeat(64)]);
      assert.equal(r.code, 10, r.stderr);
      assert.match(r.stderr, /REVISION_MISMATCH|another revision/);

      // A flipped byte in each part (CLI), then at a stride over the whole file (in process).
      const write = (name: string, t: string | Buffer) => {
        const f = path.join(root, name);
        fs.writeFileSync(f, t);
        return f;
      };
      const flipAt = (t: Buffer, i: number) => {
        const b = Buffer.from(t);
        b[i] = b[i]! ^ 0x01;
        return b;
      };
      const bytes = Buffer.from(text, 'utf8');
      for (const marker of ['"body_base64":"', '"bytes_base64":"', '"payload":"', '"sig":"', '"public_key":"']) {
        const i = text.indexOf(marker) + marker.length + 10;
        r = verify(write('flipped.json', flipAt(bytes, i)));
        assert.equal(r.code, 10, `${marker}: ${r.stderr}`);
      }
      const key = Buffer.from(pk, 'hex');
      for (let i = 0; i < bytes.length; i += 13) {
        assert.throws(() => verifyBundle(flipAt(bytes, i), key), (e: unknown) => isAgentscmError(e) && e.exitCode === 10, `byte ${i} flipped`);
      }

      // A swapped transfer: the same attempt's transfer with one header field changed, validly
      // re-signed by the enrolled collector key; listed under its own digest, and under the old one.
      const original = Buffer.from(bundle.transfers[0].bytes_base64, 'base64');
      const parts = splitTransfer(original);
      const header = JSON.parse(parts.header.toString('utf8')) as Doc;
      header.upload_request_id = `${header.upload_request_id}-other`;
      const newHeader = canonicalJsonBytes(header);
      const collectorKey = loadKey(path.join(root, 'key'));
      const swappedBytes = encodeTransfer(newHeader, sign(headerSigningDigest(newHeader), collectorKey.secretKey), [parts.rest]);
      for (const digest of [transferDigest(newHeader), bundle.transfers[0].transfer_digest]) {
        const swapped = { ...bundle, transfers: [{ transfer_digest: digest, bytes_base64: swappedBytes.toString('base64') }] };
        r = verify(write('swapped.json', canonicalJson(swapped)));
        assert.equal(r.code, 10, r.stderr);
        assert.match(r.stderr, /TRANSFER_MISMATCH|not the signed one/);
      }
      assert.notEqual(transferBytesDigest(swappedBytes), transferBytesDigest(original));

      // sigstore-js verifies the Sigstore bundle with the Hub's key, and refuses another key or a changed payload.
      sigstoreVerify(bundle.sigstore_bundle, pk);
      assert.throws(() => sigstoreVerify(bundle.sigstore_bundle, other));
      const tampered = JSON.parse(JSON.stringify(bundle.sigstore_bundle)) as Doc;
      tampered.dsseEnvelope.payload = Buffer.from(Buffer.from(tampered.dsseEnvelope.payload, 'base64').toString('utf8').replace(revision, 'e'.repeat(64))).toString('base64');
      assert.throws(() => sigstoreVerify(tampered, pk));

      hub = await startHub(rig.dataDir, ['--receipt-key-dir', keyDir]);
      const reg = String(bundle.enrollments[0].registration_id);
      // The pinned hook passes with the real Hub's signed qualified answer...
      const state = path.join(root, 'state');
      const env = { PATH: process.env.PATH, HOME: state, AGENTSCM_STATE_DIR: state };
      const s = { root, dataDir: rig.dataDir, workspace: rig.workspace, tokenFile: rig.tokenFile, tokenId: '' };
      const hookRun = (url: string, host: 'claude-code' | 'codex') =>
        runAsync([...hookArgs(s, url, host), '--hub-key', pk], stopPayload(host, `sess-bundle-${Math.random()}`, false, rig.workspace), env, host === 'codex' ? STOP_HOOK_BUNDLE : undefined);
      for (const host of ['claude-code', 'codex'] as const) {
        const h = await hookRun(hub.url, host);
        assert.equal(h.code, 0, h.stderr);
        assert.equal(h.stdout, '', `${host}: the signed qualified answer lets the session stop`);
      }
      // ...and the same real qualified answer, replayed by a fake on the Hub's port for another nonce, blocks.
      const token = fs.readFileSync(rig.tokenFile, 'utf8').trim();
      const subject = (JSON.parse(Buffer.from(bundle.receipt.body_base64, 'base64').toString('utf8')) as Doc).subject;
      const res = await fetch(`${hub.url}/v1/hub/workspace/repositories/${encodeURIComponent(REPO)}/profiles/${PROFILE}/agent-tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ operation: 'qualification', subject, nonce: 'ab'.repeat(32) }),
      });
      const realAnswer = (await res.json()) as Doc;
      assert.equal(realAnswer.qualified, true);
      assert.ok(realAnswer.hub_signature);
      const port = Number(new URL(hub.url).port);
      await hub.stop();
      const fake = http.createServer((req, rs) => {
        req.resume();
        req.on('end', () => {
          rs.writeHead(200, { 'content-type': 'application/json' });
          rs.end(JSON.stringify(realAnswer));
        });
      });
      await new Promise<void>((ok) => fake.listen(port, '127.0.0.1', () => ok()));
      try {
        for (const host of ['claude-code', 'codex'] as const) {
          const h = await hookRun(`http://127.0.0.1:${port}`, host);
          assert.equal(h.code, 0, h.stderr);
          const doc = reasonDoc(h.stdout);
          assert.equal(doc.error, 'answer not signed by the pinned Hub key');
        }
      } finally {
        await new Promise<void>((ok) => fake.close(() => ok()));
      }

      // Revocation after the receipt: a new export records it, and the bundle still verifies (as of the receipt).
      const rv = agentscm(['authority', 'revoke-enrollment', '--yes', '--data-dir', rig.dataDir, '--registration-id', reg]);
      assert.equal(rv.code, 0, rv.stderr);
      hub = await startHub(rig.dataDir, ['--receipt-key-dir', keyDir]);
      const out2 = path.join(root, 'bundle-after-revocation.json');
      r = agentscm(['receipt', 'export', 'c1', ...hubCall(hub.url), '--out', out2]);
      assert.equal(r.code, 0, r.stderr);
      const b2 = JSON.parse(fs.readFileSync(out2, 'utf8')) as Doc;
      assert.equal(typeof b2.enrollments[0].revoked_at, 'number');
      assert.ok(b2.enrollments[0].revoked_at > b2.enrollments[0].created_at);
      r = verify(out2);
      assert.equal(r.code, 0, r.stderr);
    } finally {
      await hub.stop();
    }
  });
});
