// The container primitive of the command collector: run one exact argv in one pinned image against a
// read-only snapshot, with no network, no privileges, a timeout and bounded output, and prove afterwards
// that the container is gone. Everything the collector later signs about isolation and cleanup comes
// from this result, so it reports what happened instead of hiding it: a timeout is data, truncation is
// data, a removal that cannot be confirmed is data (removed: false).
//
// It never pulls. The image is inspected by its full ID first; a missing image is RUNTIME_UNAVAILABLE.

import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { Writable, type Readable } from 'node:stream';
import type Docker from 'dockerode';
import { badInput } from '../core/errors.js';
import { runtimeUnavailable } from './engine-endpoint.js';
import { engineFailure, inspectPinnedImage, statusOf } from './runtime-probe.js';

/** Where the snapshot appears inside the container. Fixed, so a recipe's working directory is portable. */
export const SNAPSHOT_MOUNT = '/snapshot';

/**
 * The whole environment of the command. Nothing of the collector's own environment (tokens, DOCKER_HOST,
 * HOME) crosses into the container. The engine may still add variables of its own (podman adds
 * `container=podman` and HOSTNAME) and merges the pinned image's Env; both are fixed by the image and the
 * runtime identity, not by candidate data.
 */
export const FIXED_ENV: readonly string[] = ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'HOME=/tmp', 'LANG=C', 'LC_ALL=C', 'TZ=UTC'];

export const DEFAULT_ULIMITS = { nofile: 1024, nproc: 1024 } as const;
/** The writable scratch space a read-only root file system still needs (compilers, test runners). */
export const TMPFS = { '/tmp': 'rw,nosuid,nodev,size=67108864,mode=1777' } as const;
export const PIDS_LIMIT = 512;

export interface OciRunSpec {
  /** Full pinned image ID, sha256:<64 hex>. */
  readonly imageId: string;
  /** The exact argv: argv[0] becomes the entrypoint, the rest its arguments. No shell is added. */
  readonly argv: readonly string[];
  /** Absolute host path of the materialized snapshot, mounted read-only at SNAPSHOT_MOUNT. */
  readonly snapshotDir: string;
  /** Absolute path inside the container; defaults to SNAPSHOT_MOUNT. */
  readonly workingDir?: string;
  readonly timeoutMs: number;
  /** Bound on captured bytes, per stream. Output beyond it is drained and counted but not kept. */
  readonly maxOutputBytes: number;
  /** Container name: derive it from the attempt so that a later run can find and remove a leftover. */
  readonly name?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly ulimits?: { readonly nofile: number; readonly nproc: number };
  /**
   * Called once the container exists, before it starts (the collector checks the runtime and records the
   * id durably here); the attach proceeds meanwhile. Throwing removes the container unstarted.
   */
  readonly onCreated?: (containerId: string) => void | Promise<void>;
  /** Called when the container has been started. */
  readonly onStarted?: (containerId: string) => void;
  /** Called when the engine reports that the command ended (before its output and removal are complete). */
  readonly onExited?: () => void;
}

export interface CapturedStream {
  /** The captured bytes (at most maxOutputBytes). */
  readonly bytes: Buffer;
  /** Plain SHA-256 of the captured bytes, lowercase hex. */
  readonly sha256: string;
  /** Bytes the command wrote to the stream, captured or not. */
  readonly totalBytes: number;
  readonly truncated: boolean;
}

export interface OciRunResult {
  readonly containerId: string;
  /**
   * How long onCreated held the start back beyond the engine's own preparation (create, then attach):
   * the caller's work, not the container's run.
   */
  readonly heldMs: number;
  readonly imageId: string;
  /** The exit status the engine reported; after a timeout, the status of the killed process. */
  readonly exitCode: number;
  readonly timedOut: boolean;
  readonly oomKilled: boolean;
  readonly stdout: CapturedStream;
  readonly stderr: CapturedStream;
  /** RFC 3339 timestamps from the engine (host clock when the engine gives none). */
  readonly startedAt: string;
  readonly finishedAt: string;
  /** True only after remove succeeded and a following inspect answered 404. */
  readonly removed: boolean;
}

