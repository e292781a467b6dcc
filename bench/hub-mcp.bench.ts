// Workspace MCP throughput: `qualification` tool calls from 8 concurrent official MCP clients (the
// 2026-07-28 revision, one stateless POST per call) against a real `hub serve`, beside the HTTP
// facade's `qualification` rate from 8 keep-alive clients in the same run.
// Target: MCP requests/s at least 0.5x the HTTP facade's.
//
// Reported beside, with no target: the same MCP clients against a stand-in endpoint that does no MCP
// work (a replay server: it answers each qualification call with the Hub's own answer to the first one,
// its id put in; anything else goes to the Hub), the most any server could give these clients here.

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { subjectToJson } from '../src/core/authority/plan.js';
import { checkpoint } from '../src/core/native/checkpoint.js';
import type { BenchResult } from './stats.js';
import { exampleAuthority } from '../scripts/example-authority.js';
import { mcpClient, mcpUrl } from '../test/support/mcp.js';
import { forwardDiagnostics, hubNodeArgs } from './hub-log.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLIENTS = 8;
const TARGET_RATIO = 0.5;
const TURNS = 5;

function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return undefined;
  }
}

function post(agent: http.Agent, url: URL, pathname: string, token: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, path: pathname, method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `one` from CLIENTS concurrent loops for `seconds`: each call's latency (ms) and the elapsed seconds. */
async function drive(seconds: number, one: (client: number) => Promise<void>): Promise<{ lat: number[]; elapsed: number }> {
  const lat: number[] = [];
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, i) => {
      while (performance.now() < end) {
        const s = performance.now();
        await one(i);
        lat.push(performance.now() - s);
      }
    }),
  );
  return { lat, elapsed: (performance.now() - t0) / 1000 };
}

/** The p-th percentile of sorted latencies. */
const pct = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/**
 * The replay server (a process of its own, as the Hub is): forwards each request to the Hub until it has
 * the Hub's answer to one tools/call of qualification, then answers every such call with those bytes, the
 * call's JSON-RPC id put in. Prints its URL.
 */
const REPLAY_SOURCE = `
const http = require('node:http');
const hub = new URL(process.argv[1]);
let kept;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const msg = JSON.parse(body.toString('utf8'));
    const call = msg.method === 'tools/call' && msg.params && msg.params.name === 'qualification';
    if (call && kept) {
      const answer = JSON.parse(kept.body);
      answer.id = msg.id;
      res.writeHead(200, kept.headers);
      res.end(JSON.stringify(answer));
      return;
    }
    const headers = { ...req.headers, host: hub.host };
    const out = http.request({ host: hub.hostname, port: hub.port, path: req.url, method: req.method, headers }, (up) => {
      const got = [];
      up.on('data', (c) => got.push(c));
      up.on('end', () => {
        const text = Buffer.concat(got).toString('utf8');
        const keep = {};
        for (const [k, v] of Object.entries(up.headers)) if (!['content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding'].includes(k)) keep[k] = v;
        if (call && up.statusCode === 200) kept = { headers: keep, body: text };
        res.writeHead(up.statusCode, keep);
        res.end(text);
      });
    });
    out.end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write('http://127.0.0.1:' + server.address().port + '\\n'));
`;

