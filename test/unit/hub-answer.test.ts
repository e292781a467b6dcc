// decodeAnswer (src/core/hub-client/answer.ts): what an answer that is no JSON document means, by its
// status. A proxy's 502/503/504 page is an unavailable Hub (exit 5), not a malformed answer (exit 6).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentscmError } from '../../src/core/errors.js';
import { decodeAnswer } from '../../src/core/hub-client/answer.js';

const refusal = (status: number, contentType: string, body: string): { kind: string; code: string; exit: number } => {
  try {
    decodeAnswer(status, contentType, Buffer.from(body), 1 << 20);
  } catch (e) {
    assert.ok(e instanceof AgentscmError);
    return { kind: e.kind, code: e.code, exit: e.exitCode };
  }
  assert.fail('decoded');
};

test('an answer without a JSON document: 401/403 a rejected token, 502/503/504 an unavailable Hub, else malformed', () => {
  for (const status of [502, 503, 504]) {
    assert.deepEqual(refusal(status, 'text/html', '<h1>Service Unavailable</h1>'), { kind: 'HUB_UNREACHABLE', code: 'HUB_UNAVAILABLE', exit: 5 });
    assert.deepEqual(refusal(status, 'application/json', '<h1>oops</h1>'), { kind: 'HUB_UNREACHABLE', code: 'HUB_UNAVAILABLE', exit: 5 });
  }
  assert.deepEqual(refusal(401, 'text/plain', 'no'), { kind: 'AUTH_REJECTED', code: 'AUTH_REJECTED', exit: 4 });
  assert.deepEqual(refusal(200, 'text/plain', 'hello'), { kind: 'HUB_MALFORMED', code: 'NOT_JSON', exit: 6 });
  assert.deepEqual(refusal(500, 'application/json', '{"a":1,"a":2}'), { kind: 'HUB_MALFORMED', code: 'INVALID_JSON', exit: 6 });
  // A 503 the Hub itself sends is a JSON error document, decoded as such.
  assert.deepEqual(decodeAnswer(503, 'application/json', Buffer.from('{"error":{"code":"journal_busy","message":"m"}}'), 1 << 20), {
    status: 503,
    body: { error: { code: 'journal_busy', message: 'm' } },
  });
});
