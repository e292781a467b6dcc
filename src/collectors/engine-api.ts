// The Docker Engine API calls the collector makes, spoken directly over HTTP (node:http on the unix
// socket or TCP endpoint). `agent-task collect` pays for every module it loads on each run, and
// dockerode with its dependencies costs about 300 ms to load for a dozen plain requests; this client
// costs nothing to load. dockerode stays for the rest (image import for the test image, the tests'
// own independent view of the engine), loaded only where it is used.
//
// Every request opens its own connection (no keep-alive agent), so a short-lived CLI has no idle socket
// keeping it alive. An error answer becomes an EngineApiError carrying the HTTP status, which is what
// the callers branch on (404: absent; 304/409: already in that state).

import * as http from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';

/** Where the engine listens: a unix socket path, or a TCP host and port (plain HTTP). */
export type EngineAddress = { readonly socketPath: string } | { readonly host: string; readonly port: number };

export class EngineApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'EngineApiError';
  }
}

/** What `/_ping` says besides OK: the API versions in its headers (podman's names its libpod API too). */
export interface EnginePing {
  /** `Api-Version`: the Docker-compatible API version the engine serves. */
  readonly apiVersion: string | undefined;
  /** `Libpod-Api-Version`: sent by podman only, with its own (libpod) API version. */
  readonly libpodApiVersion: string | undefined;
}

/** The parts of podman's `GET /v{libpod API}/libpod/info` the runtime identity reads. */
export interface LibpodInfo {
  version?: { Version?: unknown };
  host?: {
    os?: unknown;
    arch?: unknown;
    distribution?: { distribution?: unknown; version?: unknown };
    ociRuntime?: { name?: unknown; version?: unknown };
  };
}

/** The parts of `GET /version` the runtime identity reads. */
export interface EngineVersion {
  Version?: unknown;
  ApiVersion?: unknown;
  Os?: unknown;
  Arch?: unknown;
  Platform?: { Name?: unknown };
  Components?: unknown;
}

export interface ContainerState {
  Status?: string;
  Running?: boolean;
  ExitCode?: number;
  OOMKilled?: boolean;
  StartedAt?: string;
  FinishedAt?: string;
}

/** Bound on a JSON answer: engine answers the collector reads are a few KiB. */
const MAX_JSON_ANSWER = 8 * 1024 * 1024;

export class EngineApi {
  /** Set while requests are made in the background: their sockets, not keeping the process alive. */
  private backgroundSockets: Set<Socket> | undefined;

  constructor(readonly address: EngineAddress) {}

  /**
   * Requests made from now on do not keep the process alive until foreground() is called: for reads
   * started speculatively, which a process that ends early (a usage error) must not wait for.
   */
  background(): this {
    this.backgroundSockets = new Set();
    return this;
  }

  /** The background requests keep the process alive again, as every request does from now on. */
  foreground(): void {
    const sockets = this.backgroundSockets;
    this.backgroundSockets = undefined;
    for (const s of sockets ?? []) s.ref();
  }

