// `tree-ring init` (activation part) and `integrations activate|link|deactivate`: create-only
// publication of owned bridge files, the root AGENTS.md block, the passive Agent Zero binding, the
// launcher and the manifest. An existing final entry is never replaced or removed; anything that would
// need that is left byte-for-byte and reported needs-user-review.

import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';

import { localState } from '../../errors.js';
import { sha256Hex } from '../../crypto/digest.js';
import { TREE_RING_VERSION } from '../../../version.js';
import { AGENTS_BLOCK_ID, ACTIVATION_PROTOCOL_VERSION, ACTIVATION_SCHEMA_VERSION, ADAPTERS, MAINTAINED_HARNESSES, type ActivationState, type MaintainedHarness } from './constants.js';
import { agentsBlock, desiredBridge, findBlock, mergedHookFile, recordFor, treeRingViewOf } from './bridges.js';
import { projectRootFingerprint, type ManagedBlock, type OwnedFile } from './fingerprint.js';
import { launcherScript, LAUNCHER_PATH } from './launcher.js';
import { sameManifest, serializeManifest, MANIFEST_FILE, type ActivationManifest, type HarnessRecord } from './manifest.js';
import type { PublishOutcome } from './projectfs.js';
import { loadManifest, rootKind, type ActivationRoot } from './root.js';
import { deriveHarnessStatus, nextStep, harnessProof, piDetected, PI_NOT_DETECTED_STEP } from './status.js';
import { checkAgentZeroDescriptor } from './agent-zero.js';
import { receiptSummary, type ReceiptSummary } from './receipts.js';

const MANIFEST_REL = `.tree-ring/${MANIFEST_FILE}`;

export interface HarnessPlan {
  readonly harness: MaintainedHarness;
  readonly record: HarnessRecord;
  /** Files to create (absent now); existing identical files are already in place. */
  /** `replaces`: a shared hook file's current bytes, which the write merges our handlers into. */
  readonly writes: { path: string; bytes: string; mode: number; replaces?: Buffer }[];
  readonly conflicts: string[];
}

export interface HarnessOutcome {
  readonly harness_id: string;
  readonly state: ActivationState;
  readonly changed_paths: string[];
  readonly detail?: string;
  readonly next_step: string;
}

export interface InitResult {
  readonly root: string;
  readonly dry_run: boolean;
  readonly store_id: string;
  readonly project_root_fingerprint: string;
  readonly manifest: 'created' | 'unchanged' | 'needs-user-review' | 'would-create';
  readonly created: string[];
  readonly preserved: string[];
  /** One outcome per maintained harness, under upstream's key. */
  readonly integrations: HarnessOutcome[];
}

/**
 * Plans one harness against the current disk without writing. A managed block's record depends only
 * on the block itself, never on the project's text around it: we never write whitespace before our
 * block (we create AGENTS.md starting with it, or the project places it), so the adapter-owned
 * leading separator is empty, except that a separator `prior` (the manifest's record) already carries
 * for this exact block is kept as recorded ownership rather than re-derived from the file.
 */
