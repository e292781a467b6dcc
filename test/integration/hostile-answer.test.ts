// A hostile Hub's answer never reaches the terminal raw: an error message that quotes it (an unknown
// key, say) has its control characters escaped, in the text line and in the --json error document.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { AGENTSCM_BIN, agentscm, json } from '../support/cli.js';
import { adminSetup, callArgs, startHub, type RunningHub, type Setup } from '../support/hub.js';

let s: Setup;
let hub: RunningHub;
before(async () => {
  s = adminSetup();
  hub = await startHub(s.dataDir);
});
after(async () => {
  await hub.stop();
});

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [AGENTSCM_BIN, ...args], { encoding: 'utf8' }, (e, stdout, stderr) => resolve({ code: e ? Number(e.code) : 0, stdout, stderr }));
  });
}

test('an unknown key with terminal escapes in a Hub answer is quoted escaped', async () => {
  const real = agentscm(callArgs(s, hub.url, 'capabilities'));
  assert.equal(real.code, 0, real.stderr);
  const evilKey = '\u001b]0;owned\u0007\u001b[31mred';
  const body = JSON.stringify({ ...json(real), [evilKey]: 1 });
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    for (const args of [callArgs(s, url, 'capabilities').filter((a) => a !== '--json'), callArgs(s, url, 'capabilities')]) {
      const r = await run(args);
      assert.equal(r.code, 6, r.stderr);
      for (const out of [r.stderr, r.stdout]) assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(out), JSON.stringify(out));
      assert.match(r.stderr, /\\x1b/, 'the key is quoted, escaped');
    }
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});
