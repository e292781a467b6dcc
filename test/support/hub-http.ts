// Raw task operations over HTTP for tests and benchmarks that need many requests at once, plus many
// Changes of one workspace snapshot recorded straight in the authority (trusted-local, like checkpoint).

import * as http from 'node:http';
import { subjectToJson, type Task } from '../../src/core/authority/plan.js';
import { Authority } from '../../src/core/authority/store.js';
import type { JsonValue } from '../../src/core/canonical/json.js';

export interface OpAnswer {
  status: number;
  body: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export function opPath(repository: string, profile: string): string {
  return `/v1/hub/workspace/repositories/${encodeURIComponent(repository)}/profiles/${encodeURIComponent(profile)}/agent-tasks`;
}

/**
 * POSTs one operation through a keep-alive agent. A pooled socket that the Hub closed after its 5 s
 * keep-alive timeout while this process could not notice (its event loop blocked in a spawnSync, say)
 * fails the request with ECONNRESET before the Hub read it: that request is sent once more on a fresh
 * socket, as Node's documentation advises (request.reusedSocket).
 */
export function postOp(agent: http.Agent, url: string, pathname: string, token: string, body: JsonValue, retried = false): Promise<OpAnswer> {
  const u = new URL(url);
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: pathname, method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': payload.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
          } catch (e) {
            reject(e);
          }
        });
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (!retried && req.reusedSocket && e.code === 'ECONNRESET') postOp(agent, url, pathname, token, body, true).then(resolve, reject);
      else reject(e);
    });
    req.end(payload);
  });
}

/** Records `count` Changes at `revision` and returns the first task of each one's current subject. */
export function manyTasks(dataDir: string, repository: string, profile: string, revision: string, count: number, prefix = 'k'): Task[] {
  const a = Authority.open(dataDir);
  try {
    const out: Task[] = [];
    for (let i = 0; i < count; i++) {
      a.recordChangeVersion(repository, `${prefix}${i}`, revision);
      out.push(a.tasksFor(a.currentSubject(repository, profile, `${prefix}${i}`))[0]!);
    }
    return out;
  } finally {
    a.close();
  }
}

export function claimBody(t: Task, requestId: string, leaseMs = 600_000): JsonValue {
  return {
    operation: 'claim',
    request_id: requestId,
    subject: subjectToJson(t.subject),
    task_id: t.task_id,
    task_digest: t.task_digest,
    execution_operation_id: `exec-${requestId}`,
    requested_lease_ms: leaseMs,
    executor_id: null,
  };
}

/** heartbeat/cancel/reconcile body bound to a claim answer's attempt. */
export function mutationBody(op: 'heartbeat' | 'cancel' | 'reconcile', attempt: Record<string, any>, requestId: string): JsonValue { // eslint-disable-line @typescript-eslint/no-explicit-any
  const b: Record<string, JsonValue> = {
    operation: op,
    request_id: requestId,
    task_id: attempt.task_id,
    task_digest: attempt.task_digest,
    attempt_id: attempt.attempt_id,
    attempt_digest: attempt.attempt_digest,
    execution_operation_id: attempt.execution_operation_id,
    executor_id: null,
    fence: attempt.fence,
  };
  if (op === 'heartbeat') b.requested_lease_ms = attempt.lease_ms;
  else b.reason = '';
  return b;
}

/** An agent assertion (failed, one row per criterion) for a claim answer's attempt. */
export function resultBody(t: Task, attempt: Record<string, any>, requestId: string, owner: string, agent: string): JsonValue { // eslint-disable-line @typescript-eslint/no-explicit-any
  return {
    operation: 'result',
    assertion: {
      version: 1,
      task_id: attempt.task_id,
      task_digest: attempt.task_digest,
      attempt_id: attempt.attempt_id,
      attempt_digest: attempt.attempt_digest,
      request_id: requestId,
      execution_operation_id: attempt.execution_operation_id,
      agent: { owner_id: owner, agent_id: agent },
      executor: null,
      fence: attempt.fence,
      trust_class: 'agent_assertion',
      outcome: 'failed',
      criteria: t.step.criteria.map((c) => ({ criterion: c.id, outcome: c.controller_only ? 'not_claimed' : 'failed', findings: [], evidence_digests: [] })),
      executor_provenance: null,
    },
  };
}
