// A small local image for demos and tests: the host's static busybox imported as a root file system
// with the engine's import call (never pulled), cached under a fixed tag so repeated runs reuse it.

import * as fs from 'node:fs';
import type Docker from 'dockerode';
import { runtimeUnavailable } from './engine-endpoint.js';

export const TEST_IMAGE_REPO = 'localhost/agentscm-test-busybox';

/** The demo's image: the same busybox root file system. */
export function ensureBusyboxImage(docker: Docker): Promise<string> {
  return ensureTestImage(docker);
}
const IMAGE_LAYOUT_VERSION = '1';
/** The tag of the plain (no variant) test image. */
export const TEST_IMAGE_TAG = IMAGE_LAYOUT_VERSION;
const BUSYBOX_CANDIDATES = ['/bin/busybox', '/usr/bin/busybox'];
const APPLETS = [
  'sh', 'ls', 'cat', 'echo', 'sleep', 'touch', 'id', 'env', 'pwd', 'wc', 'head', 'tail', 'yes', 'dd', 'mkdir', 'rm', 'true',
  'false', 'test', '[', 'grep', 'sed', 'ip', 'ifconfig', 'nc', 'wget', 'sha256sum', 'printf', 'seq', 'find', 'stat', 'kill',
];

const images = new Map<string, Promise<string>>();

/**
 * The ID (sha256:...) of a busybox test image, built once and cached under TEST_IMAGE_REPO:1 (or
 * :1-<variant>). A variant adds one marker file, so it is a different image with the same tools.
 */
export function ensureTestImage(docker: Docker, variant?: string): Promise<string> {
  const tag = variant ? `${IMAGE_LAYOUT_VERSION}-${variant}` : IMAGE_LAYOUT_VERSION;
  let p = images.get(tag);
  if (!p) {
    p = buildImage(docker, tag, variant);
    images.set(tag, p);
  }
  return p;
}

async function buildImage(docker: Docker, tag: string, variant: string | undefined): Promise<string> {
  const ref = `${TEST_IMAGE_REPO}:${tag}`;
  try {
    const info = await docker.getImage(ref).inspect();
    return info.Id;
  } catch {
    // not built yet
  }
  const busybox = BUSYBOX_CANDIDATES.find((p) => fs.existsSync(p));
  if (!busybox) throw runtimeUnavailable('no static busybox on this host to build the local image from (Debian: apt-get install busybox-static)', 'NO_BUSYBOX');
  const tar = new TarWriter();
  for (const d of ['bin', 'dev', 'etc', 'proc', 'run', 'snapshot', 'sys', 'tmp', 'var', 'var/tmp']) tar.dir(d, d === 'tmp' || d === 'var/tmp' ? 0o1777 : 0o755);
  tar.file('bin/busybox', fs.readFileSync(busybox), 0o755);
  for (const a of APPLETS) tar.symlink(`bin/${a}`, 'busybox');
  tar.file('etc/passwd', Buffer.from('root:x:0:0:root:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n'), 0o644);
  tar.file('etc/group', Buffer.from('root:x:0:\nnogroup:x:65534:\n'), 0o644);
  if (variant) tar.file('etc/agentscm-variant', Buffer.from(`${variant}\n`), 0o644);
  const body = tar.finish();

  // podman ignores the separate `tag` parameter of the import call but honours repo:tag; Docker takes both.
  const stream = await docker.importImage(body as unknown as NodeJS.ReadableStream, { repo: ref, tag } as object);
  const text = await readAll(stream);
  const ids = [...text.matchAll(/sha256:[0-9a-f]{64}/g)].map((m) => m[0]);
  const info = await docker.getImage(ref).inspect();
  if (ids.length > 0 && !ids.includes(info.Id)) throw new Error(`imported image ${ids[0]} but ${ref} is ${info.Id}`);
  return info.Id;
}

function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
    stream.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.once('error', reject);
  });
}

/** A minimal deterministic ustar writer: fixed owner, mode and mtime 0, entries in the order given. */
class TarWriter {
  private readonly parts: Buffer[] = [];

  dir(name: string, mode: number): void {
    this.entry(name.endsWith('/') ? name : `${name}/`, '5', mode, Buffer.alloc(0), '');
  }
  file(name: string, data: Buffer, mode: number): void {
    this.entry(name, '0', mode, data, '');
  }
  symlink(name: string, target: string): void {
    this.entry(name, '2', 0o777, Buffer.alloc(0), target);
  }
  finish(): Buffer {
    return Buffer.concat([...this.parts, Buffer.alloc(1024)]);
  }

  private entry(name: string, type: string, mode: number, data: Buffer, link: string): void {
    if (Buffer.byteLength(name) > 100 || Buffer.byteLength(link) > 100) throw new Error(`tar name too long: ${name}`);
    const h = Buffer.alloc(512);
    h.write(name, 0, 'utf8');
    h.write(octal(mode, 8), 100, 'ascii');
    h.write(octal(0, 8), 108, 'ascii');
    h.write(octal(0, 8), 116, 'ascii');
    h.write(octal(data.length, 12), 124, 'ascii');
    h.write(octal(0, 12), 136, 'ascii');
    h.fill(0x20, 148, 156);
    h.write(type, 156, 'ascii');
    h.write(link, 157, 'utf8');
    h.write('ustar\u000000', 257, 'binary');
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 'binary');
    this.parts.push(h, data);
    const pad = (512 - (data.length % 512)) % 512;
    if (pad) this.parts.push(Buffer.alloc(pad));
  }
}

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, '0')}\u0000`;
}