export async function run(options: { seconds?: number } = {}): Promise<BenchResult> {
  const seconds = options.seconds ?? 5;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-bench-mcp-'));
  const dataDir = path.join(root, 'data');
  const { token } = exampleAuthority(dataDir, { owner: 'alice', agent: 'bench' });
  const ws = path.join(root, 'ws');
  fs.cpSync(path.join(ROOT, 'examples', 'workspace'), ws, { recursive: true });
  const cp = checkpoint(dataDir, { repository: 'acme/demo', profile: 'default', change_id: 'c1', workspace: ws });
  const subject = subjectToJson(cp.subject);
  // HUB_NODE_ARGS (e.g. --cpu-prof) profiles the Hub process.
  const nodeArgs = hubNodeArgs();
  const child = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'bin', 'agentscm.js'), 'hub', 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  forwardDiagnostics(child);
  const url = new URL(await new Promise<string>((resolve) => child.stdout.once('data', (c: Buffer) => resolve(c.toString().split('\n')[0]!))));
  const pathname = '/v1/hub/workspace/repositories/acme%2Fdemo/profiles/default/agent-tasks';
  const body = JSON.stringify({ operation: 'qualification', subject });
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => mcpClient(mcpUrl(url.href, 'acme/demo', 'default'), token)));
  const replay = spawn(process.execPath, ['-e', REPLAY_SOURCE, url.href], { stdio: ['ignore', 'pipe', 'inherit'] });
  const replayUrl = await new Promise<string>((resolve) => replay.stdout.once('data', (c: Buffer) => resolve(c.toString().split('\n')[0]!)));
  const replayClients = await Promise.all(Array.from({ length: CLIENTS }, () => mcpClient(mcpUrl(replayUrl, 'acme/demo', 'default'), token)));
  const lines: string[] = [];
  try {
    const httpCall = async () => {
      const status = await post(agent, url, pathname, token, body);
      if (status !== 200) throw new Error(`HTTP ${status}`);
    };
    const mcpCall = async (i: number) => {
      const r = await clients[i]!.callTool({ name: 'qualification', arguments: { subject } });
      if (r.isError) throw new Error(`MCP tool error: ${JSON.stringify(r.structuredContent)}`);
    };
    const replayCall = async (i: number) => {
      const r = await replayClients[i]!.callTool({ name: 'qualification', arguments: { subject } });
      if (r.isError) throw new Error(`MCP tool error: ${JSON.stringify(r.structuredContent)}`);
    };
    const rates: Record<string, number> = {};
    const LABELS = { http: 'HTTP qualification', mcp: 'MCP qualification', replay: 'MCP, replay server' } as const;
    const sides = [['http', httpCall, child], ['mcp', mcpCall, child], ['replay', replayCall, replay]] as const;
    // Every side warms up first (the MCP sides share the client's code), then they take turns of
    // seconds / TURNS each, so that neither a change of the host's load nor the warm-up falls on one.
    for (const [, one] of sides) await drive(1, one);
    const totals = new Map(sides.map(([name]) => [name, { lat: [] as number[], elapsed: 0, server: 0, own: 0 }]));
    for (let t = 0; t < TURNS; t++) {
      for (const [name, one, server] of sides) {
        const cpu0 = cpuSeconds(server.pid!);
        const own0 = process.cpuUsage();
        const r = await drive(seconds / TURNS, one);
        const own = process.cpuUsage(own0);
        const cpu1 = cpuSeconds(server.pid!);
        const sum = totals.get(name)!;
        sum.lat.push(...r.lat);
        sum.elapsed += r.elapsed;
        sum.server += cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : NaN;
        sum.own += (own.user + own.system) / 1e6;
      }
    }
    for (const [name] of sides) {
      const { lat, elapsed, server, own } = totals.get(name)!;
      lat.sort((a, b) => a - b);
      const n = lat.length;
      rates[name] = n / elapsed;
      const serverCpu = Number.isFinite(server) && n > 0 ? `  ${name === 'replay' ? 'replay server' : 'Hub'} CPU ${((server / n) * 1e6).toFixed(0)} us/request` : '';
      // The clients run in this process and share the cores with the Hub: their cost is part of the rate.
      const cpu = `${serverCpu}  clients' CPU ${((own / Math.max(1, n)) * 1e6).toFixed(0)} us/request`;
      lines.push(`${LABELS[name].padEnd(19)} ${rates[name]!.toFixed(0).padStart(6)} req/s  p50 ${pct(lat, 50).toFixed(2)} ms  p99 ${pct(lat, 99).toFixed(2)} ms  (n=${n}, ${CLIENTS} clients)${cpu}`);
    }
    const ratio = rates.mcp! / rates.http!;
    const ok = ratio >= TARGET_RATIO;
    lines.push(`MCP / HTTP          ${ratio.toFixed(2)}x (target >= ${TARGET_RATIO}x: ${ok ? 'met' : 'MISSED'})`);
    lines.push(`reported, no target: MCP clients against the replay server (no MCP work on the server) / HTTP  ${(rates.replay! / rates.http!).toFixed(2)}x`);
    return { name: 'hub-mcp', lines, ok };
  } finally {
    for (const c of [...clients, ...replayClients]) await c.close().catch(() => {});
    replay.kill('SIGTERM');
    agent.destroy();
    child.kill('SIGTERM');
    fs.rmSync(root, { recursive: true, force: true });
  }
}