function validate(spec: OciRunSpec): void {
  if (spec.argv.length === 0 || spec.argv.some((a) => typeof a !== 'string' || a.includes('\0'))) {
    throw badInput('the command argv must be non-empty strings without NUL bytes', 'BAD_ARGV');
  }
  if (!path.isAbsolute(spec.snapshotDir) || spec.snapshotDir.includes(':')) {
    throw badInput('the snapshot directory must be an absolute path without ":"', 'BAD_SNAPSHOT_DIR');
  }
  const wd = spec.workingDir ?? SNAPSHOT_MOUNT;
  if (!wd.startsWith('/') || wd.split('/').some((c) => c === '..')) throw badInput('the working directory must be an absolute container path', 'BAD_WORKDIR');
  if (!Number.isSafeInteger(spec.timeoutMs) || spec.timeoutMs < 1) throw badInput('timeout must be a positive number of milliseconds', 'BAD_TIMEOUT');
  if (!Number.isSafeInteger(spec.maxOutputBytes) || spec.maxOutputBytes < 0) throw badInput('output bound must be a non-negative byte count', 'BAD_OUTPUT_BOUND');
}

/** The create body of the Docker Engine API, as far as the collector sets it. */
export interface ContainerCreateConfig {
  Image: string;
  Entrypoint: string[];
  Cmd: string[];
  WorkingDir: string;
  Env: string[];
  Labels: Record<string, string>;
  Tty: boolean;
  OpenStdin: boolean;
  StdinOnce: boolean;
  AttachStdin: boolean;
  AttachStdout: boolean;
  AttachStderr: boolean;
  NetworkDisabled: boolean;
  HostConfig: {
    NetworkMode: string;
    Binds: string[];
    ReadonlyRootfs: boolean;
    Tmpfs: Record<string, string>;
    Privileged: boolean;
    CapDrop: string[];
    SecurityOpt: string[];
    Ulimits: { Name: string; Soft: number; Hard: number }[];
    PidsLimit: number;
    AutoRemove: boolean;
    RestartPolicy: { Name: string };
  };
}

/** The container configuration, exposed so tests and the record builder can see exactly what was asked. */
export function containerConfig(spec: OciRunSpec): ContainerCreateConfig {
  const ulimits = spec.ulimits ?? DEFAULT_ULIMITS;
  return {
    Image: spec.imageId,
    Entrypoint: [spec.argv[0]!],
    Cmd: spec.argv.slice(1),
    WorkingDir: spec.workingDir ?? SNAPSHOT_MOUNT,
    Env: [...FIXED_ENV],
    Labels: { 'io.agentscm.collector': '1', ...(spec.labels ?? {}) },
    Tty: false,
    OpenStdin: false,
    StdinOnce: false,
    AttachStdin: false,
    AttachStdout: true,
    AttachStderr: true,
    NetworkDisabled: true,
    HostConfig: {
      NetworkMode: 'none',
      Binds: [`${spec.snapshotDir}:${SNAPSHOT_MOUNT}:ro`],
      ReadonlyRootfs: true,
      Tmpfs: { ...TMPFS },
      Privileged: false,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Ulimits: [
        { Name: 'nofile', Soft: ulimits.nofile, Hard: ulimits.nofile },
        { Name: 'nproc', Soft: ulimits.nproc, Hard: ulimits.nproc },
      ],
      PidsLimit: PIDS_LIMIT,
      AutoRemove: false,
      RestartPolicy: { Name: 'no' },
    },
  };
}

/**
 * Attaches to a created, not yet started container. podman under load sometimes fails this with a
 * transient 409 ("preparing container … for attach: write child: broken pipe"); since the container
 * has not started, nothing has run and attaching again is safe. A few tries, then the error stands.
 */
