// Hub mutation throughput: full claim -> heartbeat -> result cycles against a real `hub serve` process
// over loopback HTTP from 8 concurrent keep-alive clients, each cycle on a fresh task (one Change per
// task, recorded up front). Reports cycles/s, p50/p99 latency of a whole cycle and of each request, and
// the Hub process's peak RSS (VmHWM).
// Target: at least 600 full cycles/s, p99 of a request under 50 ms.

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkpoint } from '../src/core/native/checkpoint.js';
import type { BenchResult } from './stats.js';
import type { JsonValue } from '../src/core/canonical/json.js';
import { claimBody, manyTasks, mutationBody, opPath, resultBody } from '../test/support/hub-http.js';
import { exampleAuthority } from '../scripts/example-authority.js';
import { forwardDiagnostics, hubNodeArgs } from './hub-log.js';


const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLIENTS = 8;
const TARGET_CPS = 600;
const TARGET_P99_MS = 50;

const REQUIREMENT = {
  version: 1,
  workflow: 'bench-cycles',
  steps: [{ id: 'say', skill: 'say', action_class: 'agent_assertion', required: true, depends_on: [], summary: 'say', criteria: [{ id: 'ok', text: 'ok', required: true, controller_only: false }], references: [] }],
};

/** CPU seconds (user + system) the process has used, from /proc/PID/stat. */
function cpuSeconds(pid: number): number | undefined {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return undefined;
  }
}

/**
 * One keep-alive HTTP/1.1 connection with the least client machinery: the clients share the two cores
 * with the Hub, and node:http's client costs about as much CPU per request as a third of the Hub's
 * work. Requests are real HTTP on a real socket; answers are framed by their content-length (the Hub
 * never sends chunked bodies) and parsed as JSON.
 */
class Connection {
  private buf: Buffer = Buffer.alloc(0);
  private waiting: { resolve: (a: { status: number; body: Record<string, any> }) => void; reject: (e: Error) => void } | undefined; // eslint-disable-line @typescript-eslint/no-explicit-any
  private constructor(
    private readonly sock: net.Socket,
    private readonly head: string,
  ) {
    sock.on('data', (c: Buffer) => this.onData(c));
    sock.on('error', (e) => this.waiting?.reject(e));
    sock.on('close', () => this.waiting?.reject(new Error('connection closed')));
  }

  static open(url: string, pathname: string, token: string): Promise<Connection> {
    const u = new URL(url);
    const head = `POST ${pathname} HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: `;
    return new Promise((resolve, reject) => {
      const sock = net.connect(Number(u.port), u.hostname, () => resolve(new Connection(sock, head)));
      sock.setNoDelay(true);
      sock.once('error', reject);
    });
  }

  post(body: JsonValue): Promise<{ status: number; body: Record<string, any> }> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const payload = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.sock.write(`${this.head}${Buffer.byteLength(payload)}\r\n\r\n${payload}`);
    });
  }

  private onData(c: Buffer): void {
    this.buf = this.buf.length === 0 ? c : Buffer.concat([this.buf, c]);
    const end = this.buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const headText = this.buf.toString('latin1', 0, end);
    const m = /\r\ncontent-length: *([0-9]+)/i.exec(headText);
    const w = this.waiting;
    if (!m || !headText.startsWith('HTTP/1.1 ')) {
      w?.reject(new Error('answer without content-length'));
      return;
    }
    const total = end + 4 + Number(m[1]);
    if (this.buf.length < total) return;
    const status = Number(headText.slice(9, 12));
    const text = this.buf.toString('utf8', end + 4, total);
    this.buf = this.buf.subarray(total);
    this.waiting = undefined;
    try {
      w?.resolve({ status, body: JSON.parse(text) });
    } catch (e) {
      w?.reject(e as Error);
    }
  }

  close(): void {
    this.sock.destroy();
  }
}

const pct = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

