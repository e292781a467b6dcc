// Certification evidence: the verified status of every harness, written create-only as JSON and
// Markdown. It holds states, adapter versions and receipt IDs only — no paths, prompts or content.

import { TREE_RING_VERSION } from '../../../version.js';
import { harnessProof, deriveStatus } from './status.js';
import { requireManifest, type ActivationRoot } from './root.js';
import { rfc3339Seconds } from './receipts.js';

export interface CertifyResult {
  readonly json_path: string;
  readonly markdown_path: string;
  readonly active: string[];
  readonly evidence: Record<string, unknown>;
}

export function certify(root: ActivationRoot, env: NodeJS.ProcessEnv, now: Date): CertifyResult {
  const m = requireManifest(root);
  const report = deriveStatus(root, env, now, true);
  const harnesses = report.integrations.map((h) => {
    const proof = h.state === 'active' ? harnessProof(root, m, h.harness_id, now) : undefined;
    return {
      harness_id: h.harness_id,
      state: h.state,
      ...(h.adapter_version ? { adapter_version: h.adapter_version } : {}),
      ...(m.harnesses[h.harness_id] ? { bridge_fingerprint: m.harnesses[h.harness_id]!.bridge_fingerprint } : {}),
      ...(proof?.newest ? { receipt_id: proof.newest.receipt_id, receipt_recorded_at: proof.newest.recorded_at, result_count: proof.newest.result_count, query_class: proof.newest.query_class } : {}),
    };
  });
  const evidence = {
    schema_version: 1,
    kind: 'tree-ring-activation-certification',
    generated_at: rfc3339Seconds(now),
    cli_version: TREE_RING_VERSION,
    protocol_version: m.protocol_version,
    store_id: m.store_id,
    project_root_fingerprint: m.project_root_fingerprint,
    harnesses,
  };
  const stamp = now.toISOString().replace(/[-:.]/g, '');
  const base = `.tree-ring/activation/certification/${stamp}`;
  const md = [
    '# Tree Ring activation certification',
    '',
    `Generated ${evidence.generated_at} by tree-ring ${TREE_RING_VERSION} for store \`${m.store_id}\`.`,
    '',
    '| harness | state | adapter | receipt |',
    '| --- | --- | --- | --- |',
    ...harnesses.map((h) => `| ${h.harness_id} | ${h.state} | ${'adapter_version' in h ? h.adapter_version : ''} | ${'receipt_id' in h ? `${h.receipt_id} (${h.receipt_recorded_at})` : ''} |`),
    '',
    'A receipt proves that a privacy-safe preflight ran and rendered context for a new session; it does not prove durable memory creation.',
    '',
  ].join('\n');
  root.pfs.publish(`${base}.json`, JSON.stringify(evidence, null, 2) + '\n', 0o644, 0o700);
  root.pfs.publish(`${base}.md`, md, 0o644, 0o700);
  return { json_path: `${base}.json`, markdown_path: `${base}.md`, active: harnesses.filter((h) => h.state === 'active').map((h) => h.harness_id), evidence };
}
