// Status derivation: from the manifest, the installed owned material, receipts and (for Agent Zero)
// the plugin descriptor, each harness gets exactly one state of the protocol table and a next step.
// Reading only: status never creates .tree-ring or anything in it.

import * as fs from 'node:fs';
import {
  ADAPTERS,
  MAINTAINED_HARNESSES,
  UNSUPPORTED_HARNESSES,
  UNSUPPORTED_NAMES,
  type ActivationState,
  type MaintainedHarness,
  type QueryClass,
} from './constants.js';
import { checkAgentZeroDescriptor } from './agent-zero.js';
import { checkInstalledMaterial } from './bridges.js';
import type { ActivationManifest } from './manifest.js';
import { listReceipts, newestFirst, verifyReceipt, type Receipt } from './receipts.js';
import { loadManifest, rootKind, type ActivationRoot } from './root.js';

export interface HarnessStatus {
  /** Upstream's key for the adapter id (IntegrationStatusEntry.id); harness_id says the same. */
  readonly id: string;
  readonly harness_id: string;
  readonly name: string;
  readonly state: ActivationState;
  readonly capability?: string;
  readonly adapter_version?: string;
  readonly bridge_path?: string;
  readonly detail?: string;
  readonly next_step: string;
  readonly last_recall_result_count?: number;
  readonly last_recall_query_class?: QueryClass;
}

export interface StatusReport {
  readonly root: string;
  readonly initialized: boolean;
  readonly store_id?: string;
  /** One row per harness, under upstream's key (IntegrationStatusActionReport.integrations). */
  readonly integrations: readonly HarnessStatus[];
}

export function nextStep(state: ActivationState, harness: string): string {
  const name = (ADAPTERS as Record<string, { displayName: string }>)[harness]?.displayName ?? harness;
  switch (state) {
    case 'active':
      // Upstream's text (tests/activation_outcome_acceptance.rs, 0.15.12): clients look for it.
      return `No action required: new ${name} sessions receive scoped project memory`;
    case 'configured-awaiting-proof':
      return harness === 'agent-zero'
        ? 'start a new Agent Zero session in this project; the tree_ring_memory plugin runs preflight'
        : `open a new ${name} session in this project, then run tree-ring integrations status --verbose`;
    case 'active-isolated':
      return `point ${name} at this project's .tree-ring store to share memory`;
    case 'needs-trust':
      return `approve this project in ${name} (trust is your decision), then start a new ${name} session`;
    case 'needs-project-mount':
      return `make the project root and its .tree-ring reachable from ${name}`;
    case 'needs-plugin':
      return 'install and enable the separate tree_ring_memory Agent Zero plugin (a release paired with this CLI); it checks status and runs preflight itself';
    case 'needs-user-review':
      return 'review the named file and reconcile it by hand; Tree Ring never replaces or removes an existing entry';
    case 'unsupported':
      return 'no maintained adapter; use tree-ring recall and tree-ring remember explicitly';
    case 'failed':
      return 'repair the reported problem, then run tree-ring integrations status again';
  }
}

/** Upstream's Pi markers (activation/adapters.rs): a `.pi` directory or a `pi.toml` in the project root. */
export const PI_MARKERS = ['.pi', 'pi.toml'] as const;

export const PI_NOT_DETECTED_STEP = 'to use Pi, create .pi before tree-ring init first creates the activation manifest (an existing manifest is never rewritten)';

export function piDetected(root: ActivationRoot): boolean {
  return PI_MARKERS.some((m) => {
    try {
      return root.pfs.kind(m) !== 'absent';
    } catch {
      return true;
    }
  });
}

export interface Proof {
  readonly fingerprint: string | undefined;
  readonly materialProblem?: { problem: 'missing' | 'changed' | 'unsafe'; detail: string };
  readonly newest?: Receipt;
  readonly isolated?: boolean;
}

/** Verifies installed material and finds the newest receipt passing all eight rules. */
export function harnessProof(root: ActivationRoot, m: ActivationManifest, harness: string, now: Date): Proof {
  const rec = m.harnesses[harness];
  if (!rec) return { fingerprint: undefined };
  const material = checkInstalledMaterial(root.pfs, harness, rec);
  const fingerprint = material.ok ? material.fingerprint : undefined;
  const candidates = listReceipts(root.pfs, harness)
    .map((f) => f.receipt)
    .filter((r): r is Receipt => r !== undefined && r.harness_id === harness)
    .sort(newestFirst);
  let isolatedReceipt: Receipt | undefined;
  for (const r of candidates) {
    const v = verifyReceipt(r, m, harness, fingerprint, now);
    if (v.ok && !v.isolated) return material.ok ? { fingerprint, newest: r } : { fingerprint, materialProblem: material, newest: r };
    if (v.ok && v.isolated && !isolatedReceipt) isolatedReceipt = r;
  }
  const base = material.ok ? { fingerprint } : { fingerprint, materialProblem: { problem: material.problem, detail: material.detail } };
  return isolatedReceipt ? { ...base, newest: isolatedReceipt, isolated: true } : base;
}

function row(harness: string, name: string, state: ActivationState, extra: Partial<HarnessStatus> = {}): HarnessStatus {
  return { id: harness, harness_id: harness, name, state, ...extra, next_step: extra.next_step ?? nextStep(state, harness) };
}

