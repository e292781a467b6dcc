// What the container engine says about itself: the engine half of the runtime identity
// (runtime-probe.ts adds the pinned image and digests the whole), read through dockerode.
//
// Where the facts come from depends on the engine, which its `/_ping` names:
// - podman (its `/_ping` sends `Libpod-Api-Version`): `GET /v{that version}/libpod/info`, plus the
//   `Api-Version` header of the same `/_ping`. podman builds its compatible `/version` from the same host
//   information, but gathers it twice there (package lookups included), so `/version` takes about twice
//   as long (0.37 s against 0.19 s on Debian's podman 4.3.1); the facts are the same
//   (test/integration/oci-probe.test.ts compares them on the real engine).
// - anything else (Docker): `GET /version`, and `/info`'s `DefaultRuntime` for the runtime's name.

import type Docker from 'dockerode';
import { pingEngine, runtimeUnavailable, type EnginePing } from './engine-endpoint.js';

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

/** The engine's facts in the identity, independent of any image. */
export interface EngineFacts {
  /** podman, docker, or unknown. */
  readonly name: string;
  readonly version: string;
  /** The Docker-compatible API version the engine serves. */
  readonly apiVersion: string;
  readonly platform: string;
  readonly os: string;
  readonly arch: string;
  /** The engine's default OCI runtime, its name and its version as the engine reports them. */
  readonly runtime: { readonly name: string; readonly version: string };
}

/** podman's own pattern for the version segment of its API paths. */
const LIBPOD_API_VERSION_RE = /^[0-9][0-9A-Za-z.-]*$/;

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function orUnknown(v: unknown): string {
  return typeof v === 'string' && v !== '' ? v : 'unknown';
}

/** The facts from podman's libpod info and its `/_ping`. The platform is composed as podman's `/version` composes it. */
export function factsFromLibpodInfo(ping: EnginePing, info: LibpodInfo): EngineFacts {
  const host = info.host ?? {};
  const os = str(host.os);
  const arch = str(host.arch);
  return {
    name: 'podman',
    version: str(info.version?.Version),
    apiVersion: ping.apiVersion ?? '',
    platform: `${os}/${arch}/${str(host.distribution?.distribution)}-${str(host.distribution?.version)}`,
    os,
    arch,
    runtime: { name: orUnknown(host.ociRuntime?.name), version: orUnknown(host.ociRuntime?.version) },
  };
}

interface VersionComponent {
  Name?: string;
  Version?: string;
  Details?: Record<string, unknown>;
}

function componentsOf(version: EngineVersion): VersionComponent[] {
  return Array.isArray(version.Components) ? (version.Components as VersionComponent[]) : [];
}

const PODMAN_RUNTIME_COMPONENT = /^OCI Runtime \((.+)\)$/;

/**
 * The default OCI runtime as podman's /version names it: podman lists exactly one "OCI Runtime (NAME)"
 * component, built from its default runtime. Anything else (Docker, a podman that lists no runtime) is
 * undefined, and /info's DefaultRuntime names it.
 */
export function podmanDefaultRuntime(version: EngineVersion): string | undefined {
  const components = componentsOf(version);
  if (!components.some((c) => c.Name === 'Podman Engine')) return undefined;
  const named = components.map((c) => (typeof c.Name === 'string' ? PODMAN_RUNTIME_COMPONENT.exec(c.Name)?.[1] : undefined)).filter((n): n is string => n !== undefined);
  return named.length === 1 ? named[0] : undefined;
}

/** /info's DefaultRuntime, as the identity records it. */
export function defaultRuntimeOf(info: { DefaultRuntime?: unknown }): string {
  return orUnknown(info.DefaultRuntime);
}

/** The facts from `/version` and the default runtime's name. */
export function factsFromVersion(version: EngineVersion, runtimeName: string): EngineFacts {
  const components = componentsOf(version);
  const name = components.some((c) => c.Name === 'Podman Engine') ? 'podman' : components.some((c) => c.Name === 'Engine') ? 'docker' : 'unknown';
  // podman names the component "OCI Runtime (runc)"; Docker lists "runc" (its default runtime binary).
  const component = components.find((c) => c.Name === `OCI Runtime (${runtimeName})`) ?? components.find((c) => c.Name === runtimeName);
  let runtimeVersion = orUnknown(component?.Version);
  const gitCommit = component?.Details?.GitCommit;
  if (name === 'docker' && typeof gitCommit === 'string' && gitCommit !== '') runtimeVersion = `${runtimeVersion} (${gitCommit})`;
  return {
    name,
    version: str(version.Version),
    apiVersion: str(version.ApiVersion),
    platform: str(version.Platform?.Name),
    os: str(version.Os),
    arch: str(version.Arch),
    runtime: { name: runtimeName, version: runtimeVersion },
  };
}

export function statusOf(e: unknown): number | undefined {
  if (typeof e === 'object' && e !== null && 'statusCode' in e) {
    const s = (e as { statusCode: unknown }).statusCode;
    if (typeof s === 'number') return s;
  }
  return undefined;
}

export function engineFailure(what: string, e: unknown): Error {
  const status = statusOf(e);
  const msg = e instanceof Error ? e.message.split('\n')[0] : String(e);
  return runtimeUnavailable(`container engine failed while ${what}${status ? ` (HTTP ${status})` : ''}: ${msg}`, 'ENGINE_ERROR');
}

/**
 * podman's own host information, under the libpod API version its `/_ping` named. dockerode types only
 * the Docker API, so this one call goes through its dial, as its own methods do.
 */
export function libpodInfo(docker: Docker, libpodApiVersion: string): Promise<LibpodInfo> {
  return new Promise((resolve, reject) => {
    docker.modem.dial(
      { path: `/v${encodeURIComponent(libpodApiVersion)}/libpod/info`, method: 'GET', statusCodes: { 200: true, 500: 'server error' } },
      (err, data) => {
        if (err) return reject(err);
        if (typeof data !== 'object' || data === null || Buffer.isBuffer(data)) return reject(new Error('the engine answered its libpod info with no JSON object'));
        resolve(data as LibpodInfo);
      },
    );
  });
}

/**
 * Reads the engine's facts. `ping` is the answer of a `/_ping` already asked of the same endpoint
 * (connectEngine asks it); without it the endpoint is pinged here. An endpoint that does not answer
 * its ping, or whose reads fail, is RUNTIME_UNAVAILABLE.
 */
export async function readEngineFacts(docker: Docker, ping?: EnginePing): Promise<EngineFacts> {
  ping ??= await pingEngine(docker);
  if (!ping) throw runtimeUnavailable('the container engine did not answer its ping', 'ENGINE_ERROR');
  try {
    const libpod = ping.libpodApiVersion;
    if (libpod !== undefined) {
      if (!LIBPOD_API_VERSION_RE.test(libpod)) throw new Error(`the engine named its libpod API version ${JSON.stringify(libpod.slice(0, 40))}`);
      return factsFromLibpodInfo(ping, await libpodInfo(docker, libpod));
    }
    const version = (await docker.version()) as EngineVersion;
    return factsFromVersion(version, podmanDefaultRuntime(version) ?? defaultRuntimeOf((await docker.info()) as { DefaultRuntime?: unknown }));
  } catch (e) {
    throw engineFailure('reading the engine identity', e);
  }
}
