// `npm run demo`: the main job end to end through the real CLI, against a real Hub on loopback and a
// real container engine. It starts `podman system service` itself when podman is installed and no engine
// answers; with no engine it stops with one line saying what to install.

import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startPodmanServiceIfNeeded, type StartedService } from '../src/collectors/engine.js';
import { AgentscmError } from '../src/core/errors.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin', 'agentscm.js');
const REPO = 'acme/demo';
const PROFILE = 'default';

function say(text: string): void {
  process.stdout.write(`\n# ${text}\n`);
}

let childEnv: NodeJS.ProcessEnv = { ...process.env };

/** Runs `agentscm args`, echoes the command line and its output, and checks the exit code. */
function agentscm(args: string[], expectExit = 0, show: (stdout: string) => string = (o) => o): string {
  const shown = args.map((a) => (/^[0-9a-f]{64,}$/.test(a) ? `${a.slice(0, 12)}…` : a.startsWith(work) ? `$DEMO${a.slice(work.length)}` : a)).join(' ');
  process.stdout.write(`$ agentscm ${shown}\n`);
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', cwd: ROOT, env: childEnv });
  process.stdout.write(show(r.stdout));
  if (r.stderr) process.stdout.write(r.stderr.replaceAll(work, '$DEMO'));
  if (r.status !== expectExit) throw new Error(`expected exit ${expectExit}, got ${r.status}`);
  process.stdout.write(`(exit ${r.status})\n`);
  return r.stdout;
}