  /** One request; resolves with the response once its head arrived (the body is the caller's). */
  private send(method: string, pathAndQuery: string, body?: Buffer): Promise<http.IncomingMessage> {
    return new Promise((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = { host: 'docker' };
      if (body) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = body.length;
      }
      const req = http.request({ ...this.address, method, path: pathAndQuery, headers, agent: false }, resolve);
      const background = this.backgroundSockets;
      if (background) {
        req.once('socket', (socket: Socket) => {
          if (this.backgroundSockets !== background) return;
          socket.unref();
          background.add(socket);
        });
      }
      req.once('error', reject);
      req.end(body);
    });
  }

  private static readBody(res: http.IncomingMessage): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_JSON_ANSWER) {
          res.destroy();
          reject(new Error(`the engine answer is larger than ${MAX_JSON_ANSWER} bytes`));
          return;
        }
        chunks.push(c);
      });
      res.once('end', () => resolve(Buffer.concat(chunks)));
      res.once('error', reject);
    });
  }

  private static async failure(res: http.IncomingMessage): Promise<EngineApiError> {
    const status = res.statusCode ?? 0;
    let text = '';
    try {
      text = (await EngineApi.readBody(res)).toString('utf8');
    } catch {
      // the status alone still says what happened
    }
    let message = text.trim();
    try {
      const doc = JSON.parse(text) as { message?: unknown };
      if (typeof doc.message === 'string') message = doc.message;
    } catch {
      // not JSON: keep the text
    }
    return new EngineApiError(status, `(HTTP code ${status}) ${message.slice(0, 500)}`);
  }

  /** A request whose answer is JSON (or empty): 2xx parses, anything else throws EngineApiError. */
  private async json<T>(method: string, pathAndQuery: string, body?: unknown): Promise<T> {
    const res = await this.send(method, pathAndQuery, body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8'));
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) throw await EngineApi.failure(res);
    const bytes = await EngineApi.readBody(res);
    if (bytes.length === 0) return undefined as T;
    return JSON.parse(bytes.toString('utf8')) as T;
  }

  /** A request whose answer is a stream (attach, logs). */
  private async stream(method: string, pathAndQuery: string): Promise<Readable> {
    const res = await this.send(method, pathAndQuery);
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) throw await EngineApi.failure(res);
    return res;
  }

  /** `GET /_ping`: its body (`OK`) and the API versions its headers name. */
  async ping(): Promise<EnginePing & { readonly body: string }> {
    const res = await this.send('GET', '/_ping');
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) throw await EngineApi.failure(res);
    const header = (name: string): string | undefined => {
      const v = res.headers[name];
      return typeof v === 'string' && v !== '' ? v : undefined;
    };
    const body = (await EngineApi.readBody(res)).toString('utf8');
    return { body, apiVersion: header('api-version'), libpodApiVersion: header('libpod-api-version') };
  }

  version(): Promise<EngineVersion> {
    return this.json('GET', '/version');
  }

  info(): Promise<{ DefaultRuntime?: unknown }> {
    return this.json('GET', '/info');
  }

  /** podman's own host information, under the libpod API version its `/_ping` named. */
  libpodInfo(libpodApiVersion: string): Promise<LibpodInfo> {
    return this.json('GET', `/v${encodeURIComponent(libpodApiVersion)}/libpod/info`);
  }

  imageInspect(id: string): Promise<{ Id?: unknown }> {
    return this.json('GET', `/images/${encodeURIComponent(id)}/json`);
  }

  async containerCreate(config: Record<string, unknown>, name?: string): Promise<string> {
    const q = name !== undefined ? `?name=${encodeURIComponent(name)}` : '';
    const r = await this.json<{ Id?: unknown }>('POST', `/containers/create${q}`, config);
    if (typeof r?.Id !== 'string' || r.Id === '') throw new EngineApiError(500, 'the engine created a container without answering its id');
    return r.Id;
  }

  /** The multiplexed output of a created container, attached before it starts. */
  containerAttach(id: string): Promise<Readable> {
    return this.stream('POST', `/containers/${encodeURIComponent(id)}/attach?stream=1&stdout=1&stderr=1`);
  }

  async containerStart(id: string): Promise<void> {
    await this.json('POST', `/containers/${encodeURIComponent(id)}/start`);
  }

  containerWait(id: string): Promise<{ StatusCode?: number }> {
    return this.json('POST', `/containers/${encodeURIComponent(id)}/wait`);
  }

  async containerKill(id: string, signal: string): Promise<void> {
    await this.json('POST', `/containers/${encodeURIComponent(id)}/kill?signal=${encodeURIComponent(signal)}`);
  }

  containerInspect(id: string): Promise<{ Id?: string; State?: ContainerState }> {
    return this.json('GET', `/containers/${encodeURIComponent(id)}/json`);
  }

  async containerRemove(id: string, opts: { force: boolean; volumes: boolean }): Promise<void> {
    await this.json('DELETE', `/containers/${encodeURIComponent(id)}?force=${opts.force ? 1 : 0}&v=${opts.volumes ? 1 : 0}`);
  }

  /** The multiplexed output of a (finished) container, for completing a crashed collector's run. */
  containerLogs(id: string): Promise<Readable> {
    return this.stream('GET', `/containers/${encodeURIComponent(id)}/logs?stdout=1&stderr=1&follow=1`);
  }
}