export function deriveHarnessStatus(root: ActivationRoot, m: ActivationManifest, harness: MaintainedHarness, env: NodeJS.ProcessEnv, now: Date, verbose: boolean): HarnessStatus {
  const a = ADAPTERS[harness];
  const rec = m.harnesses[harness];
  const base = { capability: a.capability, adapter_version: a.adapterVersion } as Partial<HarnessStatus>;
  if (!rec) {
    // Pi is detected only by its project marker (as upstream's adapter registry does); a project
    // without one gets no Pi bridge, so there is nothing to review.
    if (harness === 'pi' && !piDetected(root))
      return row(harness, a.displayName, 'unsupported', { ...base, detail: 'Pi is not detected in this project (no .pi or pi.toml)', next_step: PI_NOT_DETECTED_STEP });
    return row(harness, a.displayName, 'needs-user-review', { ...base, detail: 'no managed activation record in .tree-ring/activation.json' });
  }
  const withBridge = { ...base, bridge_path: rec.bridge_path };
  if (rec.adapter_version !== a.adapterVersion)
    return row(harness, a.displayName, 'needs-user-review', { ...withBridge, detail: `managed definitions are adapter version ${rec.adapter_version}; this CLI maintains version ${a.adapterVersion}` });
  if (rec.state === 'needs-user-review') return row(harness, a.displayName, 'needs-user-review', { ...withBridge, detail: 'initialization could not publish this bridge without replacing an existing entry' });
  if (harness === 'agent-zero' && rec.state !== 'needs-plugin')
    return row(harness, a.displayName, 'needs-user-review', { ...withBridge, detail: 'the Agent Zero record is not the passive needs-plugin binding' });
  const proof = harnessProof(root, m, harness, now);
  if (proof.materialProblem) {
    const st: ActivationState = proof.materialProblem.problem === 'unsafe' ? 'failed' : 'needs-user-review';
    const step = proof.materialProblem.problem === 'missing' ? `run tree-ring integrations activate --harness ${harness} to re-create missing owned material` : undefined;
    return row(harness, a.displayName, st, { ...withBridge, detail: proof.materialProblem.detail, ...(step ? { next_step: step } : {}) });
  }
  const verboseFields = (r: Receipt | undefined) => (verbose && r ? { last_recall_result_count: r.result_count, last_recall_query_class: r.query_class } : {});
  if (harness === 'agent-zero') {
    const d = checkAgentZeroDescriptor(env, root.realProjectRoot);
    if (!d.ok) return row(harness, a.displayName, 'needs-plugin', { ...withBridge, detail: d.reason });
  }
  if (proof.newest && !proof.isolated) return row(harness, a.displayName, 'active', { ...withBridge, ...verboseFields(proof.newest) });
  if (proof.newest && proof.isolated) return row(harness, a.displayName, 'active-isolated', { ...withBridge, ...verboseFields(proof.newest) });
  if (harness === 'pi') return row(harness, a.displayName, 'needs-trust', withBridge);
  return row(harness, a.displayName, 'configured-awaiting-proof', withBridge);
}

export function deriveStatus(root: ActivationRoot, env: NodeJS.ProcessEnv, now: Date, verbose: boolean): StatusReport {
  const unsupported = UNSUPPORTED_HARNESSES.map((h) => row(h, UNSUPPORTED_NAMES[h], 'unsupported', { capability: 'guidance-only' }));
  let projectReachable = true;
  try {
    projectReachable = fs.statSync(root.projectRoot).isDirectory();
  } catch {
    projectReachable = false;
  }
  if (!projectReachable) {
    return {
      root: '.tree-ring',
      initialized: false,
      integrations: [...MAINTAINED_HARNESSES.map((h) => row(h, ADAPTERS[h].displayName, 'needs-project-mount', { detail: 'the project root is not reachable' })), ...unsupported],
    };
  }
  // Never initialised: the project root is reachable (so not needs-project-mount, Agent Zero included)
  // and no bridge or manifest exists to review (so not needs-user-review); detection has a concrete
  // diagnostic, which the protocol calls failed.
  if (rootKind(root) === 'absent') {
    return {
      root: '.tree-ring',
      initialized: false,
      integrations: [
        ...MAINTAINED_HARNESSES.map((h) => row(h, ADAPTERS[h].displayName, 'failed', { detail: 'no .tree-ring root in this project', next_step: 'run tree-ring init in the project root' })),
        ...unsupported,
      ],
    };
  }
  const loaded = loadManifest(root);
  if (loaded.kind !== 'ok') {
    const detail = loaded.kind === 'absent' ? '.tree-ring/activation.json is missing' : `.tree-ring/activation.json is invalid: ${loaded.reason}`;
    const state: ActivationState = loaded.kind === 'absent' ? 'failed' : 'needs-user-review';
    return {
      root: '.tree-ring',
      initialized: false,
      integrations: [...MAINTAINED_HARNESSES.map((h) => row(h, ADAPTERS[h].displayName, state, { detail, ...(loaded.kind === 'absent' ? { next_step: 'run tree-ring init' } : {}) })), ...unsupported],
    };
  }
  const m = loaded.manifest;
  return {
    root: '.tree-ring',
    initialized: true,
    store_id: m.store_id,
    integrations: [...MAINTAINED_HARNESSES.map((h) => deriveHarnessStatus(root, m, h, env, now, verbose)), ...unsupported],
  };
}
