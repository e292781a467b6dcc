// The runtime identity: what a collector profile pins about the concrete OCI backend, observed through
// the Docker Engine API. Its digest is what the profile stores and what every transferred record must
// carry; a different engine, API, OCI runtime or image gives a different digest.
//
// Only stable facts are in it. The kernel version, the host name, the engine's uptime and the list of
// merely configured runtimes are left out: they change without the backend changing, and a digest that
// moves on every reboot would make profiles useless.

import type Docker from 'dockerode';
import { canonicalJsonBytes, type JsonValue } from '../core/canonical/json.js';
import { domainDigest, DOMAINS } from '../core/crypto/digest.js';
import { badInput } from '../core/errors.js';
import { runtimeUnavailable } from './engine.js';

export const RUNTIME_IDENTITY_VERSION = 1;

/** A pinned image: the full content ID. Tags and short IDs are refused because they can move. */
export const IMAGE_ID_RE = /^sha256:[0-9a-f]{64}$/;

/** The runtime identity, in declared field order (the canonical bytes follow this order). */
export interface RuntimeIdentity {
  version: number;
  engine: { name: string; version: string; api_version: string; min_api_version: string; platform: string };
  os: string;
  arch: string;
  oci_runtime: { name: string; version: string };
  image_id: string;
}

export interface RuntimeProbe {
  identity: RuntimeIdentity;
  /** The canonical JSON bytes the digest is computed over. */
  canonical: Buffer;
  /** domainDigest(DOMAINS.runtimeIdentity, canonical): 64 lowercase hex. */
  digest: string;
}

export function assertPinnedImageId(image: string): void {
  if (!IMAGE_ID_RE.test(image)) {
    throw badInput(`image ${JSON.stringify(image)} is not a pinned image ID: give the full sha256:<64 hex> ID of an image present in the engine`, 'IMAGE_NOT_PINNED');
  }
}

/**
 * Inspects an image strictly by its full ID. Never pulls: a missing image is RUNTIME_UNAVAILABLE, and an
 * engine that answers with a different ID (a prefix match, say) is refused.
 */
export async function inspectPinnedImage(docker: Docker, imageId: string): Promise<Docker.ImageInspectInfo> {
  assertPinnedImageId(imageId);
  let info: Docker.ImageInspectInfo;
  try {
    info = await docker.getImage(imageId).inspect();
  } catch (e) {
    if (statusOf(e) === 404) throw runtimeUnavailable(`image ${imageId} is not present in the container engine (it is never pulled)`, 'IMAGE_MISSING', { image_id: imageId });
    throw engineFailure('inspecting the image', e);
  }
  if (info.Id !== imageId) {
    throw runtimeUnavailable(`the engine answered image ${imageId} with ${String(info.Id)}`, 'IMAGE_MISMATCH', { image_id: imageId });
  }
  return info;
}

interface VersionComponent {
  Name?: string;
  Version?: string;
  Details?: Record<string, unknown>;
}

/** Observes the engine and the pinned image and builds the identity and its digest. */
export async function probeRuntime(docker: Docker, imageId: string): Promise<RuntimeProbe> {
  assertPinnedImageId(imageId);
  let version: Docker.DockerVersion & { Components?: VersionComponent[]; Platform?: { Name?: string }; MinAPIVersion?: string };
  let info: { DefaultRuntime?: unknown };
  try {
    version = (await docker.version()) as typeof version;
    info = (await docker.info()) as typeof info;
  } catch (e) {
    throw engineFailure('reading the engine version', e);
  }
  await inspectPinnedImage(docker, imageId);

  const components = Array.isArray(version.Components) ? version.Components : [];
  const podman = components.find((c) => c.Name === 'Podman Engine');
  const engineName = podman ? 'podman' : components.some((c) => c.Name === 'Engine') ? 'docker' : 'unknown';
  const runtimeName = typeof info.DefaultRuntime === 'string' && info.DefaultRuntime !== '' ? info.DefaultRuntime : 'unknown';
  // podman names the component "OCI Runtime (runc)"; Docker lists "runc" (its default runtime binary).
  const runtimeComponent =
    components.find((c) => c.Name === `OCI Runtime (${runtimeName})`) ?? components.find((c) => c.Name === runtimeName);
  let runtimeVersion = runtimeComponent?.Version ?? 'unknown';
  const gitCommit = runtimeComponent?.Details?.GitCommit;
  if (engineName === 'docker' && typeof gitCommit === 'string' && gitCommit !== '') runtimeVersion = `${runtimeVersion} (${gitCommit})`;

  const identity: RuntimeIdentity = {
    version: RUNTIME_IDENTITY_VERSION,
    engine: {
      name: engineName,
      version: str(version.Version),
      api_version: str(version.ApiVersion),
      min_api_version: str(version.MinAPIVersion),
      platform: str(version.Platform?.Name),
    },
    os: str(version.Os),
    arch: str(version.Arch),
    oci_runtime: { name: runtimeName, version: runtimeVersion },
    image_id: imageId,
  };
  const canonical = runtimeIdentityBytes(identity);
  return { identity, canonical, digest: domainDigest(DOMAINS.runtimeIdentity, canonical) };
}

/** Canonical bytes of an identity, rebuilt field by field so the order never depends on the caller. */
export function runtimeIdentityBytes(id: RuntimeIdentity): Buffer {
  const value: JsonValue = {
    version: id.version,
    engine: {
      name: id.engine.name,
      version: id.engine.version,
      api_version: id.engine.api_version,
      min_api_version: id.engine.min_api_version,
      platform: id.engine.platform,
    },
    os: id.os,
    arch: id.arch,
    oci_runtime: { name: id.oci_runtime.name, version: id.oci_runtime.version },
    image_id: id.image_id,
  };
  return canonicalJsonBytes(value);
}

export function runtimeIdentityDigest(id: RuntimeIdentity): string {
  return domainDigest(DOMAINS.runtimeIdentity, runtimeIdentityBytes(id));
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
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
