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
import type Docker from 'dockerode';
import { runtimeUnavailable } from './engine-endpoint.js';
import { engineFailure, readEngineFacts, statusOf, type EngineFacts } from './engine-facts.js';

export { defaultRuntimeOf, engineFailure, factsFromLibpodInfo, factsFromVersion, podmanDefaultRuntime, readEngineFacts, statusOf, type EngineFacts } from './engine-facts.js';

// Version 2 left out the minimum API version: podman's libpod info, from which its facts now come (half
// the time of its /version), does not carry it, and the engine's version fixes it anyway.
export const RUNTIME_IDENTITY_VERSION = 2;

/** A pinned image: the full content ID. Tags and short IDs are refused because they can move. */
export const IMAGE_ID_RE = /^sha256:[0-9a-f]{64}$/;

/** The runtime identity, in declared field order (the canonical bytes follow this order). */
export interface RuntimeIdentity {
  version: number;
  engine: { name: string; version: string; api_version: string; platform: string };
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
export async function inspectPinnedImage(docker: Docker, imageId: string): Promise<{ Id?: unknown }> {
  assertPinnedImageId(imageId);
  let info: { Id?: unknown };
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

/** Observes the engine and the pinned image and builds the identity and its digest. */
export async function probeRuntime(docker: Docker, imageId: string, facts?: Promise<EngineFacts>): Promise<RuntimeProbe> {
  assertPinnedImageId(imageId);
  // The reads are independent; asking concurrently keeps the probe off collect's critical path.
  const image = inspectPinnedImage(docker, imageId);
  image.catch(() => undefined);
  const engineFacts = await (facts ?? readEngineFacts(docker));
  await image;
  return identityOf(engineFacts, imageId);
}

/** The identity and its digest from the engine's facts and the (inspected) pinned image. */
export function identityOf(facts: EngineFacts, imageId: string): RuntimeProbe {
  const identity: RuntimeIdentity = {
    version: RUNTIME_IDENTITY_VERSION,
    engine: { name: facts.name, version: facts.version, api_version: facts.apiVersion, platform: facts.platform },
    os: facts.os,
    arch: facts.arch,
    oci_runtime: { name: facts.runtime.name, version: facts.runtime.version },
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