export function planHarness(root: ActivationRoot, harness: MaintainedHarness, storeId: string, fingerprint: string, prior?: HarnessRecord): HarnessPlan {
  const desired = desiredBridge(harness, { store_id: storeId, project_root_fingerprint: fingerprint });
  const writes: HarnessPlan['writes'] = [];
  const conflicts: string[] = [];
  const files: OwnedFile[] = [];
  const blocks: ManagedBlock[] = [];
  const safeKind = (rel: string): ReturnType<typeof root.pfs.kind> | 'unsafe' => {
    try {
      return root.pfs.kind(rel);
    } catch (e) {
      conflicts.push(e instanceof Error ? e.message : String(e));
      return 'unsafe';
    }
  };
  for (const f of desired.files) {
    const kind = safeKind(f.path);
    if (kind === 'unsafe') continue;
    if (kind === 'absent') writes.push({ path: f.path, bytes: f.bytes, mode: f.mode });
    else if (kind !== 'file') conflicts.push(`${f.path} exists and is not a regular file`);
    else {
      const current = root.pfs.read(f.path)!;
      if (treeRingViewOf(f.path, current).toString('utf8') !== f.bytes) {
        // Another tool's hook file (agentscm install-stop, the project's hooks): ours are added beside theirs.
        const merged = mergedHookFile(f.path, current.toString('utf8'));
        if (merged !== undefined) writes.push({ path: f.path, bytes: merged, mode: f.mode, replaces: current });
        else conflicts.push(`${f.path} exists with other content`);
      }
    }
    files.push({ path: f.path, sha256: sha256Hex(f.bytes) });
  }
  for (const b of desired.blocks) {
    const kind = safeKind(b.path);
    if (kind === 'unsafe') continue;
    const sha256 = sha256Hex(b.text);
    const recorded = prior?.managed_blocks.find((r) => r.path === b.path && r.block_id === b.block_id && r.sha256 === sha256);
    const block: ManagedBlock = { path: b.path, block_id: b.block_id, sha256, leading_separator: recorded?.leading_separator ?? '' };
    if (kind === 'absent') {
      // A missing root AGENTS.md is created holding only our block; we own only that block.
      writes.push({ path: b.path, bytes: b.text + '\n', mode: 0o644 });
      blocks.push(block);
    } else if (kind !== 'file') {
      conflicts.push(`${b.path} exists and is not a regular file`);
    } else {
      const found = findBlock(root.pfs.read(b.path)!.toString('utf8'));
      if (found && found.count === 1 && found.text === b.text) blocks.push(block);
      else conflicts.push(found ? `${b.path} holds a changed Tree Ring block` : `${b.path} is the project's; it has no Tree Ring block (add the marked block by hand to enable Codex)`);
    }
  }
  const initial: ActivationState = harness === 'agent-zero' ? 'needs-plugin' : harness === 'pi' ? 'needs-trust' : 'configured-awaiting-proof';
  if (conflicts.length > 0) return { harness, record: recordFor(harness, 'needs-user-review', desired.bridgePath, [], []), writes: [], conflicts };
  return { harness, record: recordFor(harness, initial, desired.bridgePath, files, blocks), writes, conflicts };
}

function publishAll(root: ActivationRoot, writes: HarnessPlan['writes']): { created: string[]; raced: string[]; indeterminate: boolean } {
  const created: string[] = [];
  const raced: string[] = [];
  let indeterminate = false;
  for (const w of writes) {
    const o: PublishOutcome = w.replaces !== undefined ? root.pfs.replaceIfUnchanged(w.path, w.replaces, w.bytes) : root.pfs.publish(w.path, w.bytes, w.mode);
    // Codex and Pi own the same skill bridge: a copy with our exact bytes is already in place.
    if (o === 'exists') {
      if (root.pfs.kind(w.path) !== 'file' || root.pfs.read(w.path)?.toString('utf8') !== w.bytes) raced.push(w.path);
    } else created.push(w.path);
    if (o === 'indeterminate') indeterminate = true;
  }
  return { created, raced, indeterminate };
}

export interface InitOptions {
  readonly dryRun: boolean;
  /** For the Agent Zero plugin's descriptor (TREE_RING_AGENT_ZERO_PLUGIN_MANIFEST). */
  readonly env?: NodeJS.ProcessEnv;
  readonly nodePath?: string;
  readonly cliPath?: string;
}