async function attachBeforeStart(container: Docker.Container): Promise<Readable> {
  const tries = 4;
  for (let i = 1; ; i++) {
    try {
      // Without hijack dockerode answers the HTTP response itself: a readable of the multiplexed frames.
      return (await container.attach({ stream: true, stdout: true, stderr: true })) as unknown as Readable;
    } catch (e) {
      const status = statusOf(e);
      if (i >= tries || (status !== 409 && status !== 500)) throw engineFailure('attaching to the container', e);
      await new Promise((resolve) => setTimeout(resolve, 150 * i));
    }
  }
}

/** Runs the spec. Throws only when nothing ran (bad spec, engine unreachable, image missing). */
export async function runInContainer(docker: Docker, spec: OciRunSpec): Promise<OciRunResult> {
  validate(spec);
  await inspectPinnedImage(docker, spec.imageId);

  let container: Docker.Container;
  try {
    // The configuration goes as the body only, the name as the only query parameter (docker-modem's
    // _query/_body split): by default dockerode repeats the whole configuration, argv and environment
    // included, in the URL.
    const request = { _query: spec.name !== undefined ? { name: spec.name } : {}, _body: containerConfig(spec) };
    container = await docker.createContainer(request as unknown as Docker.ContainerCreateOptions);
  } catch (e) {
    if (statusOf(e) === 404) throw runtimeUnavailable(`image ${spec.imageId} is not present in the container engine (it is never pulled)`, 'IMAGE_MISSING');
    throw engineFailure('creating the container', e);
  }
  const containerId = container.id;
  if (typeof containerId !== 'string' || containerId === '') throw runtimeUnavailable('the engine created a container without answering its id', 'ENGINE_ERROR');
  let removed = false;
  // Attaching prepares the container in the engine (tens of milliseconds with podman) and runs nothing,
  // so it proceeds while the caller's onCreated work (the runtime identity check, the durable record of
  // the container) is under way; the container starts only once both are done.
  let attachedAt = 0;
  const attaching = attachBeforeStart(container).then((s) => {
    attachedAt = performance.now();
    return s;
  });
  attaching.catch(() => undefined); // awaited below; a failure must not surface as unhandled first
  try {
    try {
      await spec.onCreated?.(containerId);
    } catch (e) {
      void attaching.then((s) => s.destroy(), () => undefined);
      throw e;
    }
    const readyAt = performance.now();
    const out = new BoundedCapture(spec.maxOutputBytes);
    const err = new BoundedCapture(spec.maxOutputBytes);
    const stream = await attaching;
    const heldMs = Math.max(0, readyAt - attachedAt);
    const streamDone = demultiplex(docker, stream, out, err);

    const hostStart = new Date().toISOString();
    try {
      await container.start();
    } catch (e) {
      throw engineFailure('starting the container', e);
    }
    spec.onStarted?.(containerId);

    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), spec.timeoutMs);
    });
    let waited: { StatusCode?: number } | 'timeout';
    try {
      waited = await Promise.race([container.wait() as Promise<{ StatusCode?: number }>, timeout]);
      if (waited === 'timeout') {
        timedOut = true;
        await container.kill({ signal: 'SIGKILL' }).catch((e: unknown) => {
          // 304/409: it stopped by itself between the timer and the kill.
          const s = statusOf(e);
          if (s !== 304 && s !== 409) throw e;
        });
        waited = (await container.wait()) as { StatusCode?: number };
      }
    } catch (e) {
      throw engineFailure('waiting for the container', e);
    } finally {
      if (timer) clearTimeout(timer);
    }
    const hostFinish = new Date().toISOString();
    spec.onExited?.();
    // The attach stream ends when the container's output closes; give it a moment, then stop reading.
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([streamDone, new Promise((r) => (grace = setTimeout(r, 5_000)))]);
    // A pending timer would keep a short-lived CLI alive for the whole grace period.
    clearTimeout(grace);
    stream.destroy();

    let state: { ExitCode?: number; StartedAt?: string; FinishedAt?: string; OOMKilled?: boolean } = {};
    try {
      state = (await container.inspect()).State ?? {};
    } catch {
      // the wait result and host clock still describe the run
    }
    const exitCode = typeof waited.StatusCode === 'number' ? waited.StatusCode : (state.ExitCode ?? -1);
    removed = await removeConfirmed(docker, containerId);
    // The engine's own times, unless it reports them out of order (podman can, for a command that ends
    // within the same instant it starts); then the host clock's pair, taken around start and wait.
    let startedAt = engineTime(state.StartedAt) ?? hostStart;
    let finishedAt = engineTime(state.FinishedAt) ?? hostFinish;
    if (!(Date.parse(finishedAt) >= Date.parse(startedAt))) [startedAt, finishedAt] = [hostStart, hostFinish];
    return {
      containerId,
      heldMs,
      imageId: spec.imageId,
      exitCode,
      timedOut,
      oomKilled: state.OOMKilled === true,
      stdout: out.result(),
      stderr: err.result(),
      startedAt,
      finishedAt,
      removed,
    };
  } finally {
    if (!removed) await removeConfirmed(docker, containerId).catch(() => false);
  }
}

