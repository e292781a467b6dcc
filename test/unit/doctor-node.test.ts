// doctor's Node check: too old fails, a release line past its end of life warns (as of the given day),
// anything else is ok.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NODE_END_OF_LIFE, nodeCheck } from '../../src/commands/doctor.js';

test('Node older than 20.19 fails; Node 20 warns from the day after its end of life; 22, 24 and newer lines are ok', () => {
  assert.equal(nodeCheck('20.18.3', '2026-01-01').status, 'fail');
  assert.equal(nodeCheck('18.20.0', '2026-01-01').status, 'fail');
  assert.equal(nodeCheck('20.19.0', '2026-04-30').status, 'ok');
  const eol = nodeCheck('20.20.2', '2026-05-01');
  assert.equal(eol.status, 'warn');
  assert.equal(eol.message, 'Node 20.20.2: Node 20 reached its end of life on 2026-04-30 and gets no security fixes; move to a supported release line');
  assert.deepEqual(eol.detail, { version: '20.20.2', end_of_life: '2026-04-30' });
  assert.equal(nodeCheck('23.11.0', '2026-12-04').status, 'warn');
  assert.equal(nodeCheck('22.12.0', '2026-12-04').status, 'ok');
  assert.equal(nodeCheck('22.12.0', '2027-05-01').status, 'warn');
  assert.equal(nodeCheck('24.22.3', '2026-12-04').status, 'ok');
  assert.equal(nodeCheck('26.0.0', '2030-01-01').status, 'ok');
  // Every listed date is a real calendar day.
  for (const d of Object.values(NODE_END_OF_LIFE)) assert.equal(new Date(`${d}T00:00:00Z`).toISOString().slice(0, 10), d);
});
