// Where the Docker Engine API endpoint is and whether it answers. dockerode is only a type here: the
// client is made in engine.ts, so that collect's body (which takes its client from the entry) and the
// error helpers it shares load no package.
//
// Where the endpoint comes from, first match wins: `--docker-host URL`, then DOCKER_HOST, then the
// well-known sockets (Docker's, then podman's rootful and rootless ones).

import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { AgentscmError, badInput } from '../core/errors.js';

export type EngineSource = 'flag' | 'env' | 'default' | 'started';

export interface EngineEndpoint {
  /** The endpoint as a URL: unix:///path or tcp://host:port. */
  readonly url: string;
  readonly source: EngineSource;
}

/** Where the engine listens: a unix socket path, or a TCP host and port (plain HTTP). */
export type EngineAddress = { readonly socketPath: string } | { readonly host: string; readonly port: number };

/** What `/_ping` says besides OK: the API versions in its headers (podman's names its libpod API too). */
export interface EnginePing {
  /** `Api-Version`: the Docker-compatible API version the engine serves. */
  readonly apiVersion: string | undefined;
  /** `Libpod-Api-Version`: sent by podman only, with its own (libpod) API version. */
  readonly libpodApiVersion: string | undefined;
}

export const NO_ENGINE_HINT =
  'no container engine answered: install podman (apt-get install podman runc) and run `podman system service`, or Docker, or set DOCKER_HOST';

export function runtimeUnavailable(message: string, code = 'RUNTIME_UNAVAILABLE', detail?: Record<string, unknown>): AgentscmError {
  return new AgentscmError('RUNTIME_UNAVAILABLE', code, message, detail);
}

/** How long one `/_ping` may take before the endpoint counts as not answering. */
const PING_TIMEOUT_MS = 3_000;

/** A ping timer that fires this much after it was due counts as time the process did not run. */
const LATE_TIMER_MS = 1_000;

/** Bound on the `/_ping` body (`OK`). */
const MAX_PING_BODY = 4096;

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
 * `GET /_ping` with its headers. dockerode's ping() answers the body only, and the API versions are in
 * the headers, so this is the same request through dockerode's own dial, answered as a stream.
 */
function pingWithHeaders(docker: Docker, signal: AbortSignal): Promise<EnginePing & { readonly body: string }> {
  return new Promise((resolve, reject) => {
    docker.modem.dial({ path: '/_ping', method: 'GET', isStream: true, abortSignal: signal, statusCodes: { 200: true, 500: 'server error' } }, (err: unknown, res: unknown) => {
      if (err) return reject(err);
      const msg = res as http.IncomingMessage & Readable;
      const header = (name: string): string | undefined => {
        const v = msg.headers[name];
        return typeof v === 'string' && v !== '' ? v : undefined;
      };
      let body = '';
      msg.setEncoding('utf8');
      msg.on('data', (c: string) => {
        body += c;
        if (body.length > MAX_PING_BODY) msg.destroy(new Error('the engine answered /_ping with a long body'));
      });
      msg.once('end', () => resolve({ body, apiVersion: header('api-version'), libpodApiVersion: header('libpod-api-version') }));
      msg.once('error', reject);
    });
  });
}

/**
 * The endpoint's `/_ping` answer when it answers OK within the timeout, else undefined. Never throws.
 * `signal` gives up earlier (with the same answer).
 */
export async function pingEngine(docker: Docker, timeoutMs = PING_TIMEOUT_MS, signal?: AbortSignal): Promise<EnginePing | undefined> {
  const limit = new AbortController();
  // The limit is on the engine's time, not on time this process did not run. A timer that fires late
  // (the process was stopped, SIGSTOP or a suspended shell job, or starved of CPU) is armed again for a
  // whole period: the request may not even have been written meanwhile. One that fires on time gives up
  // one event loop turn later, after that turn's I/O (timers run ahead of it), so that an answer that has
  // arrived still counts. Neither timer keeps the process alive by itself.
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    const due = performance.now() + timeoutMs;
    timer = setTimeout(() => {
      if (performance.now() - due > LATE_TIMER_MS) arm();
      else setImmediate(() => limit.abort()).unref();
    }, timeoutMs).unref();
  };
  arm();
  try {
    const answer = await pingWithHeaders(docker, signal ? AbortSignal.any([signal, limit.signal]) : limit.signal);
    return answer.body.trim() === 'OK' ? { apiVersion: answer.apiVersion, libpodApiVersion: answer.libpodApiVersion } : undefined;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