/**
 * Force-removes a container (and its anonymous volumes) and confirms it is gone: true only when the
 * following inspect answers 404. Also the way to clean up a leftover found by name after a crash.
 */
export async function removeConfirmed(docker: Docker, idOrName: string): Promise<boolean> {
  const container = docker.getContainer(idOrName);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await container.remove({ force: true, v: true });
    } catch (e) {
      if (statusOf(e) !== 404) {
        await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
      }
    }
    try {
      await container.inspect();
    } catch (e) {
      if (statusOf(e) === 404) return true;
    }
  }
  return false;
}

/** True when a container of that id or name exists (any state). */
export async function containerExists(docker: Docker, idOrName: string): Promise<boolean> {
  try {
    await docker.getContainer(idOrName).inspect();
    return true;
  } catch (e) {
    if (statusOf(e) === 404) return false;
    throw engineFailure('inspecting the container', e);
  }
}

function engineTime(t: string | undefined): string | undefined {
  if (t === undefined || t === '' || t.startsWith('0001-01-01')) return undefined;
  return t;
}

/** Keeps the first `limit` bytes of a stream, counts the rest. */
export class BoundedCapture {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private total = 0;
  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const room = this.limit - this.kept;
    if (room <= 0) return;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(Buffer.from(part));
    this.kept += part.length;
  }

  result(): CapturedStream {
    const bytes = Buffer.concat(this.chunks, this.kept);
    return { bytes, sha256: createHash('sha256').update(bytes).digest('hex'), totalBytes: this.total, truncated: this.total > this.kept };
  }
}

/** A writable that hands every chunk to a capture: the bound is enforced as the bytes arrive. */
function captureSink(capture: BoundedCapture): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      capture.push(chunk);
      done();
    },
  });
}

/**
 * Splits Docker's multiplexed attach or logs stream (frames of: 1 byte stream type, 3 zero bytes, u32
 * big-endian length, payload) into stdout and stderr with dockerode's demuxStream, each into its bounded
 * capture. Resolves when the stream ends or closes.
 */
export function demultiplex(docker: Docker, stream: NodeJS.ReadableStream, stdout: BoundedCapture, stderr: BoundedCapture): Promise<void> {
  return new Promise<void>((resolve) => {
    stream.once('end', () => resolve());
    stream.once('close', () => resolve());
    stream.once('error', () => resolve());
    docker.modem.demuxStream(stream, captureSink(stdout), captureSink(stderr));
  });
}