function peakRssMiB(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+([0-9]+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export async function run(options: { cycles?: number } = {}): Promise<BenchResult> {
  const cycles = options.cycles ?? 4000;
  const warm = 400;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-bench-cycles-'));
  const dataDir = path.join(root, 'data');
  const { token } = exampleAuthority(dataDir, { owner: 'alice', agent: 'bench' }, Buffer.from(JSON.stringify(REQUIREMENT)));
  const ws = path.join(root, 'ws');
  fs.cpSync(path.join(ROOT, 'examples', 'workspace'), ws, { recursive: true });
  const cp = checkpoint(dataDir, { repository: 'acme/demo', profile: 'default', change_id: 'c0', workspace: ws });
  const tasks = manyTasks(dataDir, 'acme/demo', 'default', cp.subject.revision, cycles + warm);

  // HUB_NODE_ARGS (e.g. --cpu-prof) profiles the Hub process.
  const nodeArgs = hubNodeArgs();
  const child = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'bin', 'agentscm.js'), 'hub', 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  forwardDiagnostics(child);
  const url = await new Promise<string>((resolve) => child.stdout.once('data', (c: Buffer) => resolve(c.toString().split('\n')[0]!)));
  const p = opPath('acme/demo', 'default');
  const conns = await Promise.all(Array.from({ length: CLIENTS }, () => Connection.open(url, p, token)));
  const cycleLat: number[] = [];
  const reqLat: number[] = [];
  const timed = async (conn: Connection, body: JsonValue) => {
    const s = performance.now();
    const r = await conn.post(body);
    reqLat.push(performance.now() - s);
    if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const drive = async (from: number, to: number) => {
    let next = from;
    await Promise.all(
      conns.map(async (conn) => {
        while (next < to) {
          const i = next++;
          const t = tasks[i]!;
          const s = performance.now();
          const c = await timed(conn, claimBody(t, `c-${i}`));
          if (c.replayed !== false || c.attempt.task_id !== t.task_id || c.attempt.state !== 'leased' || c.attempt.fence !== 1) throw new Error(`unexpected claim answer for task ${i}`);
          const h = await timed(conn, mutationBody('heartbeat', c.attempt, `h-${i}`));
          if (h.operation !== 'heartbeat' || h.attempt.attempt_id !== c.attempt.attempt_id || h.attempt.state !== 'leased') throw new Error(`unexpected heartbeat answer for task ${i}`);
          const r = await timed(conn, resultBody(t, c.attempt, `r-${i}`, 'alice', 'bench'));
          if (r.operation !== 'result' || r.attempt.attempt_id !== c.attempt.attempt_id || r.attempt.state !== 'finished') throw new Error(`unexpected result answer for task ${i}`);
          cycleLat.push(performance.now() - s);
        }
      }),
    );
  };
  const lines: string[] = [];
  let ok = false;
  try {
    await drive(0, warm);
    cycleLat.length = 0;
    reqLat.length = 0;
    const cpu0 = cpuSeconds(child.pid!);
    const own0 = process.cpuUsage();
    const t0 = performance.now();
    await drive(warm, warm + cycles);
    const cpu1 = cpuSeconds(child.pid!);
    const own = process.cpuUsage(own0);
    const elapsed = (performance.now() - t0) / 1000;
    const cps = cycles / elapsed;
    cycleLat.sort((x, y) => x - y);
    reqLat.sort((x, y) => x - y);
    const rss = peakRssMiB(child.pid!);
    ok = cps >= TARGET_CPS && pct(reqLat, 99) < TARGET_P99_MS;
    lines.push(
      `cycles        ${cps.toFixed(0).padStart(6)} cycles/s  (n=${cycles}, ${CLIENTS} clients; target >= ${TARGET_CPS}/s, request p99 < ${TARGET_P99_MS} ms: ${ok ? 'met' : 'MISSED'})`,
      `cycle latency p50 ${pct(cycleLat, 50).toFixed(2)} ms  p99 ${pct(cycleLat, 99).toFixed(2)} ms`,
      `request       p50 ${pct(reqLat, 50).toFixed(2)} ms  p99 ${pct(reqLat, 99).toFixed(2)} ms  (${reqLat.length} requests)`,
      `hub peak RSS  ${rss === undefined ? 'unavailable' : `${rss.toFixed(1)} MiB`}`,
      // On a shared machine wall-clock rates move with the load; the Hub's own CPU per cycle does not.
      cpu0 === undefined || cpu1 === undefined
        ? 'hub CPU       unavailable'
        : `hub CPU       ${(((cpu1 - cpu0) * 1000) / cycles).toFixed(2)} ms per cycle (${(cycles / (cpu1 - cpu0)).toFixed(0)} cycles per CPU-second)`,
      // The clients share the machine's cores with the Hub: their cost is part of the picture.
      `client CPU    ${((own.user + own.system) / 1000 / cycles).toFixed(2)} ms per cycle (8 clients, this process)`,
    );
  } finally {
    for (const c of conns) c.close();
    child.kill('SIGTERM');
    fs.rmSync(root, { recursive: true, force: true });
  }
  return { name: 'hub-cycles', lines, ok };
}
