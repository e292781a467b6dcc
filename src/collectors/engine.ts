// The connection to a Docker Engine API endpoint (Docker itself, or podman's `podman system service`),
// through dockerode.
//
// Where the endpoint comes from, first match wins: `--docker-host URL`, then DOCKER_HOST, then the
// well-known sockets (Docker's, then podman's rootful and rootless ones). An explicit URL is never
// silently replaced by another endpoint: if it does not answer, that is the error.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as http from 'node:http';
import Docker from 'dockerode';
import { engineAddressFor, engineCandidates, NO_ENGINE_HINT, pingEngine, runtimeUnavailable, type EngineAddress, type EngineEndpoint, type EnginePing } from './engine-endpoint.js';

export {
  defaultSocketPaths,
  engineAddressFor,
  engineCandidates,
  NO_ENGINE_HINT,
  pingEngine,
  runtimeUnavailable,
  type EngineAddress,
  type EngineEndpoint,
  type EnginePing,
  type EngineSource,
} from './engine-endpoint.js';

/**
 * A dockerode client for exactly this address. docker-modem fills options left out from the process's
 * DOCKER_HOST, DOCKER_CERT_PATH and DOCKER_CLIENT_TIMEOUT; they are all given here, so the endpoint
 * resolved by engineCandidates is the one used and nothing else of the environment changes how it is spoken to.
 * Every request opens its own connection (an agent without keep-alive): a short-lived CLI keeps no idle
 * socket, and never reuses one the engine has closed meanwhile.
 */
export function dockerFor(address: EngineAddress): Docker {
  const agent = new http.Agent({ keepAlive: false });
  const common = { protocol: 'http' as const, agent, ca: undefined, cert: undefined, key: undefined, timeout: undefined, pathPrefix: undefined, version: undefined };
  const opts = 'host' in address ? { ...common, host: address.host, port: address.port } : { ...common, socketPath: address.socketPath, host: undefined, port: undefined };
  let docker: Docker;
  try {
    docker = new Docker(opts as unknown as Docker.DockerOptions);
  } catch (e) {
    // docker-modem reads its defaults (DOCKER_CERT_PATH's files with a tcp DOCKER_HOST) before the
    // options given here replace them: a missing file there is reported, not thrown raw.
    throw runtimeUnavailable(`the engine client could not be set up: ${e instanceof Error ? e.message : String(e)}`, 'ENGINE_ERROR');
  }
  agents.set(docker, agent);
  return docker;
}

const agents = new WeakMap<Docker, http.Agent>();

/**
 * Ends the requests in flight on a client from dockerFor (they fail with a socket error): for reads a
 * command no longer needs, so that a command that failed first exits at once instead of waiting for
 * their answers. Later requests open new connections as usual.
 */
export function abandonRequests(docker: Docker): void {
  agents.get(docker)?.destroy();
}

export interface EngineConnection {
  readonly docker: Docker;
  readonly endpoint: EngineEndpoint;
  /** The endpoint's `/_ping` answer that made it the one connected to (its API versions). */
  readonly ping: EnginePing;
}

/**
 * Connects to the first answering endpoint. Throws RUNTIME_UNAVAILABLE (exit 12) when nothing answers;
 * the message names the endpoint that was tried so an operator can tell a wrong DOCKER_HOST from a
 * missing engine. `signal` gives up the search (as if nothing answered).
 */
export async function connectEngine(opts: { dockerHost?: string | undefined; env?: NodeJS.ProcessEnv; signal?: AbortSignal } = {}): Promise<EngineConnection> {
  const env = opts.env ?? process.env;
  const candidates = engineCandidates(opts.dockerHost, env);
  for (const endpoint of candidates) {
    const docker = dockerFor(engineAddressFor(endpoint.url));
    const ping = await pingEngine(docker, undefined, opts.signal);
    if (ping) return { docker, endpoint, ping };
  }
  if (candidates.length === 1 && candidates[0]!.source !== 'default') {
    const c = candidates[0]!;
    throw runtimeUnavailable(`the container engine at ${c.url} (${c.source === 'flag' ? '--docker-host' : 'DOCKER_HOST'}) did not answer`, 'ENGINE_UNREACHABLE', {
      docker_host: c.url,
    });
  }
  throw runtimeUnavailable(NO_ENGINE_HINT, 'ENGINE_UNREACHABLE');
}

