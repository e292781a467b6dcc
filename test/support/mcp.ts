// The official MCP client (@modelcontextprotocol/client) against a Hub's workspace MCP endpoint over
// real HTTP, at the 2026-07-28 revision (pinned) or through the initialize path of a 2025 revision.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

export const MODERN = '2026-07-28';
export type Revision = typeof MODERN | '2025-11-25' | '2025-06-18';

export function mcpUrl(hubUrl: string, repository: string, profile: string): URL {
  return new URL(`/v1/hub/workspace/mcp?repository=${encodeURIComponent(repository)}&profile=${encodeURIComponent(profile)}`, hubUrl);
}

export async function mcpClient(url: URL, token: string, revision: Revision = MODERN): Promise<Client> {
  const client =
    revision === MODERN
      ? new Client({ name: 'agentscm-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } })
      : new Client({ name: 'agentscm-test', version: '1.0.0' }, { supportedProtocolVersions: [revision] });
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return client;
}
