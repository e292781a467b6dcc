import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJsonBytes } from '../../src/core/canonical/json.js';
import { DOMAINS, domainDigest } from '../../src/core/crypto/digest.js';
import { requestDigest } from '../../src/hub/claims.js';

const alice = { token_id: 't1', owner_id: 'alice', agent_id: 'claude', repository: null, scope: 'full' as const };

test('request digests: key order does not matter, action, actor and bytes do', () => {
  const a = requestDigest('claim', alice, { operation: 'claim', request_id: 'r1', nested: { y: 1, x: [2, 1] } });
  const b = requestDigest('claim', alice, { nested: { x: [2, 1], y: 1 }, request_id: 'r1', operation: 'claim' });
  assert.equal(a, b);
  // The exact preimage: the claim domain over {owner_id, agent_id, request} with sorted keys.
  const expected = domainDigest(
    DOMAINS.requestClaim,
    canonicalJsonBytes({ owner_id: 'alice', agent_id: 'claude', request: { nested: { x: [2, 1], y: 1 }, operation: 'claim', request_id: 'r1' } }),
  );
  assert.equal(a, expected);
  assert.notEqual(requestDigest('heartbeat', alice, { operation: 'claim', request_id: 'r1', nested: { y: 1, x: [2, 1] } }), a);
  assert.notEqual(requestDigest('claim', { ...alice, agent_id: 'codex' }, { operation: 'claim', request_id: 'r1', nested: { y: 1, x: [2, 1] } }), a);
  assert.notEqual(requestDigest('claim', alice, { operation: 'claim', request_id: 'r1', nested: { y: 1, x: [1, 2] } }), a);
});
