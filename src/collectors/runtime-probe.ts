// The runtime identity: what a collector profile pins about the concrete OCI backend, observed through
// the Docker Engine API. Its digest is what the profile stores and what every transferred record must
// carry; a different engine, API, OCI runtime or image gives a different digest.
//
// Only stable facts are in it. The kernel version, the host name, the engine's uptime and the list of
// merely configured runtimes are left out: they change without the backend changing, and a digest that
// moves on every reboot would make profiles useless.

import { canonicalJsonBytes, type JsonValue } from '../core/canonical/json.js';
import { domainDigest, DOMAINS } from '../core/crypto/digest.js';
import { badInput } from '../core/errors.js';
import type { EngineApi, EngineVersion } from './engine-api.js';
import { runtimeUnavailable } from './engine-endpoint.js';

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
export async function inspectPinnedImage(api: EngineApi, imageId: string): Promise<{ Id?: unknown }> {
  assertPinnedImageId(imageId);
  let info: { Id?: unknown };
  try {
    info = await api.imageInspect(imageId);
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

/** What the engine says about itself, independent of any image. */
export interface EngineFacts {
  readonly version: EngineVersion;
  /** The engine's default OCI runtime ('unknown' when it names none). */
  readonly runtimeName: string;
}

function componentsOf(version: EngineVersion): VersionComponent[] {
  return Array.isArray(version.Components) ? (version.Components as VersionComponent[]) : [];
}

const PODMAN_RUNTIME_COMPONENT = /^OCI Runtime \((.+)\)$/;

/**
 * The default OCI runtime as podman's /version names it. podman lists exactly one "OCI Runtime (NAME)"
 * component, built from its default runtime, whose NAME is the configured engine runtime that /info
 * reports as DefaultRuntime; so /version alone gives the same identity, and podman answers /version and
 * /info each by gathering its whole host information (about half a second here), so asking only once
 * halves the probe's load on the engine. Anything else (Docker, a podman that lists no runtime) is
 * undefined: the caller then asks /info, as before.
 */
export function podmanDefaultRuntime(version: EngineVersion): string | undefined {
  const components = componentsOf(version);
  if (!components.some((c) => c.Name === 'Podman Engine')) return undefined;
  const named = components.map((c) => (typeof c.Name === 'string' ? PODMAN_RUNTIME_COMPONENT.exec(c.Name)?.[1] : undefined)).filter((n): n is string => n !== undefined);
  return named.length === 1 ? named[0] : undefined;
}

/** /info's DefaultRuntime, as the identity records it. */
export function defaultRuntimeOf(info: { DefaultRuntime?: unknown }): string {
  return typeof info.DefaultRuntime === 'string' && info.DefaultRuntime !== '' ? info.DefaultRuntime : 'unknown';
}

/**
 * Reads the engine's facts: /version (or the answer of a /version already asked of the same endpoint),
 * and /info only when /version does not name the default runtime.
 */
export async function probeEngine(api: EngineApi, asked?: Promise<EngineVersion>): Promise<EngineFacts> {
  try {
    const version = await (asked ?? api.version());
    const runtimeName = podmanDefaultRuntime(version) ?? defaultRuntimeOf(await api.info());
    return { version, runtimeName };
  } catch (e) {
    throw engineFailure('reading the engine version', e);
  }
}

/** Observes the engine and the pinned image and builds the identity and its digest. */
export async function probeRuntime(api: EngineApi, imageId: string, facts?: Promise<EngineFacts>): Promise<RuntimeProbe> {
  assertPinnedImageId(imageId);
  // The reads are independent; asking concurrently keeps the probe off collect's critical path.
  const image = inspectPinnedImage(api, imageId);
  image.catch(() => undefined);
  const engineFacts = await (facts ?? probeEngine(api));
  await image;
  return identityOf(engineFacts, imageId);
}

/** The identity and its digest from the engine's facts and the (inspected) pinned image. */
export function identityOf(facts: EngineFacts, imageId: string): RuntimeProbe {
  const { version, runtimeName } = facts;
  const components = componentsOf(version);
  const podman = components.find((c) => c.Name === 'Podman Engine');
  const engineName = podman ? 'podman' : components.some((c) => c.Name === 'Engine') ? 'docker' : 'unknown';
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
