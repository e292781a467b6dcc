// Workspace MCP throughput: `qualification` tool calls from 8 concurrent official MCP clients (the
// 2026-07-28 revision, one stateless POST per call) against a real `hub serve`, beside the HTTP
// facade's `qualification` rate from 8 keep-alive clients in the same run.
// Target: MCP requests/s at least 0.5x the HTTP facade's.

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

/** Runs `one` from CLIENTS concurrent loops for `seconds`: calls, elapsed seconds and p50/p99. */
async function drive(seconds: number, one: (client: number) => Promise<void>): Promise<{ n: number; elapsed: number; p50: number; p99: number }> {
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
  lat.sort((a, b) => a - b);
  const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))]!;
  return { n: lat.length, elapsed: (performance.now() - t0) / 1000, p50: pct(50), p99: pct(99) };
}

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
    const rates: Record<string, number> = {};
    for (const [name, one] of [['http', httpCall], ['mcp', mcpCall]] as const) {
      await drive(1, one); // warm-up
      const cpu0 = cpuSeconds(child.pid!);
      const own0 = process.cpuUsage();
      const r = await drive(seconds, one);
      const own = process.cpuUsage(own0);
      const cpu1 = cpuSeconds(child.pid!);
      rates[name] = r.n / r.elapsed;
      const hubCpu = cpu0 !== undefined && cpu1 !== undefined && r.n > 0 ? `  Hub CPU ${(((cpu1 - cpu0) / r.n) * 1e6).toFixed(0)} us/request` : '';
      // The clients run in this process and share the cores with the Hub: their cost is part of the rate.
      const cpu = `${hubCpu}  clients' CPU ${((own.user + own.system) / Math.max(1, r.n)).toFixed(0)} us/request`;
      lines.push(`${(name === 'http' ? 'HTTP qualification' : 'MCP qualification').padEnd(19)} ${rates[name]!.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  (n=${r.n}, ${CLIENTS} clients)${cpu}`);
    }
    const ratio = rates.mcp! / rates.http!;
    const ok = ratio >= TARGET_RATIO;
    lines.push(`MCP / HTTP          ${ratio.toFixed(2)}x (target >= ${TARGET_RATIO}x: ${ok ? 'met' : 'MISSED'})`);
    return { name: 'hub-mcp', lines, ok };
  } finally {
    for (const c of clients) await c.close().catch(() => {});
    agent.destroy();
    child.kill('SIGTERM');
    fs.rmSync(root, { recursive: true, force: true });
  }
}
