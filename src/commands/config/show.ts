// `config show`: the client settings a Hub call would use here, each with where it came from.

import { CLIENT_SETTINGS, ClientConfig } from '../../cli/client-config.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const files = new ClientConfig(ctx.env, ctx.cwd).files();
  const settings: Record<string, { value: string | null; source: string | null }> = {};
  for (const s of CLIENT_SETTINGS) {
    const v = inv.opts[s.flag];
    const value = typeof v === 'string' ? v : null;
    settings[s.key] = { value, source: value === null ? null : (inv.configured?.[s.flag] ?? 'flag') };
  }
  const lines = CLIENT_SETTINGS.map((s) => {
    const r = settings[s.key]!;
    return `${s.key}: ${r.value ?? '(unset)'}${r.source ? ` (${r.source})` : ''}`;
  });
  lines.push(`user file: ${files.user}`, `repository file: ${files.repository ?? '(none)'}`);
  return { data: { settings, files }, text: lines.join('\n') + '\n' };
}
