// agentscm agent-task test-image: builds (or reuses) the local busybox test image the demo and the tests
// use, from the host's static busybox with the engine's import call (never pulled), and prints its
// pinned ID: the value runtime-probe --image and a collector profile's recipe take.

import { connectEngine } from '../../collectors/engine.js';
import { ensureTestImage, TEST_IMAGE_REPO, TEST_IMAGE_TAG } from '../../collectors/busybox-image.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { optionalStringOpt } from '../options.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const { docker, endpoint } = await connectEngine({ dockerHost: optionalStringOpt(inv, 'docker-host'), env: ctx.env });
  const imageId = await ensureTestImage(docker);
  return {
    data: { image_id: imageId, reference: `${TEST_IMAGE_REPO}:${TEST_IMAGE_TAG}`, docker_host: endpoint.url },
    // The ID alone, so that IMG=$(agentscm agent-task test-image) works.
    text: imageId,
  };
}
