// The finite-review collector end to end: a review profile installed (and fixture / plain-HTTP bases
// refused), `agent-task collect` running the real Claude Code CLI headless against the loopback model
// stand-in, the Hub importing the signed transfer by replaying the retained observations through the
// same controller, and qualification of a subject whose requirement has a controller_only criterion.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseStrictJson } from '../../src/core/canonical/json.js';
import { encodeTransfer, headerBytes, headerSigningDigest, recordEntry, sliceRecords, splitTransfer, type ReviewTransferHeader } from '../../src/core/collector/transfer.js';
import { sign } from '../../src/core/crypto/ed25519.js';
import { loadKey } from '../../src/core/crypto/keystore.js';
import { agentscm, json } from '../support/cli.js';
import {
  hubArgs,
  installReviewProfile,
  retainedTransfers,
  reviewCheckpoint,
  reviewClaim,
  reviewCollect,
  reviewExecutionDir,
  reviewProfileDoc,
  reviewRetryUpload,
  reviewRig,
  type ReviewClaim,
  type ReviewRig,
} from '../support/review.js';

let rig: ReviewRig;

before(async () => {
  rig = await reviewRig();
});
after(async () => {
  await rig?.stop();
});

const modelCalls = () => rig.standin.modelRequests().length;

async function collected(change: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<{ c: ReviewClaim; doc: Record<string, unknown>; calls: number }> {
  reviewCheckpoint(rig, change);
  const c = reviewClaim(rig, change);
  const n0 = modelCalls();
  const r = await reviewCollect(rig, change, c, extraEnv);
  assert.equal(r.code, 0, r.stdout + r.stderr + rig.standin.describe());
  return { c, doc: json(r), calls: modelCalls() - n0 };
}

function qualification(change: string): Record<string, unknown> {
  return json(agentscm(['agent-task', 'qualification', change, ...hubArgs(rig), '--json']));
}

function finalize(change: string) {
  return agentscm(['agent-task', 'collector-finalize', change, ...hubArgs(rig), '--json']);
}

/** The decoded records of a retained transfer. */
function records(bytes: Buffer): { header: ReviewTransferHeader; request: Record<string, unknown>; record: Record<string, unknown> } {
  const parts = splitTransfer(bytes);
  const header = parseStrictJson(parts.header, { maxBytes: 1 << 16, what: 'header' }) as unknown as ReviewTransferHeader;
  const [req, rec] = sliceRecords(parts.rest, header.records);
  return { header, request: JSON.parse(req!.toString('utf8')), record: JSON.parse(rec!.toString('utf8')) };
}

/** Rebuilds a transfer with changed records, signed again with the enrolled key (what a fabricating key holder could do). */
function resign(bytes: Buffer, change: (x: { request: Record<string, unknown>; record: Record<string, unknown>; header: ReviewTransferHeader }) => void): Buffer {
  const x = records(bytes);
  change(x);
  const reqBytes = Buffer.from(JSON.stringify(x.request));
  const recBytes = Buffer.from(JSON.stringify(x.record));
  const h: ReviewTransferHeader = { ...x.header, records: [recordEntry('review_request', reqBytes), recordEntry('review_record', recBytes)] };
  const hb = headerBytes(h);
  return encodeTransfer(hb, sign(headerSigningDigest(hb), loadKey(rig.keyDir).secretKey), [reqBytes, recBytes]);
}

/** A claimed attempt whose signed transfer is retained but not uploaded (collect killed after retention). */
async function retainedOnly(change: string): Promise<{ c: ReviewClaim; file: string; original: Buffer }> {
  reviewCheckpoint(rig, change);
  const c = reviewClaim(rig, change);
  const r = await reviewCollect(rig, change, c, { AGENTSCM_FAULT: 'after-retain' });
  assert.equal(r.code, -1, `killed by the fault injector: ${r.stdout}${r.stderr}`);
  const file = path.join(reviewExecutionDir(rig, c.attempt_id), 'transfer.bin');
  return { c, file, original: fs.readFileSync(file) };
}

describe('review collector profiles', () => {
  it('refuses a fixture basis, a plain HTTP provider, another policy and a budget out of bounds at install', async () => {
    const base = reviewProfileDoc(rig);
    const variants: [Record<string, unknown>, RegExp][] = [
      [{ ...base, reviewer: { ...(base.reviewer as object), transport_basis: 'fixture' } }, /REVIEW_BASIS_REFUSED[\s\S]*fixture/],
      [{ ...base, reviewer: { ...(base.reviewer as object), transport_basis: 'http' } }, /REVIEW_BASIS_REFUSED/],
      [{ ...base, reviewer: { ...(base.reviewer as object), provider_scope: { provider: 'anthropic', base_url: 'http://models.example.com' } } }, /REVIEW_BASIS_REFUSED[\s\S]*unqualified HTTP/],
      [{ ...base, policy_digest: 'ab'.repeat(32) }, /POLICY_DIGEST_MISMATCH/],
      [{ ...base, budgets: { ...(base.budgets as object), max_calls: 0 } }, /INVALID_COLLECTOR_PROFILE/],
    ];
    for (const [doc, code] of variants) {
      const r = installReviewProfile(rig, doc);
      assert.equal(r.code, 3, r.stdout + r.stderr);
      assert.match(r.stdout + r.stderr, code);
    }
    const same = json(installReviewProfile(rig, base));
    assert.equal(same.changed, false, 'the installed profile stays current');
  });
});

describe('agent-task collect for a review task', () => {
  it('a passing review qualifies a subject whose requirement has a controller_only criterion', async () => {
    const { doc, calls } = await collected('pass');
    assert.equal(doc.outcome, 'passed');
    assert.equal(doc.kind, 'review');
    assert.equal(calls, doc.review_calls, 'one model request per prepared call');
    assert.equal(doc.dispatched, calls);
    const shown = rig.standin.modelRequests().slice(-calls).flatMap((r) => {
      const body = r.body as { model?: string };
      assert.equal(body.model, 'claude-standin-1', 'the pinned model');
      return [...r.text.matchAll(/=== ([^ ]+) \(sha256/g)].map((m) => m[1]);
    });
    assert.deepEqual(shown, ['README.md', 'check.sh', 'docs/CHECK.md', 'greet.sh'], 'every path, in manifest order');
    const q0 = qualification('pass');
    assert.equal(q0.qualified, false, 'no receipt before finalization');
    assert.deepEqual(q0.next, { operation: 'collector_finalize' });
    const f = finalize('pass');
    assert.equal(f.code, 0, f.stdout + f.stderr);
    const q = qualification('pass');
    assert.equal(q.qualified, true, JSON.stringify(q));
    assert.equal(q.subject_current, true);
  });

  it('a blocking finding yields a signed failed record that never qualifies', async () => {
    rig.findings.set('greet.sh', [{ criterion: 'independent-review', severity: 'blocking', text: 'greet.sh prints to stderr' }]);
    rig.findings.set('README.md', [{ criterion: 'style', severity: 'advisory', text: 'the README could say more' }]);
    try {
      reviewCheckpoint(rig, 'block');
      const c = reviewClaim(rig, 'block');
      const r = await reviewCollect(rig, 'block', c, { AGENTSCM_FAULT: 'after-retain' });
      assert.equal(r.code, -1);
      const file = path.join(reviewExecutionDir(rig, c.attempt_id), 'transfer.bin');
      const { record } = records(fs.readFileSync(file));
      assert.equal(record.outcome, 'failed');
      assert.equal(record.failure, 'blocking_finding');
      const crit = record.criteria as { criterion: string; outcome: string; findings: { path: string; severity: string }[] }[];
      assert.deepEqual(crit.map((x) => [x.criterion, x.outcome, x.findings.map((f) => `${f.path}:${f.severity}`)]), [
        ['independent-review', 'failed', ['greet.sh:blocking']],
        ['style', 'passed', ['README.md:advisory']],
      ]);
      const up = reviewRetryUpload(rig, c);
      assert.equal(up.code, 0, up.stdout + up.stderr);
      assert.equal(json(up).outcome, 'failed');
      assert.equal(retainedTransfers(rig as never, c.attempt_id).outcome, 'failed');
      const q = qualification('block');
      assert.equal(q.qualified, false);
      assert.notEqual(finalize('block').code, 0, 'a failed review cannot be finalized');
    } finally {
      rig.findings.clear();
    }
  });

  it('a budget exhausted is failed, never partial success, and spends no model call', async () => {
    // A file larger than one call may expose: the planned coverage is incomplete before any call.
    assert.equal(installReviewProfile(rig, reviewProfileDoc(rig, { max_call_input_bytes: 4096 })).code, 0);
    const big = path.join(rig.workspace, 'big.txt');
    fs.writeFileSync(big, 'x'.repeat(5000) + '\n');
    try {
      const { c, doc, calls } = await collected('budget');
      assert.equal(doc.outcome, 'failed');
      assert.equal(calls, 0);
      const { record } = records(fs.readFileSync(path.join(reviewExecutionDir(rig, c.attempt_id), 'transfer.bin')));
      assert.equal(record.budget_exhausted, true);
      assert.equal(record.failure, 'budget_exhausted');
      // Nothing was dispatched, so nothing is covered; the request says which path did not fit.
      assert.deepEqual(record.coverage, { required: 5, covered: 0, uncovered: ['README.md', 'big.txt', 'check.sh', 'docs/CHECK.md', 'greet.sh'] });
      assert.deepEqual(records(fs.readFileSync(path.join(reviewExecutionDir(rig, c.attempt_id), 'transfer.bin'))).request.uncovered, ['big.txt', 'check.sh', 'docs/CHECK.md', 'greet.sh']);
      assert.equal(qualification('budget').qualified, false);
    } finally {
      fs.rmSync(big);
      assert.equal(installReviewProfile(rig, reviewProfileDoc(rig)).code, 0);
    }
  });

  it('another executable than the pinned one dispatches nothing (no fallback)', async () => {
    reviewCheckpoint(rig, 'other-exe');
    const c = reviewClaim(rig, 'other-exe');
    const n0 = modelCalls();
    const r = await reviewCollect(rig, 'other-exe', c, {}, process.execPath);
    assert.equal(r.code, 7, r.stdout + r.stderr);
    assert.match(r.stdout, /REVIEWER_EXECUTABLE_CHANGED/);
    assert.equal(modelCalls() - n0, 0);
    assert.equal(retainedTransfers(rig as never, c.attempt_id).count, 0);
  });

  it('a kill -9 at each reservation point, then collect again: no model call is repeated, the transfer is the same', async () => {
    // Three calls (two files that each fill most of a call), so that there are points between calls too.
    assert.equal(installReviewProfile(rig, reviewProfileDoc(rig, { max_call_input_bytes: 4096 })).code, 0);
    const extra = ['src/a.txt', 'src/b.txt'].map((p) => path.join(rig.workspace, p));
    fs.mkdirSync(path.join(rig.workspace, 'src'));
    for (const f of extra) fs.writeFileSync(f, `${path.basename(f)}\n`.repeat(330));
    try {
      const reference = await collected('kill-ref');
      assert.ok(reference.calls >= 2, `the reference review makes ${reference.calls} calls`);
      const refRecord = records(fs.readFileSync(path.join(reviewExecutionDir(rig, reference.c.attempt_id), 'transfer.bin'))).record;
      const faults: [string, string][] = [
        ['after-call-reserve', '0'],
        ['after-observation', '0'],
        ['after-call-reserve', '1'],
        ['after-observation', String(reference.calls - 1)],
        ['after-retain', '0'],
        ['mid-upload', '0'],
      ];
      for (const [fault, call] of faults) {
        const change = `kill-${fault}-${call}`;
        reviewCheckpoint(rig, change);
        const c = reviewClaim(rig, change);
        const n0 = modelCalls();
        const killed = await reviewCollect(rig, change, c, { AGENTSCM_FAULT: fault, AGENTSCM_FAULT_CALL: call });
        assert.equal(killed.code, -1, `${fault}/${call}: killed (${killed.stdout}${killed.stderr})`);
        const again = await reviewCollect(rig, change, c);
        assert.equal(again.code, 0, `${fault}/${call}: ${again.stdout}${again.stderr}`);
        assert.equal(modelCalls() - n0, reference.calls, `${fault}/${call}: every call made exactly once`);
        const file = path.join(reviewExecutionDir(rig, c.attempt_id), 'transfer.bin');
        const bytes = fs.readFileSync(file);
        const rec = records(bytes).record;
        for (const k of ['coverage', 'criteria', 'outcome', 'failure', 'budget_exhausted'] as const) assert.deepEqual(rec[k], refRecord[k], `${fault}/${call}: ${k}`);
        const third = await reviewCollect(rig, change, c);
        assert.equal(third.code, 0);
        assert.equal((json(third).upload as Record<string, unknown>).replayed, true, 'the same retained bytes are uploaded again');
        assert.ok(fs.readFileSync(file).equals(bytes));
        assert.equal(modelCalls() - n0, reference.calls);
      }
    } finally {
      fs.rmSync(path.join(rig.workspace, 'src'), { recursive: true });
      assert.equal(installReviewProfile(rig, reviewProfileDoc(rig)).code, 0);
    }
  });
});

describe('the Hub refuses at import', () => {
  const refusedWith = async (change: string, code: RegExp, mutate: Parameters<typeof resign>[1]) => {
    const { c, file, original } = await retainedOnly(change);
    fs.writeFileSync(file, resign(original, mutate));
    const r = reviewRetryUpload(rig, c);
    assert.equal(r.code, 3, r.stdout + r.stderr);
    assert.match(r.stdout, code);
    assert.equal(retainedTransfers(rig as never, c.attempt_id).count, 0);
    fs.writeFileSync(file, original);
    const good = reviewRetryUpload(rig, c);
    assert.equal(good.code, 0, `the untouched bytes are accepted: ${good.stdout}`);
  };

  it('a changed finding', async () => {
    await refusedWith('r-finding', /RECORD_MISMATCH/, ({ record }) => {
      const crit = record.criteria as { findings: unknown[] }[];
      crit[0]!.findings.push({ path: 'greet.sh', severity: 'advisory', text: 'added later' });
    });
  });

  it('an upgraded outcome', async () => {
    rig.findings.set('greet.sh', [{ criterion: 'independent-review', severity: 'blocking', text: 'defect' }]);
    try {
      await refusedWith('r-outcome', /RECORD_MISMATCH/, ({ record }) => {
        record.outcome = 'passed';
        record.failure = null;
      });
    } finally {
      rig.findings.clear();
    }
  });

  it('a dropped path', async () => {
    await refusedWith('r-dropped', /REQUEST_MISMATCH/, ({ request }) => {
      (request.sources as unknown[]).pop();
    });
  });

  it('a reordered request', async () => {
    await refusedWith('r-reorder', /REQUEST_MISMATCH/, ({ request }) => {
      const calls = request.calls as { paths: string[] }[];
      calls[0]!.paths.reverse();
    });
  });

  it('an observation that does not match its request', async () => {
    await refusedWith('r-obs', /OBSERVATION_MISMATCH/, ({ record }) => {
      const obs = record.observations as { ticket: string }[];
      obs[0]!.ticket = 'cd'.repeat(32);
    });
  });

  it('an executable whose digest changed between before and after', async () => {
    await refusedWith('r-exe', /EXECUTABLE_CHANGED/, ({ record }) => {
      (record.reviewer as Record<string, unknown>).executable_sha256_after = 'ef'.repeat(32);
    });
  });

  it('a fixture basis', async () => {
    await refusedWith('r-fixture', /REVIEW_BASIS_REFUSED/, ({ record }) => {
      (record.reviewer as Record<string, unknown>).transport_basis = 'fixture';
    });
  });

  it('a profile reinstalled before finalization', async () => {
    const { c } = await collected('r-reinstall');
    assert.ok(c);
    assert.equal(json(installReviewProfile(rig, reviewProfileDoc(rig, { max_calls: 7 }))).changed, true);
    const f = finalize('r-reinstall');
    assert.equal(f.code, 7, f.stdout + f.stderr);
    assert.match(f.stdout, /AUTHORIZATION_CHANGED/);
    assert.equal(qualification('r-reinstall').qualified, false);
  });

  // Last: revocation ends this rig's enrollment.
  it('an enrollment revoked before finalization', async () => {
    const { c } = await collected('r-revoked');
    assert.ok(c);
    assert.equal(agentscm(['authority', 'revoke-enrollment', '--yes', '--data-dir', rig.dataDir, '--registration-id', rig.registrationId, '--json']).code, 0);
    const f = finalize('r-revoked');
    assert.equal(f.code, 7, f.stdout + f.stderr);
    assert.match(f.stdout, /AUTHORIZATION_CHANGED/);
    assert.equal(qualification('r-revoked').qualified, false);
  });
});
