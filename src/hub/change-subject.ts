// The Change form of a subject-bound request: {"change_id": ID} in place of "subject". The Hub reads
// the Change's current subject from its own authority and runs the request as if the caller had sent
// that subject, so a caller without the data dir (another machine) can still name what it means.

import { subjectToJson } from '../core/authority/plan.js';
import type { Authority } from '../core/authority/store.js';
import type { JsonValue } from '../core/canonical/json.js';
import { ID_RE } from '../core/contract/paths.js';
import { AgentscmError } from '../core/errors.js';
import { HubError, invalidRequest } from './errors.js';

/** The operations whose request carries a subject (recovery's may be null; it takes a Change too). */
export const CHANGE_FORM_OPERATIONS: readonly string[] = [
  'requirements', 'next', 'qualification', 'instructions', 'reference', 'status', 'claim', 'collector_claim', 'collector_finalize', 'recovery',
];

/** The request with its change_id replaced by the current subject; any other request unchanged. */
export function withCurrentSubject(authority: Authority, repository: string, profile: string, doc: JsonValue): JsonValue {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || !('change_id' in doc)) return doc;
  if (typeof doc.operation !== 'string' || !CHANGE_FORM_OPERATIONS.includes(doc.operation)) return doc;
  if ('subject' in doc) throw invalidRequest('request body is invalid: give subject or change_id, not both');
  const changeId = doc.change_id;
  if (typeof changeId !== 'string' || !ID_RE.test(changeId)) throw invalidRequest('request body is invalid: change_id must be an id');
  authority.revalidate();
  let subject;
  try {
    subject = authority.currentSubject(repository, profile, changeId);
  } catch (e) {
    if (e instanceof AgentscmError && e.kind === 'NOT_FOUND') throw new HubError(404, 'change_not_found', 'no such Change for this repository and profile');
    throw e;
  }
  const out: { [k: string]: JsonValue } = {};
  for (const [k, v] of Object.entries(doc)) if (k !== 'change_id') out[k] = v;
  out.subject = subjectToJson(subject);
  return out;
}
