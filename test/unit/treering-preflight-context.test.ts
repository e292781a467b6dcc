import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { selectedIdsDigest } from '../../src/core/treering/activation/fingerprint.js';
import { initActivation } from '../../src/core/treering/activation/init.js';
import { CONTEXT_FOOTER, CONTEXT_HEADER, renderContext, runPreflight, checkTaskHint } from '../../src/core/treering/activation/preflight.js';
import type { PreflightCandidate, PreflightQuery, PreflightRecall } from '../../src/core/treering/activation/recall.js';
import { requireManifest, resolveRoot } from '../../src/core/treering/activation/root.js';
import { screenInput } from '../../src/core/treering/activation/input.js';
import { asciiLowercase } from '../../src/core/treering/text.js';

const cand = (i: number, size = 300): PreflightCandidate => ({ id: `m-${i}`, kind: i % 2 ? 'scar' : 'cambium', summary: `lesson ${i} `.padEnd(size, 'abc '), sourceRef: `docs/n${i}.md` });

test('context stays within 6,000 UTF-8 bytes, keeps relevance order, omits what does not fit', () => {
  const many = Array.from({ length: 60 }, (_, i) => cand(i));
  const { context, included } = renderContext(many, true);
  assert.ok(Buffer.byteLength(context, 'utf8') <= 6000);
  assert.ok(included.length > 5 && included.length < 60);
  assert.deepEqual(included, many.slice(0, included.length).map((c) => c.id));
  assert.ok(context.startsWith(CONTEXT_HEADER + '\n'));
  assert.ok(context.endsWith(CONTEXT_FOOTER));
  assert.match(context, /startup brief/);
  // multi-byte summaries are measured in bytes, not characters
  const wide = Array.from({ length: 40 }, (_, i) => ({ ...cand(i, 10), summary: '木'.repeat(300) }));
  assert.ok(Buffer.byteLength(renderContext(wide, false).context, 'utf8') <= 6000);
  // a huge first entry is skipped, later ones that fit still enter
  const r = renderContext([{ ...cand(0), summary: 'y'.repeat(399) }, cand(1, 20)], false);
  assert.deepEqual(r.included, ['m-0', 'm-1']);
});

test('zero results: the protocol\'s exact empty context; absolute sources and secrets never enter', () => {
  assert.equal(renderContext([], true).context, `${CONTEXT_HEADER}\n- No safe memories matched this scoped query.\n${CONTEXT_FOOTER}`);
  const r = renderContext(
    [
      { id: 'a', kind: 'scar', summary: 'token=abcdefabcdefabcdef', sourceRef: 'x' },
      { id: 'b', kind: 'seed', summary: 'multi\nline\u0007 summary', sourceRef: '/home/u/secret.md' },
    ],
    false,
  );
  assert.deepEqual(r.included, ['b']);
  assert.ok(r.context.includes('- [seed] multi line summary'));
  assert.ok(!r.context.includes('/home/u'));
});

test('task hints: safe ones pass, secret-looking ones are refused', () => {
  assert.equal(checkTaskHint(' fix the flaky login test '), 'fix the flaky login test');
  for (const bad of ['api_key: abc', '-----BEGIN RSA PRIVATE KEY-----', 'ghp_abcdefghijklmnopqrstuvwx', 'AKIAABCDEFGHIJKLMNOP', 'x'.repeat(501)]) assert.throws(() => checkTaskHint(bad), /sensitive-task-hint/);
});

test('the receipt counts and hashes only the memories actually included', async () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tr-pf-')));
  const root = resolveRoot(dir, undefined);
  initActivation(root, { dryRun: false });
  const queries: PreflightQuery[] = [];
  // The store's candidate port (its real adapter is the memory store); here a fixed list.
  const recall: PreflightRecall = { candidates: (q) => (queries.push(q), Array.from({ length: 60 }, (_, i) => cand(i))) };
  const r = await runPreflight({ root, manifest: requireManifest(root), harness: 'codex', identity: { agent_profile: 'codex', workflow_id: 'w', session_id: 's' }, recall, env: {} });
  assert.equal(r.receipt.result_count, r.includedIds.length);
  assert.ok(r.includedIds.length < 60);
  assert.equal(r.receipt.selected_memory_ids_sha256, selectedIdsDigest(r.includedIds));
  assert.equal(queries[0]!.taskHint, undefined, 'no hint: the no-keyword startup brief');
  assert.equal(queries[0]!.project, path.basename(dir));
  assert.equal(r.receipt.query_class, 'startup_fallback');
  const withHint = await runPreflight({ root, manifest: requireManifest(root), harness: 'codex', identity: { agent_profile: 'codex', workflow_id: 'w', session_id: 's' }, taskHint: 'login flow', recall, env: {} });
  assert.equal(queries[1]!.taskHint, 'login flow');
  assert.equal(withHint.receipt.query_class, 'scoped_task_recall');
  assert.equal(selectedIdsDigest([]), selectedIdsDigest([]));
  assert.notEqual(selectedIdsDigest([]), selectedIdsDigest(['m-0']));
});

test('case-insensitive screening: ASCII-lowercased text against lowercase patterns is exactly the /i test', () => {
  // The patterns as /i regular expressions, written out here independently of the modules.
  const caseless = [
    /capab|token|authori[sz]|secret|passw|credential|coordinator|api[_-]?key|cookie|bearer/i,
    /^(?:store|root|harness_id|receipt_state)$/i,
    /\b(?:password|passwd|secret|token|api[_-]?key|authorization|bearer|credential)s?\b\s*[:=]/i,
  ];
  // Kelvin sign, long s, dotted capital I and the like fold onto ASCII letters only under Unicode rules.
  const samples = ['TOKEN', 'Api-Key', 'aPi_kEy', 'to\u212Aen', '\u017Fecret', 'SECRET', 'St\u0130re', 'ROOT', 'Harness_Id', 'Password = x', 'PASSWORD: x', 'pa\u017F\u017Fword: x', 'Bearer', 'Receipt_State', 'model', '\u00C9TOKEN\u00C9', 'authoriSation'];
  for (const source of caseless) {
    const lower = new RegExp(source.source);
    for (const s of samples) assert.equal(lower.test(asciiLowercase(s)), source.test(s), `${source} on ${JSON.stringify(s)}`);
  }
  assert.throws(() => checkTaskHint('the API_KEY = 12345'), /sensitive-task-hint/);
  assert.equal(checkTaskHint('to\u212Aen: a Kelvin sign is not a k here'), 'to\u212Aen: a Kelvin sign is not a k here');
  const screened = (key: string) => {
    try {
      screenInput(Buffer.from(JSON.stringify({ [key]: 'x' })), 'hook input');
      return 'accepted';
    } catch (e) {
      return (e as { code?: string }).code;
    }
  };
  assert.equal(screened('Coordinator_Capability'), 'CAPABILITY_FIELD');
  assert.equal(screened('STORE_ROOT'), 'CLAIM_FIELD');
  assert.equal(screened('to\u212Aen'), 'accepted');
  assert.equal(screened('transcript_path'), 'accepted');
});
