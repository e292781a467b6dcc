import { connectEngine } from '../../collectors/engine.js';
import { assertPinnedImageId, probeRuntime, readEngineFacts } from '../../collectors/runtime-probe.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { optionalStringOpt, stringOpt } from '../options.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const image = stringOpt(inv, 'image');
  // A tag or short ID is refused as bad input whether or not an engine answers.
  assertPinnedImageId(image);
  const { docker, endpoint, ping } = await connectEngine({ dockerHost: optionalStringOpt(inv, 'docker-host'), env: ctx.env });
  const probe = await probeRuntime(docker, image, readEngineFacts(docker, ping));
  return {
    data: {
      docker_host: endpoint.url,
      runtime_identity: probe.identity,
      runtime_identity_digest: probe.digest,
    },
  };
}
