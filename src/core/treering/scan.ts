// `integrations scan`: which agent frameworks leave markers in a project (and a few in $HOME), with a
// suggested next step each (upstream tree-ring-memory-cli integrations.rs, 0.15). Read-only; a marker
// never activates anything (seed 003: a scan never makes a harness active).

import * as fs from 'node:fs';
import { formatF64 } from './model.js';

export interface IntegrationMarker {
  path: string;
  origin: 'project' | 'home';
}

export interface ScannedIntegration {
  id: string;
  name: string;
  status: 'detected' | 'available';
  confidence: number;
  markers: IntegrationMarker[];
  next_step: string;
}

export interface IntegrationScanReport {
  root: string;
  detected_count: number;
  integrations: ScannedIntegration[];
}

// [id, name, project markers, home markers, next step], in upstream's order.
const KNOWN: ReadonlyArray<readonly [string, string, readonly string[], readonly string[], string]> = [
  ['dox', 'DOX / AGENTS.md', ['AGENTS.md'], [], 'Run `tree-ring dox sync --source-root . --dry-run`, then sync when the preview looks right.'],
  ['revolve', 'Revolve', ['revolve', '.revolve'], [], 'Run `tree-ring revolve sync --source-root revolve --dry-run` to import promoted lessons, scars, and seeds.'],
  ['codex', 'Codex', ['.codex', 'AGENTS.md'], ['.codex'], 'Reference `.tree-ring/SKILL.md` and `.tree-ring/CLI.md` from project guidance.'],
  ['claude-code', 'Claude Code', ['.claude', 'CLAUDE.md'], ['.claude'], 'Reference `.tree-ring/SKILL.md` from `CLAUDE.md` or `.claude` project instructions.'],
  ['agent-zero', 'Agent Zero / A0', ['usr/plugins', 'a0', 'agent-zero', '.a0'], ['.a0'], 'Use the generated skill/CLI guidance, or bridge via an Agent Zero plugin without modifying core code.'],
  ['goose', 'Goose', ['.goose', 'goosehints'], ['.goose'], 'Add Tree Ring Memory recall and remember commands to Goose project instructions.'],
  ['opencode', 'OpenCode', ['.opencode', 'opencode.json', 'opencode.toml'], ['.opencode'], 'Reference the Tree Ring CLI from OpenCode project configuration or instructions.'],
  ['hermes', 'Hermes', ['.hermes', 'hermes.toml'], ['.hermes'], 'Reference Tree Ring Memory as a local CLI memory lifecycle layer.'],
  ['pi', 'Pi', ['.pi', 'pi.toml'], ['.pi'], 'Use the generated portable skill and CLI reference as project instructions.'],
];

/** `Path::join` as displayed: the base as given, one separator, the marker. */
function join(base: string, rel: string): string {
  return base.endsWith('/') ? `${base}${rel}` : `${base}/${rel}`;
}

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Scans `root` (as given, resolved against `cwd`) and `home` for the known markers. */
export function scanIntegrations(root: string, cwd: string, home: string | undefined): IntegrationScanReport {
  const exists = (p: string) => fs.existsSync(p.startsWith('/') ? p : join(cwd, p));
  const integrations = KNOWN.map(([id, name, project, homeMarkers, next_step]): ScannedIntegration => {
    const markers: IntegrationMarker[] = [];
    for (const m of project) if (exists(join(root, m))) markers.push({ path: join(root, m), origin: 'project' });
    if (home !== undefined) for (const m of homeMarkers) if (fs.existsSync(join(home, m))) markers.push({ path: join(home, m), origin: 'home' });
    markers.sort((a, b) => byteOrder(a.path, b.path) || byteOrder(a.origin, b.origin));
    const unique = markers.filter((m, i) => i === 0 || m.path !== markers[i - 1]!.path || m.origin !== markers[i - 1]!.origin);
    const confidence = unique.length === 0 ? 0 : Math.min(0.55 + unique.length * 0.15, 0.95);
    return { id, name, status: unique.length === 0 ? 'available' : 'detected', confidence, markers: unique, next_step };
  });
  integrations.sort((a, b) => b.confidence - a.confidence || byteOrder(a.name, b.name));
  return { root, detected_count: integrations.filter((i) => i.status === 'detected').length, integrations };
}

/** `{"ok":true,"report":…}` with upstream's field order and serde's float form. */
export function scanJson(r: IntegrationScanReport): string {
  const q = JSON.stringify;
  const items = r.integrations.map(
    (i) => `{"id":${q(i.id)},"name":${q(i.name)},"status":${q(i.status)},"confidence":${formatF64(i.confidence)},"markers":${q(i.markers)},"next_step":${q(i.next_step)}}`,
  );
  return `{"ok":true,"report":{"root":${q(r.root)},"detected_count":${r.detected_count},"integrations":[${items.join(',')}]}}`;
}

export function scanText(r: IntegrationScanReport): string {
  const lines = [`Tree Ring Memory integrations: root=${r.root} detected=${r.detected_count}`];
  for (const i of r.integrations) {
    lines.push(`${i.name} [${i.status === 'detected' ? 'Detected' : 'Available'}] confidence=${i.confidence.toFixed(2)}`);
    if (i.markers.length > 0) lines.push(`  markers: ${i.markers.map((m) => `${m.origin}:${m.path}`).join(', ')}`);
    lines.push(`  next: ${i.next_step}`);
  }
  return `${lines.join('\n')}\n`;
}
