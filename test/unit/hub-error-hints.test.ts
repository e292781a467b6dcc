// Every code the Hub can emit has a fixed hint sentence, docs/HUB.md lists the same table, and the client
// turns a Hub refusal into "<code>: <message>" with the hint in the error's detail.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { HUB_ERROR_HINTS, hubErrorHint, hubErrorHintsMarkdown } from '../../src/core/contract/hints.js';
import { REFUSALS } from '../../src/core/integration/admission.js';
import { errorFromAnswer } from '../../src/core/hub-client/answer.js';

const root = process.cwd();

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/**
 * The code literals in the Hub's source: the first argument of every HubError construction, of the
 * modules' conflict/refused/notFoundError helpers, of errorJson, and of an HTTP fault tuple.
 */
function emittedCodes(): Set<string> {
  const codes = new Set<string>();
  const site = /(?:new HubError\(\s*\d+\s*,|\b(?:conflict|refused|notFoundError|errorJson)\(|fault = \[\s*\d+\s*,)\s*/g;
  for (const file of tsFiles(path.join(root, 'src/hub'))) {
    const s = fs.readFileSync(file, 'utf8');
    for (const m of s.matchAll(site)) {
      let depth = 0;
      let j = m.index + m[0].length;
      for (; j < s.length; j++) {
        const c = s[j];
        if (c === '(' || c === '[') depth++;
        else if (c === ')' || c === ']') {
          if (depth === 0) break;
          depth--;
        } else if (c === ',' && depth === 0) break;
      }
      for (const l of s.slice(m.index + m[0].length, j).matchAll(/'([a-z][a-z_]*)'/g)) codes.add(l[1]!);
    }
  }
  // integration.ts forwards admission refusals and the authority's NOT_FOUND codes as the Hub's code.
  for (const r of Object.keys(REFUSALS)) codes.add(r);
  codes.add('profile_not_found');
  codes.add('change_not_found');
  return codes;
}

test('every code the Hub can emit has exactly one hint sentence', () => {
  const codes = emittedCodes();
  assert.ok(codes.size > 80, `the scan found the Hub's codes (${codes.size})`);
  for (const known of ['dependency_not_satisfied', 'enrollment_not_current', 'unauthenticated', 'journal_busy', 'request_timeout', 'not_approved']) {
    assert.ok(codes.has(known), `the scan finds ${known}`);
  }
  const missing = [...codes].filter((c) => hubErrorHint(c) === undefined).sort();
  assert.deepEqual(missing, [], 'codes without a hint in src/core/contract/hints.ts');
  const stale = Object.keys(HUB_ERROR_HINTS).filter((c) => !codes.has(c)).sort();
  assert.deepEqual(stale, [], 'hints for codes the Hub no longer emits');
  for (const [code, hint] of Object.entries(HUB_ERROR_HINTS)) {
    assert.match(hint, /^[A-Z].*\.$/, `${code}: one sentence, capitalised, ending with a full stop`);
    assert.ok(!hint.includes('\n') && hint.length <= 200, `${code}: one short line`);
  }
  assert.equal(hubErrorHint('constructor'), undefined, 'no prototype keys');
});

test('docs/HUB.md lists the same table (npm run man writes it)', () => {
  const doc = fs.readFileSync(path.join(root, 'docs/HUB.md'), 'utf8');
  const begin = doc.indexOf('<!-- hub-error-hints:begin');
  const end = doc.indexOf('<!-- hub-error-hints:end -->');
  assert.ok(begin >= 0 && end > begin, 'docs/HUB.md has the hint markers');
  const body = doc.slice(doc.indexOf('\n', begin) + 1, end).trim();
  assert.equal(body, hubErrorHintsMarkdown(), 'docs/HUB.md hint table differs from src/core/contract/hints.ts: run npm run man');
});

test('a Hub refusal becomes "<code>: <message>" with the hint and code in its detail', () => {
  const e = errorFromAnswer({ status: 409, body: { error: { code: 'dependency_not_satisfied', message: 'dependency build has not succeeded' } } });
  assert.equal(e.kind, 'CONFLICT');
  assert.equal(e.code, 'DEPENDENCY_NOT_SATISFIED');
  assert.equal(e.message, 'the Hub refused the request: dependency_not_satisfied: dependency build has not succeeded');
  assert.deepEqual(e.detail, { hub_code: 'dependency_not_satisfied', hint: HUB_ERROR_HINTS.dependency_not_satisfied });
  const auth = errorFromAnswer({ status: 401, body: { error: { code: 'unauthenticated', message: 'missing, unknown or revoked workspace token' } } });
  assert.equal(auth.kind, 'AUTH_REJECTED');
  assert.equal(auth.code, 'AUTH_REJECTED');
  assert.equal(auth.detail?.hint, HUB_ERROR_HINTS.unauthenticated);
  const unknown = errorFromAnswer({ status: 409, body: { error: { code: 'something_new', message: 'x' } } });
  assert.deepEqual(unknown.detail, { hub_code: 'something_new' }, 'an unknown code carries no invented hint');
  const bad = errorFromAnswer({ status: 409, body: { error: { code: 'x', message: 'y', extra: 1 } } });
  assert.equal(bad.code, 'BAD_ERROR_SHAPE');
});
