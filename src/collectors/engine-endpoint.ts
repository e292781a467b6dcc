// Where the Docker Engine API endpoint is and whether it answers: the part of the engine connection that
// needs no dependency, so that agent-task collect's early engine reads (collect-early.ts, bundled for
// the launcher) use the same endpoint rules as everything else.
//
// Where the endpoint comes from, first match wins: `--docker-host URL`, then DOCKER_HOST, then the
// well-known sockets (Docker's, then podman's rootful and rootless ones).

import * as fs from 'node:fs';
import * as path from 'node:path';
import { AgentscmError, badInput } from '../core/errors.js';
import type { EngineAddress, EngineApi, EnginePing } from './engine-api.js';

export type EngineSource = 'flag' | 'env' | 'default' | 'started';

export interface EngineEndpoint {
  /** The endpoint as a URL: unix:///path or tcp://host:port. */
  readonly url: string;
  readonly source: EngineSource;
}

export const NO_ENGINE_HINT =
  'no container engine answered: install podman (apt-get install podman runc) and run `podman system service`, or Docker, or set DOCKER_HOST';

export function runtimeUnavailable(message: string, code = 'RUNTIME_UNAVAILABLE', detail?: Record<string, unknown>): AgentscmError {
  return new AgentscmError('RUNTIME_UNAVAILABLE', code, message, detail);
}

/** How long one `/_ping` may take before the endpoint counts as not answering. */
const PING_TIMEOUT_MS = 3_000;

/** Parses unix:///abs/path or tcp://host:port into an engine address. Anything else is bad input (exit 3). */
export function engineAddressFor(url: string): EngineAddress {
  if (url.startsWith('unix://')) {
    const p = url.slice('unix://'.length);
    if (!path.isAbsolute(p)) throw badInput(`docker host ${JSON.stringify(url)}: a unix socket URL needs an absolute path (unix:///path)`, 'BAD_DOCKER_HOST');
    return { socketPath: p };
  }
  if (url.startsWith('tcp://')) {
    let u: URL;
    try {
      u = new URL(`http://${url.slice('tcp://'.length)}`);
    } catch {
      throw badInput(`docker host ${JSON.stringify(url)} is not a valid tcp://HOST:PORT URL`, 'BAD_DOCKER_HOST');
    }
    if (u.port === '' || (u.pathname !== '/' && u.pathname !== '')) throw badInput(`docker host ${JSON.stringify(url)}: expected tcp://HOST:PORT`, 'BAD_DOCKER_HOST');
    return { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) };
  }
  throw badInput(`docker host ${JSON.stringify(url)}: only unix:///path and tcp://host:port are supported`, 'BAD_DOCKER_HOST');
}

/** The well-known sockets, in the order they are tried when neither a flag nor DOCKER_HOST names one. */
export function defaultSocketPaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const paths = ['/var/run/docker.sock', '/run/podman/podman.sock'];
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  if (env.XDG_RUNTIME_DIR) paths.push(path.join(env.XDG_RUNTIME_DIR, 'podman', 'podman.sock'));
  if (uid !== undefined && uid !== 0) paths.push(`/run/user/${uid}/podman/podman.sock`);
  return [...new Set(paths)];
}

/** The endpoints to try, in order. A flag or DOCKER_HOST yields exactly one candidate. */
export function engineCandidates(dockerHost: string | undefined, env: NodeJS.ProcessEnv = process.env): EngineEndpoint[] {
  if (dockerHost !== undefined) return [{ url: dockerHost, source: 'flag' }];
  const fromEnv = env.DOCKER_HOST;
  if (fromEnv !== undefined && fromEnv !== '') return [{ url: fromEnv, source: 'env' }];
  return defaultSocketPaths(env)
    .filter((p) => fs.existsSync(p))
    .map((p) => ({ url: `unix://${p}`, source: 'default' as const }));
}

/**
 * The endpoint's `/_ping` answer when it answers OK within the timeout, else undefined. Never throws.
 */
export async function pingEngine(api: EngineApi, timeoutMs = PING_TIMEOUT_MS): Promise<EnginePing | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const answer = await Promise.race([
      api.ping(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('ping timed out')), timeoutMs);
        // The request keeps the process alive while it is pending; the timer alone must not (a ping
        // made in the background, collect-early.ts).
        timer.unref();
      }),
    ]);
    return answer.body.trim() === 'OK' ? { apiVersion: answer.apiVersion, libpodApiVersion: answer.libpodApiVersion } : undefined;
  } catch {
    return undefined;
  } finally {
    if (timer) clearTimeout(timer);
  }
}

