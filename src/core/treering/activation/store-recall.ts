// Wires the preflight port to the memory store's scoped session query (seed 003 scope rules, the
// no-keyword startup brief, sensitivity and lifecycle filters before the limit). A project without a
// memory database has no memories to recall; nothing is created.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { openTreeRingReadOnly, recallSessionBrief } from '../index.js';
import { projectAlias } from './alias.js';
import { EMPTY_RECALL, type PreflightRecall } from './recall.js';

export function storeRecallFactory(memoryRoot: string): PreflightRecall {
  if (!fs.existsSync(path.join(memoryRoot, 'memory.sqlite'))) return EMPTY_RECALL;
  return {
    candidates(q) {
      const reader = openTreeRingReadOnly(memoryRoot);
      try {
        const found = recallSessionBrief(
          reader,
          { project: q.project, projectAlias: projectAlias(q.project), agentProfile: q.agentProfile, workflowId: q.workflowId, sessionId: q.sessionId },
          { taskHint: q.taskHint, limit: q.limit },
        );
        return found.map((m) => ({ id: m.id, summary: m.summary, kind: m.ring, ...(m.source_ref ? { sourceRef: m.source_ref } : {}) }));
      } finally {
        reader.close();
      }
    },
  };
}
