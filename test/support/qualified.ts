// A subject made qualified the only honest way: the real collector flow (enrolled key, installed
// collector profile, real container engine, collector-claim, collect, collector-finalize) produces a v2
// receipt. It drives the collector's own test rig (test/support/collector.ts), loaded at run time so
// that this file builds before the collector exists; tests skip until `collectorReady()`.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '../../src/entries/cli.js';
import { agentscm, type RunResult } from './cli.js';
import { PROFILE, REPO } from './hub.js';

const RIG_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'collector.js');

export function collectorReady(): boolean {
  const cmds = ['agent-task collect', 'agent-task collector-claim', 'agent-task collector-finalize'];
  return cmds.every((p) => COMMANDS.some((c) => c.path.join(' ') === p)) && fs.existsSync(RIG_FILE);
}

export const COLLECTOR_SKIP =
  process.env.AGENTSCM_NO_ENGINE === '1'
    ? 'no container engine (run-tests found none; see its advice line)'
    : collectorReady()
      ? false
      : 'needs the collector (agent-task collect, collector-finalize and its test rig): not on this branch yet';

export interface QualifiedRig {
  root: string;
  dataDir: string;
  workspace: string;
  tokenFile: string;
  hub: { url: string };
  stop(): Promise<void>;
}

interface RigModule {
  collectorRig(): Promise<QualifiedRig>;
  ok(r: RunResult, what: string): Record<string, unknown>;
  checkpoint(rig: QualifiedRig, change: string): Record<string, unknown>;
  claim(rig: QualifiedRig, change: string): unknown;
  collect(rig: QualifiedRig, change: string, c: unknown): RunResult;
  finalize(rig: QualifiedRig, change: string): RunResult;
  qualification(rig: QualifiedRig, change: string): { code: number; doc: Record<string, unknown> };
}

/**
 * A rig whose Change c1 is qualified at the workspace's current bytes. `beforeCheckpoint` runs first
 * (e.g. install-stop, whose host config becomes part of the checkpointed files).
 */
export async function qualifiedRig(beforeCheckpoint: (rig: QualifiedRig) => void = () => {}): Promise<QualifiedRig> {
  const mod = (await import(RIG_FILE)) as RigModule;
  const rig = await mod.collectorRig();
  rig.workspace = fs.realpathSync(rig.workspace);
  beforeCheckpoint(rig);
  mod.checkpoint(rig, 'c1');
  const c = mod.claim(rig, 'c1');
  mod.ok(mod.collect(rig, 'c1', c), 'collect');
  mod.ok(mod.finalize(rig, 'c1'), 'collector-finalize');
  const q = mod.qualification(rig, 'c1');
  if (q.doc.qualified !== true) throw new Error(`the collector flow did not qualify the subject: ${JSON.stringify(q.doc)}`);
  return rig;
}

export function installStop(rig: QualifiedRig, host: 'claude-code' | 'codex'): void {
  const r = agentscm([
    'install-stop', 'c1', '--host', host, '--project', rig.workspace, '--data-dir', rig.dataDir, '--endpoint', rig.hub.url,
    '--repository', REPO, '--profile', PROFILE, '--token-file', rig.tokenFile,
  ]);
  if (r.code !== 0) throw new Error(`install-stop failed: ${r.stderr}`);
}