function startHub(dataDir: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [BIN, 'hub', 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`the Hub exited early (${code})`)));
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const nl = out.indexOf('\n');
      if (nl === -1) return;
      child.removeAllListeners('exit');
      resolve({
        url: out.slice(0, nl),
        stop: () =>
          new Promise<void>((res) => {
            if (child.exitCode !== null) return res();
            child.once('exit', () => res());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

const pick = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>;
const work = mkdtempSync(path.join(os.tmpdir(), 'agentscm-demo-'));

async function main(): Promise<number> {
  let engine: StartedService;
  try {
    engine = await startPodmanServiceIfNeeded({ env: process.env });
  } catch (e) {
    if (e instanceof AgentscmError && e.kind === 'RUNTIME_UNAVAILABLE') {
      process.stderr.write(`agentscm demo: ${e.message}\n`);
      return 12;
    }
    throw e;
  }
  childEnv = { ...process.env, DOCKER_HOST: engine.endpoint.url };
  let hub: { url: string; stop: () => Promise<void> } | undefined;
  // Interrupted (Ctrl-C, a supervisor's SIGTERM): the Hub and the podman service this demo started go
  // with it, then it exits as a signalled process would.
  const onSignal = (signal: NodeJS.Signals) => {
    void Promise.resolve(hub?.stop())
      .catch(() => {})
      .then(() => engine.stop())
      .finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const data = path.join(work, 'data');
    const keyDir = path.join(work, 'collector-key');
    const tokenFile = path.join(work, 'token');
    const ws = path.join(work, 'workspace');
    cpSync(path.join(ROOT, 'examples', 'workspace'), ws, { recursive: true });

    say(`Container engine: ${engine.endpoint.url}${engine.owned ? ' (podman system service, started for this demo)' : ''}. Build a local test image from busybox (never pulled).`);
    const image = agentscm(['agent-task', 'test-image']).trim();

    say('1. Operator: a data dir, the example profile (examples/requirement.json) and a workspace token.');
    agentscm(['authority', 'init', '--data-dir', data, '--json'], 0, () => '');
    agentscm(['authority', 'profile', 'add', '--data-dir', data, '--repository', REPO, '--profile', PROFILE, '--target', 'main', '--requirement', 'examples/requirement.json']);
    agentscm(['authority', 'token', 'issue', '--data-dir', data, '--owner', 'alice', '--agent', 'claude', '--out', tokenFile]);

    say('2. Start the Hub on loopback.');
    hub = await startHub(data);
    process.stdout.write(`hub ${hub.url}\n`);
    const call = ['--data-dir', data, '--endpoint', hub.url, '--repository', REPO, '--profile', PROFILE, '--token-file', tokenFile];

    say('3. Collector host: make a signing key; the operator enrolls its public key for step "check" only.');
    const key = pick(agentscm(['agent-task', 'key', 'generate', '--key-dir', keyDir, '--json']));
    const reg = pick(
      agentscm(['authority', 'enroll', '--data-dir', data, '--repository', REPO, '--profile', PROFILE, '--step', 'check', '--executor-id', 'collector-1', '--public-key', String(key.public_key), '--yes', '--json']),
    );

    say('4. Observe the runtime, write the collector profile from the probe and the recipe, and install it: the exact recipe and runtime identity for this registration epoch.');
    const probe = pick(agentscm(['agent-task', 'runtime-probe', '--image', image, '--json'], 0, (o) => `runtime_identity_digest: ${String(pick(o).runtime_identity_digest)}\n`));
    const probeFile = path.join(work, 'probe.json');
    writeFileSync(probeFile, JSON.stringify(probe));
    const profileFile = path.join(work, 'collector-profile.json');
    agentscm(['authority', 'collector-profile', 'template', '--data-dir', data, '--registration-id', String(reg.registration_id), '--probe', probeFile, '--out', profileFile, '--', 'sh', 'check.sh']);
    agentscm(['authority', 'collector-profile', 'install', '--data-dir', data, '--file', profileFile]);

    const round = (change: string, expectQualified: boolean) => {
      agentscm(['checkpoint', change, '--data-dir', data, '--repository', REPO, '--profile', PROFILE, '--workspace', ws, '--json'], 0, (o) => `revision: ${String((pick(o).subject as Record<string, unknown> | undefined)?.revision ?? pick(o).revision)}\n`);
      const claim = pick(agentscm(['agent-task', 'collector-claim', change, ...call, '--step', 'check', '--lease-ms', '600000', '--executor-id', 'collector-1', '--json'], 0, (o) => {
        const a = pick(o);
        const d = a.descriptor as Record<string, unknown>;
        return `attempt ${String((a.attempt as Record<string, unknown>).attempt_id)} fence ${String((a.attempt as Record<string, unknown>).fence)}; descriptor from the installed profile: ${JSON.stringify((d.recipe as Record<string, unknown>).argv)} in ${String((d.recipe as Record<string, unknown>).image_id).slice(0, 19)}…\n`;
      }));
      const att = claim.attempt as Record<string, unknown>;
      agentscm(['agent-task', 'collect', change, ...call, '--task-id', String(att.task_id), '--attempt-id', String(att.attempt_id), '--key-dir', keyDir]);
      // The failed check's retained record, readably: exit code and the end of its output.
      if (!expectQualified) agentscm(['agent-task', 'transfer', 'show', '--attempt-id', String(att.attempt_id), '--key-dir', keyDir]);
      if (expectQualified) {
        agentscm(['agent-task', 'qualification', change, ...call], 8, (o) => o.split('\n').filter((l) => /^(qualified|next)/.test(l)).join('\n') + '\n');
        agentscm(['agent-task', 'collector-finalize', change, ...call]);
      }
      agentscm(['agent-task', 'qualification', change, ...call], expectQualified ? 0 : 8, (o) => o.split('\n').filter((l) => /^(qualified|subject_current|revision|receipt_digest|failures|next|why)/.test(l)).join('\n') + '\n');
    };

    say('5. Checkpoint the workspace, claim the check, collect it in a container, finalize: the Hub says qualified: true.');
    round('c1', true);

    say('6. Break the check (greet now says "goodbye"), checkpoint again: a new subject. collect still exits 0 and uploads the typed failed record; qualified: false.');
    writeFileSync(path.join(ws, 'greet.sh'), readFileSync(path.join(ws, 'greet.sh'), 'utf8').replace('hello, %s', 'goodbye, %s'));
    round('c1', false);

    say('Done: the pinned check ran on the exact snapshot; the Hub, not the agent, decided qualification.');
    return 0;
  } finally {
    await hub?.stop();
    await engine.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`agentscm demo failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