// ---- podman system service -----------------------------------------------------------------------

/**
 * podman settings that make containers run on hosts like ours (no systemd as PID 1, a hard nofile limit
 * below podman's default of 1048576): without explicit ulimits runc fails with "error setting rlimits".
 * Written to a private file and handed to podman through CONTAINERS_CONF, so nothing under /etc changes.
 */
export const PODMAN_CONTAINERS_CONF = `[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
`;

export function podmanInstalled(env: NodeJS.ProcessEnv = process.env): boolean {
  const r = spawnSync('podman', ['--version'], { env, stdio: 'ignore' });
  return r.status === 0;
}

export interface StartedService extends EngineConnection {
  /** Whether this process started the service (and so must stop it). */
  readonly owned: boolean;
  /** Stops the service if this process started it; removes its private directory. Idempotent. */
  stop(): Promise<void>;
}

/**
 * An engine for `npm run demo` and the tests: an already answering endpoint (flag, DOCKER_HOST or a
 * well-known socket) if there is one; otherwise, when podman is installed, `podman system service` on a
 * private socket started here. With no engine at all: RUNTIME_UNAVAILABLE with one line saying what to
 * install.
 */
export async function startPodmanServiceIfNeeded(
  opts: { dockerHost?: string | undefined; env?: NodeJS.ProcessEnv; startTimeoutMs?: number } = {},
): Promise<StartedService> {
  const env = opts.env ?? process.env;
  const explicit = opts.dockerHost !== undefined || (env.DOCKER_HOST !== undefined && env.DOCKER_HOST !== '');
  try {
    const c = await connectEngine({ dockerHost: opts.dockerHost, env });
    return Object.assign(c, { owned: false, stop: async () => {} });
  } catch (e) {
    // A named endpoint that does not answer is the operator's choice: never substitute another one.
    if (explicit) throw e;
  }
  if (!podmanInstalled(env)) throw runtimeUnavailable(NO_ENGINE_HINT, 'NO_ENGINE');
  return startPodmanService({ env, timeoutMs: opts.startTimeoutMs ?? 30_000 });
}

/** Starts `podman system service --time=0` on a socket in a fresh private directory and waits for it. */
export async function startPodmanService(opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<StartedService> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentscm-podman-'));
  fs.chmodSync(dir, 0o700);
  const confPath = path.join(dir, 'containers.conf');
  fs.writeFileSync(confPath, PODMAN_CONTAINERS_CONF, { mode: 0o600 });
  const socket = path.join(dir, 'podman.sock');
  const url = `unix://${socket}`;
  const baseEnv = opts.env ?? process.env;
  // An operator's own CONTAINERS_CONF wins: it is their statement of what works on their host.
  const env = { ...baseEnv, CONTAINERS_CONF: baseEnv.CONTAINERS_CONF ?? confPath };
  // cwd '/': conmon inherits the service's working directory and fails to attach once it is removed.
  const child: ChildProcess = spawn('podman', ['system', 'service', '--time=0', url], { env, cwd: '/', stdio: ['ignore', 'ignore', 'pipe'], detached: false });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d: string) => {
    if (stderr.length < 4096) stderr += d;
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  // The service must not keep the caller's event loop alive (neither the process nor its stderr pipe),
  // nor outlive it.
  child.unref();
  (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
  const killChild = (): void => {
    if (!exited && child.pid !== undefined) {
      try {
        child.kill('SIGTERM');
      } catch {
        // already gone
      }
    }
  };
  const onExit = (): void => {
    killChild();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);

  const docker = dockerFor({ socketPath: socket });
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let ping: EnginePing | undefined;
  while (!exited && Date.now() < deadline) {
    if (fs.existsSync(socket) && (ping = await pingEngine(docker, 1_000))) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', onExit);
    if (!exited) {
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      killChild();
      await Promise.race([gone, new Promise((r) => setTimeout(r, 5_000))]);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  if (!ping) {
    await stop();
    const why = stderr.trim().split('\n').pop() ?? '';
    throw runtimeUnavailable(`podman system service did not answer on ${url}${why ? `: ${why}` : ''}`, 'ENGINE_START_FAILED');
  }
  return { docker, endpoint: { url, source: 'started' }, ping, owned: true, stop };
}
