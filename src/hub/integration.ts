// The Hub's approve and land operations: the same admission as the trusted-local commands
// (src/core/integration/admission.ts), for a workspace token the operator allowed to integrate
// (`authority token issue --may-integrate`), rechecked inside the authority's write lock together with
// the exact subject the request names. A refusal is HTTP 409 with the refusal's stable code.

import type { Authority } from '../core/authority/store.js';
import type { JsonValue } from '../core/canonical/json.js';
import type { IntegrationRequest } from '../core/contract/integration.js';
import { isAgentscmError } from '../core/errors.js';
import { approvalJson, approve, land, landingJson, refusal, type AdmissionJournal } from '../core/integration/admission.js';
import { HubError } from './errors.js';
import type { Scope } from './subjects.js';

export function handleIntegration(authority: Authority, journal: () => AdmissionJournal | undefined, scope: Scope, req: IntegrationRequest): JsonValue {
  const s = req.subject;
  if (s.repository !== scope.repository || s.profile !== scope.profile) throw new HubError(400, 'subject_scope_mismatch', 'the subject names another repository or profile than the request path');
  const actor = `token:${scope.actor.token_id}`;
  // Inside the write lock: the live actor and grant, then the named subject against the current one.
  const guard = () => {
    if (!authority.mayIntegrate(scope.actor.token_id)) throw new HubError(403, 'not_authorized', 'this token may not approve or land (authority token issue --may-integrate)');
    const cur = authority.currentSubject(s.repository, s.profile, s.change_id);
    if (cur.change_version !== s.change_version || cur.revision !== s.revision || cur.context_digest !== s.context_digest) {
      throw refusal('subject_superseded', `the Change is at version ${cur.change_version}, not ${s.change_version}`);
    }
    if (cur.policy_epoch !== s.policy_epoch || cur.requirement_digest !== s.requirement_digest || cur.plan_digest !== s.plan_digest || cur.target !== s.target) {
      throw refusal('policy_changed', `the profile is at policy epoch ${cur.policy_epoch}, not ${s.policy_epoch}`);
    }
  };
  try {
    if (req.operation === 'approve') {
      const r = approve(authority, journal, { repository: s.repository, profile: s.profile, change_id: s.change_id, actor, guard });
      return approvalJson(r);
    }
    const r = land(authority, journal, { repository: s.repository, profile: s.profile, change_id: s.change_id, actor, guard });
    return landingJson(r);
  } catch (e) {
    if (isAgentscmError(e) && typeof e.detail?.refusal === 'string') throw new HubError(409, e.detail.refusal, e.message);
    if (isAgentscmError(e) && e.kind === 'NOT_FOUND') throw new HubError(404, e.code.toLowerCase(), e.message);
    throw e;
  }
}