export function initActivation(root: ActivationRoot, opts: InitOptions): InitResult {
  const kind = rootKind(root);
  const created: string[] = [];
  const preserved: string[] = [];
  const loaded = kind === 'dir' ? loadManifest(root) : ({ kind: 'absent' } as const);
  const existing = loaded.kind === 'ok' ? loaded.manifest : undefined;
  const storeId = existing?.store_id ?? randomUUID();
  const fingerprint = projectRootFingerprint(root.realProjectRoot);

  if (!opts.dryRun && kind === 'absent') {
    fs.mkdirSync(root.memoryRoot, { mode: 0o700 });
    fs.chmodSync(root.memoryRoot, 0o700);
    created.push('.tree-ring/');
  }

  // Pi is planned only where the project has its marker (upstream's detection); a manifest that
  // already records Pi keeps being checked against it.
  const planned = MAINTAINED_HARNESSES.filter((h) => h !== 'pi' || piDetected(root) || existing?.harnesses.pi !== undefined);
  const plans = planned.map((h) => planHarness(root, h, storeId, fingerprint, existing?.harnesses[h]));
  const outcomes = new Map<MaintainedHarness, HarnessOutcome>();
  const records: Record<string, HarnessRecord> = {};

  let wouldChangeManifest = false;
  const manifestBlocked = loaded.kind === 'invalid' || (existing !== undefined && (existing.project_root_fingerprint !== fingerprint));
  for (const p of plans) {
    const prior = existing?.harnesses[p.harness];
    let record = p.record;
    let detail = p.conflicts.join('; ') || undefined;
    let state = record.state;
    let writes = p.writes;
    if (manifestBlocked) {
      state = 'needs-user-review';
      detail = loaded.kind === 'invalid' ? `.tree-ring/activation.json is invalid: ${loaded.reason}` : 'the manifest belongs to another project root';
      writes = [];
    } else if (existing && (!prior || JSON.stringify(prior) !== JSON.stringify(record))) {
      // The manifest is create-only: a record that would change keeps the old one and needs review.
      state = 'needs-user-review';
      wouldChangeManifest = true;
      detail = prior ? `${p.record.bridge_path} and its manifest record differ from what this CLI would publish` : 'no managed activation record in the existing manifest';
      writes = [];
      if (prior) record = prior;
    }
    records[p.harness] = record;
    let changed: string[] = [];
    if (!opts.dryRun && writes.length > 0) {
      const r = publishAll(root, writes);
      changed = r.created;
      if (r.raced.length > 0) {
        state = 'needs-user-review';
        detail = `${r.raced.join(', ')} appeared during publication and was left untouched`;
        records[p.harness] = recordFor(p.harness, 'needs-user-review', record.bridge_path, [], []);
      } else if (r.indeterminate) {
        state = 'needs-user-review';
        detail = 'publication durability is indeterminate (a directory sync failed); everything published was kept';
      }
    } else if (opts.dryRun) changed = writes.map((w) => w.path);
    created.push(...(opts.dryRun ? [] : changed));
    // The persisted Agent Zero record stays the passive needs-plugin binding; with the plugin's
    // valid descriptor present the reported state is the one its status derives (upstream:
    // tests/agent_zero_342_acceptance.rs).
    if (p.harness === 'agent-zero' && state === 'needs-plugin' && checkAgentZeroDescriptor(opts.env ?? {}, root.realProjectRoot).ok) state = 'configured-awaiting-proof';
    outcomes.set(p.harness, { harness_id: p.harness, state, changed_paths: changed, ...(detail ? { detail } : {}), next_step: nextStep(state, p.harness) });
  }
  if (!planned.includes('pi'))
    outcomes.set('pi', { harness_id: 'pi', state: 'unsupported', changed_paths: [], detail: 'Pi is not detected in this project (no .pi or pi.toml)', next_step: PI_NOT_DETECTED_STEP });

  const manifest: ActivationManifest = existing ?? {
    schema_version: ACTIVATION_SCHEMA_VERSION,
    protocol_version: ACTIVATION_PROTOCOL_VERSION,
    store_id: storeId,
    project_root_fingerprint: fingerprint,
    cli_version: TREE_RING_VERSION,
    harnesses: records,
  };
  let manifestOutcome: InitResult['manifest'];
  if (opts.dryRun) manifestOutcome = existing ? 'unchanged' : loaded.kind === 'invalid' ? 'needs-user-review' : 'would-create';
  else if (loaded.kind === 'invalid' || manifestBlocked) {
    manifestOutcome = 'needs-user-review';
    preserved.push(MANIFEST_REL);
  } else if (existing) {
    manifestOutcome = !wouldChangeManifest && sameManifest(existing, { ...existing, harnesses: records }) ? 'unchanged' : 'needs-user-review';
    preserved.push(MANIFEST_REL);
  } else {
    const o = root.pfs.publish(MANIFEST_REL, serializeManifest(manifest), 0o644, 0o700);
    if (o === 'exists') {
      manifestOutcome = 'needs-user-review';
      preserved.push(MANIFEST_REL);
      for (const [h, out] of outcomes) outcomes.set(h, { ...out, state: 'needs-user-review', detail: 'another activation manifest appeared during initialization', next_step: nextStep('needs-user-review', h) });
    } else {
      manifestOutcome = 'created';
      created.push(MANIFEST_REL);
      if (o === 'indeterminate') {
        for (const [h, out] of outcomes)
          outcomes.set(h, { ...out, state: 'needs-user-review', detail: 'manifest durability is indeterminate (a directory sync failed); everything published was kept', next_step: nextStep('needs-user-review', h) });
      }
    }
  }

  if (!opts.dryRun) {
    // Guidance files (.tree-ring/AGENTS.md, SKILL.md, CLI.md) belong to the store's init.
    for (const [rel, bytes, mode] of [[LAUNCHER_PATH, launcherScript(opts.nodePath, opts.cliPath), 0o755]] as const) {
      if (root.pfs.kind(rel) !== 'absent') {
        preserved.push(rel);
        continue;
      }
      if (root.pfs.publish(rel, bytes, mode, 0o755) !== 'exists') created.push(rel);
    }
  }
  return {
    root: '.tree-ring',
    dry_run: opts.dryRun,
    store_id: manifest.store_id,
    project_root_fingerprint: fingerprint,
    manifest: manifestOutcome,
    created,
    preserved,
    integrations: MAINTAINED_HARNESSES.map((h) => outcomes.get(h)!),
  };
}

