// Signed qualification answers: a Hub with a receipt key (hub serve --receipt-key-dir) signs each
// qualification answer for the request's subject and nonce; install-stop pins its public key (given,
// or recorded in the data dir); the pinned Stop hook believes only answers that verify. Whoever holds
// the endpoint's port while the Hub is down (a local HTTP server answering "qualified") cannot let a
// session stop: unsigned, wrongly signed and replayed answers all block with one fixed category.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { verifyQualificationAnswer } from '../../src/core/contract/answer-signature.js';
import { loadKey } from '../../src/core/crypto/keystore.js';
import { generateKeyPair, verificationKeyId } from '../../src/core/crypto/ed25519.js';
import { receiptKey, signQualification } from '../../src/hub/signing.js';
import { agentscm, json } from '../support/cli.js';
import { adminSetup, PROFILE, REPO, startHub, tempDir, type RunningHub, type Setup } from '../support/hub.js';
import { hookArgs, reasonDoc, runAsync, STOP_HOOK_BUNDLE, stopPayload, type Host } from '../support/stop-hook.js';

const SIGNATURE_CATEGORY = 'answer not signed by the pinned Hub key';
type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let seq = 0;
async function hook(s: Setup, url: string, host: Host, hubKey: string | undefined): Promise<{ code: number; stdout: string; stderr: string }> {
  const args = [...hookArgs(s, url, host), ...(hubKey !== undefined ? ['--hub-key', hubKey] : [])];
  const state = path.join(s.root, 'state');
  const env = { PATH: process.env.PATH, HOME: state, AGENTSCM_STATE_DIR: state };
  return runAsync(args, stopPayload(host, `sess-signed-${process.pid}-${++seq}`, false, s.workspace), env, host === 'codex' ? STOP_HOOK_BUNDLE : undefined);
}

function blocked(r: { code: number; stdout: string; stderr: string }): Doc {
  assert.equal(r.code, 0, r.stderr);
  assert.notEqual(r.stdout, '', 'the hook blocks');
  return reasonDoc(r.stdout);
}

/** A real HTTP server on 127.0.0.1:port answering each qualification request with answer(request body). */
function fakeHub(port: number, answer: (req: Doc) => unknown): Promise<{ requests: Doc[]; close: () => Promise<void> }> {
  const requests: Doc[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const doc = JSON.parse(body) as Doc;
      requests.push(doc);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer(doc)));
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve({ requests, close: () => new Promise((r) => server.close(() => r())) }));
  });
}

