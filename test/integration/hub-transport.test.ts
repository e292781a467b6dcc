// The Hub's transport as a user and an attacker meet it: `hub serve` over https with the fixed test
// certificate (a typed call through the built CLI fails with a clear TLS error without the CA and works
// with --ca-file; the Stop hook and install-stop take https and --ca-file too), bad certificate files,
// HEAD, and one unauthenticated client that pipelines requests without ever reading its answers
// (the Hub's memory stays bounded and other clients are still served at once).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { agentscm, json } from '../support/cli.js';
import { adminSetup, callArgs, checkpointArgs, PROFILE, REPO, startHub, TLS_FIXTURES, TLS_SERVE_ARGS, type RunningHub, type Setup } from '../support/hub.js';
import { hookArgs, reasonDoc, runAsync, stopPayload } from '../support/stop-hook.js';

/** The resident set of a process in bytes, from /proc/PID/status. */
function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+([0-9]+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(m, 'VmRSS in /proc/PID/status');
  return Number(m[1]) * 1024;
}

/** The pipelining client: writes unauthenticated requests as fast as the socket takes them, never reads, stops by itself. */
const FLOODER = `
import * as net from 'node:net';
const [port, ms] = process.argv.slice(-2).map(Number);
const body = '{"operation":"capabilities"}';
const batch = ('POST /v1/hub/workspace/repositories/acme%2Fdemo/profiles/default/agent-tasks HTTP/1.1\\r\\nHost: h\\r\\n' +
  'Content-Type: application/json\\r\\nContent-Length: ' + body.length + '\\r\\n\\r\\n' + body).repeat(200);
const sock = net.connect(port, '127.0.0.1');
sock.on('error', () => {});
sock.pause();
await new Promise((r) => sock.once('connect', r));
const until = performance.now() + ms;
let written = 0;
while (performance.now() < until && !sock.destroyed) {
  written += batch.length;
  if (!sock.write(batch)) await Promise.race([new Promise((r) => sock.once('drain', r)), new Promise((r) => setTimeout(r, Math.max(0, until - performance.now())))]);
}
process.stdout.write(String(written));
sock.destroy();
`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the Hub over https', () => {
  let s: Setup;
  let hub: RunningHub;

  before(async () => {
    s = adminSetup();
    const c = agentscm(checkpointArgs(s));
    assert.equal(c.code, 0, c.stderr);
    hub = await startHub(s.dataDir, TLS_SERVE_ARGS);
  });
  after(async () => {
    await hub.stop();
  });

  test('the URL is https; a typed call without the CA is a clear TLS error (exit 5), with --ca-file it works', () => {
    assert.match(hub.url, /^https:\/\/127\.0\.0\.1:[0-9]+$/);
    const untrusted = agentscm(callArgs(s, hub.url, 'qualification', 'c1'));
    assert.equal(untrusted.code, 5, untrusted.stderr);
    const e = json<{ error: { code: string; message: string } }>(untrusted).error;
    assert.equal(e.code, 'HUB_TLS_UNTRUSTED');
    assert.match(e.message, /TLS certificate is not trusted .*pass --ca-file/);
    const plainText = agentscm(callArgs(s, hub.url, 'qualification', 'c1').filter((a) => a !== '--json'));
    assert.equal(plainText.code, 5);
    assert.match(plainText.stderr, /TLS certificate is not trusted .*pass --ca-file/);
    const trusted = agentscm([...callArgs(s, hub.url, 'qualification', 'c1'), '--ca-file', TLS_FIXTURES.ca]);
    assert.equal(trusted.code, 8, `not qualified, but answered: ${trusted.stderr}`);
    assert.equal(json(trusted).subject_current, true);
    const caps = agentscm(['agent-task', 'capabilities', '--endpoint', hub.url, '--ca-file', TLS_FIXTURES.ca, '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile, '--json']);
    assert.equal(caps.code, 0, caps.stderr);
    assert.equal(json(caps).capability, 'agentscm.agent-workflow-tasks/v1');
  });

  test('--ca-file that is no CA file, or with an http endpoint, is bad input (exit 3)', () => {
    const notPem = agentscm([...callArgs(s, hub.url, 'qualification', 'c1'), '--ca-file', s.tokenFile]);
    assert.equal(notPem.code, 3, notPem.stderr);
    assert.match(notPem.stderr, /no PEM certificate/);
    const plain = agentscm([...callArgs(s, hub.url.replace('https:', 'http:'), 'qualification', 'c1'), '--ca-file', TLS_FIXTURES.ca]);
    assert.equal(plain.code, 3, plain.stderr);
    assert.match(plain.stderr, /--ca-file is for an https:\/\/ endpoint/);
  });

  test('the Stop hook asks an https Hub with --ca-file, and fails closed without it; install-stop passes --ca-file on', async () => {
    const env = { PATH: process.env.PATH, HOME: s.root, AGENTSCM_STATE_DIR: path.join(s.root, 'state') };
    const withCa = await runAsync([...hookArgs(s, hub.url, 'claude-code'), '--ca-file', TLS_FIXTURES.ca], stopPayload('claude-code', 'tls-1', false, s.workspace), env);
    assert.equal(withCa.code, 0, withCa.stderr);
    const doc = reasonDoc(withCa.stdout);
    assert.equal(doc.verdict, 'not_ready_to_stop', 'the Hub answered');
    assert.equal(doc.next.operation, 'collector_claim');
    const without = await runAsync(hookArgs(s, hub.url, 'claude-code'), stopPayload('claude-code', 'tls-2', false, s.workspace), env);
    assert.equal(without.code, 0, without.stderr);
    const failed = reasonDoc(without.stdout);
    assert.equal(failed.verdict, 'check_failed');
    assert.equal(failed.error, 'service request failed');

    const project = path.join(s.root, 'project');
    fs.mkdirSync(project, { recursive: true });
    const base = ['install-stop', 'c1', '--host', 'codex', '--data-dir', s.dataDir, '--endpoint', hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', s.tokenFile, '--project', project, '--json'];
    const r = agentscm([...base, '--ca-file', TLS_FIXTURES.ca]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(String(json(r).command).includes(` --endpoint ${hub.url} --ca-file ${TLS_FIXTURES.ca} `), String(json(r).command));
    const relative = agentscm([...base, '--ca-file', 'ca.pem']);
    assert.equal(relative.code, 3, relative.stderr);
  });
});

describe('hub serve --tls-cert/--tls-key', () => {
  test('both or neither; files that are not a matching PEM pair exit 3 with a clear error', () => {
    const s = adminSetup();
    const serve = (...extra: string[]) => agentscm(['hub', 'serve', '--data-dir', s.dataDir, '--listen', '127.0.0.1:0', ...extra], { timeoutMs: 20_000 });
    const alone = serve('--tls-cert', TLS_FIXTURES.cert);
    assert.equal(alone.code, 2, alone.stderr);
    assert.match(alone.stderr, /--tls-cert and --tls-key go together/);
    const missing = serve('--tls-cert', path.join(s.root, 'nope.pem'), '--tls-key', TLS_FIXTURES.key);
    assert.equal(missing.code, 3, missing.stderr);
    assert.match(missing.stderr, /TLS certificate .*no such file/);
    const mismatched = serve('--tls-cert', TLS_FIXTURES.ca, '--tls-key', TLS_FIXTURES.key);
    assert.equal(mismatched.code, 3, mismatched.stderr);
    assert.match(mismatched.stderr, /must be a PEM certificate and its private key/);
    const garbage = serve('--tls-cert', s.tokenFile, '--tls-key', s.tokenFile);
    assert.equal(garbage.code, 3, garbage.stderr);
  });
});

describe('the Hub under a client that pipelines and never reads', () => {
  let s: Setup;
  let hub: RunningHub;

  before(async () => {
    s = adminSetup();
    hub = await startHub(s.dataDir);
  });
  after(async () => {
    await hub.stop();
  });

  test('HEAD answers carry no body', async () => {
    const { port } = new URL(hub.url);
    const text = await new Promise<string>((resolve) => {
      const sock = net.connect(Number(port), '127.0.0.1', () => sock.write('HEAD /v1/hub/health HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n'));
      let t = '';
      sock.on('data', (c: Buffer) => (t += c.toString('latin1')));
      sock.on('close', () => resolve(t));
    });
    assert.match(text, /^HTTP\/1\.1 405 /);
    assert.ok(text.endsWith('\r\n\r\n'), `nothing after the head: ${JSON.stringify(text)}`);
  });

  test('the Hub stays within 64 MiB of its start and serves another client in under 10 ms (median)', async (t) => {
    const pid = hub.child.pid!;
    const { port } = new URL(hub.url);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const health = () =>
      new Promise<number>((resolve, reject) => {
        const t0 = performance.now();
        http
          .get({ host: '127.0.0.1', port: Number(port), path: '/v1/hub/health', agent }, (res) => {
            res.resume();
            res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`health ${res.statusCode}`))));
          })
          .on('error', reject);
      });
    // Warm the path, then take the start figure.
    for (let i = 0; i < 50; i++) await health();
    const start = rssBytes(pid);

    // Unauthenticated operation requests, pipelined, never read: written by another process (as an
    // attacker's would be) as fast as the socket takes them, for a bounded time.
    const floodMs = 4000;
    const flooder = spawn(process.execPath, ['--input-type=module', '-e', FLOODER, String(port), String(floodMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let offered = '';
    flooder.stdout!.on('data', (c: Buffer) => (offered += c.toString()));
    const flooded = new Promise((r) => flooder.once('exit', r));
    const floodUntil = performance.now() + floodMs;
    const latencies: number[] = [];
    let peak = start;
    while (performance.now() < floodUntil) {
      latencies.push(await health());
      peak = Math.max(peak, rssBytes(pid));
      await sleep(20);
    }
    await flooded;
    peak = Math.max(peak, rssBytes(pid));
    agent.destroy();
    await sleep(300);
    const end = rssBytes(pid);

    latencies.sort((a, b) => a - b);
    const median = latencies[Math.floor(latencies.length / 2)]!;
    const mib = (b: number) => (b / (1 << 20)).toFixed(1);
    const figures = `start ${mib(start)} MiB, peak ${mib(peak)} MiB, end ${mib(end)} MiB, median ${median.toFixed(2)} ms over ${latencies.length}, ${offered.trim()} bytes offered`;
    t.diagnostic(figures);
    assert.ok(latencies.length >= 20, figures);
    assert.ok(peak - start < 64 * (1 << 20), figures);
    assert.ok(end - start < 64 * (1 << 20), figures);
    assert.ok(median < 10, figures);
  });
});