// ---- activate / link / deactivate -----------------------------------------------------------------

export interface ActivateResult {
  readonly harness_id: string;
  readonly dry_run: boolean;
  readonly state: ActivationState;
  readonly changed_paths: string[];
  readonly detail?: string;
  readonly next_step: string;
  readonly receipt?: ReceiptSummary;
  /** With --accept-managed-block: the exact block to add to the project's AGENTS.md by hand. */
  readonly managed_block?: string;
}

export function requireInitialized(root: ActivationRoot): ActivationManifest {
  if (rootKind(root) === 'absent') throw localState('no .tree-ring root here; run tree-ring init first', 'NOT_INITIALIZED');
  const loaded = loadManifest(root);
  if (loaded.kind === 'absent') throw localState('.tree-ring/activation.json is missing; run tree-ring init', 'MANIFEST_MISSING');
  if (loaded.kind === 'invalid') throw localState(`.tree-ring/activation.json is invalid: ${loaded.reason}`, 'MANIFEST_INVALID');
  return loaded.manifest;
}

/** Upstream's next step for a dry-run plan of a maintained adapter (activation/adapters.rs, 0.15.x). */
export const PLAN_NEXT_STEP = 'Apply the reviewed bridge plan, then complete adapter-specific preflight and receipt verification.';
/** Upstream's next step for Agent Zero while its passive binding waits for the plugin. */
export const AGENT_ZERO_PLAN_NEXT_STEP = 'Install or enable the compatible separate tree_ring_memory Agent Zero plugin.';
/** The retry upstream names when the project's own AGENTS.md has no Tree Ring block (bridge.rs). */
export const CODEX_RETRY = 'tree-ring integrations activate --harness codex --accept-managed-block';

export interface ActivateOptions {
  readonly dryRun: boolean;
  /**
   * The user accepts Tree Ring's managed block in the project's own AGENTS.md. Publication stays
   * create-only, so the file is never edited: the result carries the exact block to add by hand.
   */
  readonly acceptManagedBlock?: boolean;
}