async function post(url: string, tokenFile: string, body: unknown): Promise<Doc> {
  const token = fs.readFileSync(tokenFile, 'utf8').trim();
  const res = await fetch(`${url}/v1/hub/workspace/repositories/${encodeURIComponent(REPO)}/profiles/${PROFILE}/agent-tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  return (await res.json()) as Doc;
}

describe('signed qualification answers and the pinned Stop hook', () => {
  let s: Setup;
  let subject: Doc;
  let keyDir: string;
  let publicKey: string;
  let hub: RunningHub;

  before(async () => {
    s = adminSetup();
    const c = agentscm(['checkpoint', 'c1', '--data-dir', s.dataDir, '--repository', REPO, '--profile', PROFILE, '--workspace', s.workspace, '--json']);
    assert.equal(c.code, 0, c.stderr);
    subject = json(c).subject as Doc;
    keyDir = path.join(s.root, 'receipt-key');
    const k = agentscm(['agent-task', 'key', 'generate', '--key-dir', keyDir, '--json']);
    assert.equal(k.code, 0, k.stderr);
    publicKey = String(json(k).public_key);
    hub = await startHub(s.dataDir, ['--receipt-key-dir', keyDir]);
  });
  after(async () => {
    await hub.stop();
  });

  test('the Hub signs each qualification answer for the subject and nonce asked, and records its public key for install-stop', async () => {
    const nonce = 'a1'.repeat(32);
    const a = await post(hub.url, s.tokenFile, { operation: 'qualification', subject, nonce });
    const pk = Buffer.from(publicKey, 'hex');
    assert.equal(a.hub_signature.key_id, verificationKeyId(pk));
    assert.ok(verifyQualificationAnswer(a, subject, nonce, pk, verificationKeyId(pk)));
    assert.ok(!verifyQualificationAnswer(a, subject, 'b2'.repeat(32), pk, verificationKeyId(pk)));
    // The typed CLI accepts the signed answer.
    const q = agentscm(['agent-task', 'qualification', 'c1', '--data-dir', s.dataDir, '--endpoint', hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile, '--json']);
    assert.equal(q.code, 8, q.stderr);
    assert.equal(json(q).qualified, false);
    const recorded = JSON.parse(fs.readFileSync(path.join(s.dataDir, 'hub-receipt-key.json'), 'utf8')) as Doc;
    assert.equal(recorded.public_key, publicKey);
    assert.equal((fs.statSync(path.join(s.dataDir, 'hub-receipt-key.json')).mode & 0o777), 0o600);
  });

  test('receipt export of a subject without a receipt exits 13 and writes nothing; a Hub key dir that is not private is refused', async () => {
    const out = path.join(s.root, 'no-receipt.json');
    const r = agentscm(['receipt', 'export', 'c1', '--data-dir', s.dataDir, '--endpoint', hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile, '--out', out]);
    assert.equal(r.code, 13, r.stderr);
    assert.match(r.stderr, /receipt_not_found/);
    assert.equal(fs.existsSync(out), false);
    const loose = path.join(s.root, 'loose-key');
    assert.equal(agentscm(['agent-task', 'key', 'generate', '--key-dir', loose]).code, 0);
    fs.chmodSync(loose, 0o755);
    const serve = agentscm(['hub', 'serve', '--data-dir', s.dataDir, '--listen', '127.0.0.1:0', '--receipt-key-dir', loose]);
    assert.equal(serve.code, 9, serve.stderr);
  });

  test('install-stop pins the recorded key, or the one given; a malformed key is refused', () => {
    const project = tempDir('project');
    const args = (extra: string[] = []) => [
      'install-stop', 'c1', '--host', 'claude-code', '--project', project, '--data-dir', s.dataDir, '--endpoint', hub.url,
      '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile, '--json', ...extra,
    ];
    let r = agentscm(args());
    assert.equal(r.code, 0, r.stderr);
    assert.equal(json(r).hub_key, publicKey);
    assert.ok(String(json(r).command).includes(` --hub-key ${publicKey} --workspace `));
    const other = Buffer.from(generateKeyPair().publicKey).toString('hex');
    r = agentscm(args(['--hub-key', other]));
    assert.equal(r.code, 0, r.stderr);
    assert.ok(String(json(r).command).includes(` --hub-key ${other} --workspace `));
    assert.equal((String(json(r).command).match(/--hub-key/g) ?? []).length, 1, 'the handler was replaced, not added');
    r = agentscm(args(['--hub-key', 'zz']));
    assert.equal(r.code, 3, r.stderr);
    // Without a recorded key and without --hub-key, nothing is pinned.
    const plain = adminSetup();
    r = agentscm([...args().filter((a) => a !== s.dataDir && a !== s.tokenFile && a !== '--data-dir' && a !== '--token-file'), '--data-dir', plain.dataDir, '--token-file', plain.tokenFile]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(json(r).hub_key, null);
    assert.ok(!String(json(r).command).includes('--hub-key'));
  });

  test('the pinned hook accepts the real Hub\'s signed answer (an unqualified subject blocks as not ready, not as unsigned)', async () => {
    for (const host of ['claude-code', 'codex'] as const) {
      const doc = blocked(await hook(s, hub.url, host, publicKey));
      assert.equal(doc.verdict, 'not_ready_to_stop');
      assert.equal(doc.error, undefined);
      assert.equal(doc.qualified, false);
    }
  });

  test('a pinned key that is not 64 hex digits (a hand-edited hook command) blocks as such, before the Hub is asked', async () => {
    let asked = 0;
    const server = http.createServer((_req, res) => {
      asked++;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (const bad of ['zz', publicKey.toUpperCase(), publicKey.slice(2), `${publicKey} `]) {
        for (const host of ['claude-code', 'codex'] as const) {
          const doc = blocked(await hook(s, url, host, bad));
          assert.equal(doc.verdict, 'check_failed', bad);
          assert.equal(doc.error, 'pinned Hub key malformed', bad);
          assert.equal(doc.next, null);
        }
      }
      assert.equal(asked, 0);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  test('a pinned key of 64 hex digits that is no Ed25519 public key blocks as a malformed key, not as the Hub\'s unsigned answer', async () => {
    // 02 00..00: no point has that y; 01 00..00: the identity, a small-order point; both refused by install-stop.
    const notPoint = '02' + '0'.repeat(62);
    const smallOrder = '01' + '0'.repeat(62);
    for (const bad of [notPoint, smallOrder]) {
      assert.equal(agentscm(['install-stop', 'c1', '--host', 'codex', '--project', tempDir('project'), '--data-dir', s.dataDir, '--endpoint', hub.url,
        '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile, '--hub-key', bad]).code, 3, bad);
      for (const host of ['claude-code', 'codex'] as const) {
        const doc = blocked(await hook(s, hub.url, host, bad));
        assert.equal(doc.verdict, 'check_failed', bad);
        assert.equal(doc.error, 'pinned Hub key malformed', bad);
        assert.equal(doc.next, null);
      }
    }
    // The control: a good key that is not the Hub's is the Hub's answer not signed by it.
    const other = Buffer.from(generateKeyPair().publicKey).toString('hex');
    const doc = blocked(await hook(s, hub.url, 'codex', other));
    assert.equal(doc.error, 'answer not signed by the pinned Hub key');
  });

  test('a fake Hub on the endpoint\'s port: unsigned, wrongly signed and replayed "qualified" answers block the pinned hook; only the Hub key\'s signature for this nonce passes', async () => {
    const qualified = {
      capability: 'agentscm.agent-workflow-tasks/v1', schema_version: 1, qualified: true, subject_current: true,
      receipt_digest: 'c'.repeat(64), revision: subject.revision, tasks: [], failures: [], next: { operation: 'none' },
    };
    // A real answer of the real Hub, signed for another nonce (captured before it goes down).
    const replayed = await post(hub.url, s.tokenFile, { operation: 'qualification', subject, nonce: 'c3'.repeat(32) });
    const port = Number(new URL(hub.url).port);
    await hub.stop();
    const realKey = receiptKey(loadKey(keyDir));
    const wrongKey = receiptKey(generateKeyPair());
    const cases: [string, (req: Doc) => unknown, boolean][] = [
      ['unsigned qualified', () => qualified, false],
      ['qualified, signed by another key for this very request', (req) => signQualification(qualified, req.subject, req.nonce, wrongKey), false],
      ['qualified, signature of another key id pasted under the Hub\'s key id', (req) => {
        const a = signQualification(qualified, req.subject, req.nonce, wrongKey) as Doc;
        return { ...a, hub_signature: { ...a.hub_signature, key_id: realKey.keyId } };
      }, false],
      ['the real Hub\'s answer replayed for another nonce', () => replayed, false],
      ['the real Hub\'s key signing a qualified answer for a nonce it was not sent', () => signQualification(qualified, subject, 'd4'.repeat(32), realKey), false],
      ['the Hub key\'s signature for this subject and nonce (control)', (req) => signQualification(qualified, req.subject, req.nonce, realKey), true],
    ];
    try {
      for (const [what, answer, passes] of cases) {
        const fake = await fakeHub(port, answer);
        try {
          for (const host of ['claude-code', 'codex'] as const) {
            const r = await hook(s, `http://127.0.0.1:${port}`, host, publicKey);
            if (passes) {
              assert.equal(r.code, 0, r.stderr);
              assert.equal(r.stdout, '', `${what}: allowed`);
            } else {
              const doc = blocked(r);
              assert.equal(doc.verdict, 'check_failed', what);
              assert.equal(doc.error, SIGNATURE_CATEGORY, what);
              assert.equal(doc.next, null);
            }
          }
          assert.equal(fake.requests.length, 2);
          for (const req of fake.requests) assert.match(String(req.nonce), /^[0-9a-f]{64}$/);
          assert.notEqual(fake.requests[0]!.nonce, fake.requests[1]!.nonce, 'a fresh nonce per stop');
          if (what === 'unsigned qualified') {
            // Without the pin, the same impostor lets the session stop: the attack this closes.
            const r = await hook(s, `http://127.0.0.1:${port}`, 'claude-code', undefined);
            assert.equal(r.code, 0, r.stderr);
            assert.equal(r.stdout, '');
          }
        } finally {
          await fake.close();
        }
      }
    } finally {
      hub = await startHub(s.dataDir, ['--receipt-key-dir', keyDir]);
    }
  });
});
