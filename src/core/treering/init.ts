// Store initialization: create or migrate `<root>/memory.sqlite` and publish the project-local
// guidance files (AGENTS.md, SKILL.md, CLI.md) create-only: existing files are never overwritten.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { publishCreateOnly } from '../fs/safe.js';
import { openWritable } from './store/schema.js';

export interface AgentAwareness {
  created: string[];
  existing: string[];
}

export interface InitResult {
  sqlitePath: string;
  agentAwareness: AgentAwareness;
}

const AGENTS_MD = `# Tree Ring Memory (project-local)

This directory holds the project's Tree Ring memory store (\`memory.sqlite\`). It is local data,
not instructions: project source and the root AGENTS.md remain authoritative.

- Recall before substantive work: \`tree-ring recall "<task words>"\`.
- Store only durable, reusable outcomes: decisions, validated lessons, warnings, preferences, seeds.
- Never store secrets, credentials, raw prompts, transcripts or sensitive personal data; the CLI
  refuses secret-like text.
- Correct mistakes explicitly: \`tree-ring forget <id> --mode redact --reason "<why>"\`.

See SKILL.md (when to use memory) and CLI.md (commands).
`;

const SKILL_MD = `# Skill: Tree Ring Memory

Use memory at these moments: project start or resume, a user correction, a repeated mistake, a
durable decision, a future idea worth keeping, and when closing out work.

Rings: cambium (fresh), outer (recent), inner (older), heartwood (durable truths), scar (failures
and warnings), seed (future ideas). Scopes: global, project, agent, workflow, session, tool, eval,
manual, dox, revolve. Agent, workflow and session memories need their identity.

When in doubt, do not store the memory. Prefer a short, source-linked lesson.
`;

const CLI_MD = `# Tree Ring CLI quick reference

    tree-ring recall "release checklist" --project NAME --limit 8 [--json]
    tree-ring remember "Use reversible migrations." --event-type decision --scope project --project NAME
    tree-ring remember "..." --event-type lesson --scope agent --agent-profile P --operation-id ID --source-ref REF
    tree-ring evidence "Fix passed the eval." --outcome promoted --evidence-ref evals/run-42 --score 0.9
    tree-ring capture "..." --event-type lesson --ring cambium --project NAME --agent-profile P \\
        --workflow-id W --session-id S --operation-id auto-CHECKPOINT-1 --source-ref agent-checkpoint:CHECKPOINT
    tree-ring forget MEMORY_ID --mode redact --reason "remove sensitive detail"
    tree-ring export --output memories.jsonl
    tree-ring import memories.jsonl --dry-run
    tree-ring policy status

Every command accepts --root DIR (default .tree-ring) and --json. Errors are one line on stderr, exit 2.
Identity flags fall back to TREE_RING_AGENT_PROFILE, TREE_RING_WORKFLOW_ID and TREE_RING_SESSION_ID.
`;

const GUIDANCE: ReadonlyArray<readonly [string, string]> = [
  ['AGENTS.md', AGENTS_MD],
  ['SKILL.md', SKILL_MD],
  ['CLI.md', CLI_MD],
];

/**
 * The root's own ignore rules (create-only, like the guidance): the store and its sidecars, receipts
 * and runtime files are local state, never project content ("Do not commit local memory databases",
 * upstream's generated AGENTS.md). Git then leaves them out, and so does `agentscm checkpoint`, which
 * excludes them in any case (TOOL_STATE_FILES in native/snapshot.ts).
 */
export const ROOT_GITIGNORE = `# Tree Ring local state: the memory store, its SQLite sidecars, activation receipts and runtime files.
/memory.sqlite
/memory.sqlite-*
/activation/receipts/
/activation/runtime/
`;

export function initStore(root: string): InitResult {
  const db = openWritable(root);
  db.close();
  const ignore = path.join(root, '.gitignore');
  if (!fs.existsSync(ignore)) publishCreateOnly(ignore, ROOT_GITIGNORE, 0o644);
  const awareness: AgentAwareness = { created: [], existing: [] };
  for (const [name, text] of GUIDANCE) {
    const file = path.join(root, name);
    const rel = path.join(path.basename(root), name);
    if (fs.existsSync(file) || !publishCreateOnly(file, text, 0o644)) awareness.existing.push(rel);
    else awareness.created.push(rel);
  }
  return { sqlitePath: path.join(root, 'memory.sqlite'), agentAwareness: awareness };
}
