// A real container engine for tests: DOCKER_HOST when it answers (CI exports the one .ci/run started),
// otherwise `podman system service` on a private socket, started here and stopped when the process
// exits. There is no skipping: a test that needs an engine fails when none can be had, with the reason.
//
// Test images are built from the host's static busybox with the engine's import call (never pulled),
// and cached under a fixed tag, so repeated runs reuse them.

import type Docker from 'dockerode';
import { connectEngine, startPodmanService, type EngineEndpoint } from '../../src/collectors/engine.js';

export interface TestEngine {
  /** dockerode on the engine's endpoint: the collector's client, and the tests' view (listing, image import). */
  readonly docker: Docker;
  readonly endpoint: EngineEndpoint;
}

let engine: Promise<TestEngine> | undefined;

export function ensureEngine(): Promise<TestEngine> {
  engine ??= acquire();
  return engine;
}

async function acquire(): Promise<TestEngine> {
  const fromEnv = process.env.DOCKER_HOST;
  if (fromEnv) {
    try {
      return await connectEngine({ env: process.env });
    } catch {
      // fall through: a stale DOCKER_HOST should not stop a developer who has podman installed
    }
  }
  try {
    const started = await startPodmanService({ env: withoutDockerHost(process.env), timeoutMs: 60_000 });
    // stop() also runs on process exit (engine.ts registers it); the service must not outlive the tests.
    process.once('beforeExit', () => void started.stop());
    return started;
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new Error(
      `these tests need a container engine and none could be had (${why}). ` +
        'Install podman, runc and busybox-static (Debian: apt-get install podman runc busybox-static) or set DOCKER_HOST; .ci/run does both.',
    );
  }
}

function withoutDockerHost(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  delete copy.DOCKER_HOST;
  return copy;
}

export { ensureTestImage, TEST_IMAGE_REPO } from '../../src/collectors/busybox-image.js';