export function activateHarness(root: ActivationRoot, harness: MaintainedHarness, opts: ActivateOptions, env: NodeJS.ProcessEnv, now: Date): ActivateResult {
  const dryRun = opts.dryRun;
  const m = requireInitialized(root);
  const prior = m.harnesses[harness];
  // Missing owned material is planned as if absent, so compare against what init would record.
  const plan = planHarness(root, harness, m.store_id, m.project_root_fingerprint, prior);
  const review = (detail: string, next = nextStep('needs-user-review', harness)): ActivateResult => ({ harness_id: harness, dry_run: dryRun, state: 'needs-user-review', changed_paths: [], detail, next_step: next });
  if (!prior) return review('no managed activation record; adding one would mutate .tree-ring/activation.json');
  if (plan.conflicts.length > 0) {
    if (harness === 'codex' && unmanagedAgentsFile(root)) {
      if (!opts.acceptManagedBlock) return review(plan.conflicts.join('; '), `review the managed block, then run ${CODEX_RETRY}`);
      return {
        ...review(plan.conflicts.join('; '), 'publication never edits an existing file: add managed_block to AGENTS.md by hand, exactly once; the Codex record in .tree-ring/activation.json (never rewritten) then needs reconciling by hand too'),
        managed_block: agentsBlock(),
      };
    }
    return review(plan.conflicts.join('; '));
  }
  if (JSON.stringify(prior) !== JSON.stringify(plan.record)) return review(`the recorded ${ADAPTERS[harness].displayName} bridge differs from what this CLI would publish; review .tree-ring/activation.json and ${prior.bridge_path}`);
  let changed: string[] = plan.writes.map((w) => w.path);
  let detail: string | undefined;
  if (!dryRun && plan.writes.length > 0) {
    const r = publishAll(root, plan.writes);
    changed = r.created;
    if (r.raced.length > 0 || r.indeterminate) detail = r.raced.length > 0 ? `${r.raced.join(', ')} appeared during publication` : 'publication durability is indeterminate';
    if (detail) return { ...review(detail), changed_paths: changed };
  }
  const status = deriveHarnessStatus(root, m, harness, env, now, false);
  const proof = harnessProof(root, m, harness, now);
  const receipt = status.state === 'active' && proof.newest ? receiptSummary(proof.newest) : undefined;
  // Agent Zero's binding is passive: activation reports its persisted needs-plugin state even with
  // the plugin's descriptor present (upstream: tests/agent_zero_342_acceptance.rs); only the
  // plugin's own status and preflight go further.
  const state = harness === 'agent-zero' && status.state === 'configured-awaiting-proof' ? 'needs-plugin' : status.state;
  let next: string;
  if (dryRun && state !== 'active') next = harness === 'agent-zero' && status.state === 'needs-plugin' ? AGENT_ZERO_PLAN_NEXT_STEP : PLAN_NEXT_STEP;
  else if (state === 'configured-awaiting-proof') next = `open a new ${ADAPTERS[harness].displayName} session, then check tree-ring integrations status --verbose`;
  else if (harness === 'agent-zero' && status.state === 'configured-awaiting-proof') next = nextStep('configured-awaiting-proof', harness);
  else next = status.next_step;
  return {
    harness_id: harness,
    dry_run: dryRun,
    state: dryRun && changed.length > 0 ? prior.state : state,
    changed_paths: changed,
    ...(status.detail ? { detail: status.detail } : {}),
    next_step: next,
    ...(receipt ? { receipt } : {}),
  };
}

/** True when the root AGENTS.md is a regular file with no Tree Ring block: the project's own file. */
function unmanagedAgentsFile(root: ActivationRoot): boolean {
  try {
    if (root.pfs.kind('AGENTS.md') !== 'file') return false;
    return findBlock(root.pfs.read('AGENTS.md')!.toString('utf8')) === undefined;
  } catch {
    return false;
  }
}

export interface DeactivateResult {
  readonly harness_id: string;
  readonly state: ActivationState;
  readonly changed_paths: string[];
  readonly reconcile: string[];
  readonly next_step: string;
}

/** Deactivation is create-only at the writer boundary: it never removes or edits; it lists the steps. */
export function deactivateHarness(root: ActivationRoot, harness: MaintainedHarness): DeactivateResult {
  const m = requireInitialized(root);
  const rec = m.harnesses[harness];
  const reconcile: string[] = [];
  if (rec) {
    for (const f of rec.owned_files) if (root.pfs.kind(f.path) !== 'absent') reconcile.push(`remove ${f.path} (Tree Ring-owned) after reviewing it`);
    for (const b of rec.managed_blocks) reconcile.push(`remove the block between the tree-ring markers in ${b.path}`);
    reconcile.push(`remove harnesses.${harness} from .tree-ring/activation.json (never delete .tree-ring/memory.sqlite)`);
  }
  if (reconcile.length === 0) return { harness_id: harness, state: 'unsupported', changed_paths: [], reconcile, next_step: 'nothing to deactivate' };
  return { harness_id: harness, state: 'needs-user-review', changed_paths: [], reconcile, next_step: 'deactivation would remove or edit existing entries; do the listed steps by hand' };
}

