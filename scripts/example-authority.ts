// A throwaway authority for builds, benches and tests: a data dir with one requirement installed as
// acme/demo's `default` profile (target main) and one token issued. By default the requirement is the
// shipped examples/requirement.json.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Authority, initAuthority } from '../src/core/authority/store.js';
import { decodeRequirement } from '../src/core/contract/requirement.js';
import { checkpoint } from '../src/core/native/checkpoint.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function exampleAuthority(dataDir: string, who: { owner: string; agent: string }, requirement?: Uint8Array): { token: string } {
  initAuthority(dataDir);
  const req = decodeRequirement(requirement ?? fs.readFileSync(path.join(ROOT, 'examples', 'requirement.json')));
  const a = Authority.open(dataDir);
  try {
    a.addProfile({ repository: 'acme/demo', profile: 'default', target: 'main', requirement: req.requirement, canonical: req.canonical, requirement_digest: req.digest });
    return { token: a.issueToken(who.owner, who.agent).token };
  } finally {
    a.close();
  }
}

/**
 * What a Stop hook run needs under root: the example authority in root/data, its token in root/token
 * (0600), and a copy of examples/workspace in root/ws checkpointed as Change c1.
 */
export function exampleCheckpointedWorkspace(root: string, who: { owner: string; agent: string }): { dataDir: string; tokenFile: string; ws: string } {
  const dataDir = path.join(root, 'data');
  const { token } = exampleAuthority(dataDir, who);
  const tokenFile = path.join(root, 'token');
  fs.writeFileSync(tokenFile, token + '\n', { mode: 0o600 });
  const ws = path.join(root, 'ws');
  fs.cpSync(path.join(ROOT, 'examples', 'workspace'), ws, { recursive: true });
  checkpoint(dataDir, { repository: 'acme/demo', profile: 'default', change_id: 'c1', workspace: ws });
  return { dataDir, tokenFile, ws };
}
