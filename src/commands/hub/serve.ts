// `hub serve`: the Hub's own entry point, and the only command that imports src/hub.

import * as tls from 'node:tls';
import { startHub } from '../../hub/server.js';
import { readHubConfig } from '../../hub/config.js';
import type { TlsIdentity } from '../../hub/http.js';
import { badInput, usageError } from '../../core/errors.js';
import { readBoundedInput } from '../../core/fs/safe.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { optionalStringOpt } from '../options.js';

export function parseListen(s: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(s);
  if (!m || Number(m[2]) > 65535) throw usageError('--listen must be HOST:PORT (e.g. 127.0.0.1:0)');
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}

const PEM_MAX_BYTES = 1024 * 1024;

/** The certificate and key of --tls-cert and --tls-key (both or neither), checked to be a matching PEM pair. */
export function tlsIdentity(certFile: string | undefined, keyFile: string | undefined): TlsIdentity | undefined {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined) throw usageError('--tls-cert and --tls-key go together');
  const cert = readBoundedInput(certFile, PEM_MAX_BYTES, 'TLS certificate');
  const key = readBoundedInput(keyFile, PEM_MAX_BYTES, 'TLS key');
  try {
    tls.createSecureContext({ cert, key });
  } catch (e) {
    const why = e instanceof Error ? e.message : 'unreadable';
    throw badInput(`--tls-cert and --tls-key must be a PEM certificate and its private key (${why})`, 'BAD_TLS_IDENTITY');
  }
  return { cert, key };
}

export async function run(ctx: CommandContext, inv: Invocation): Promise<CommandResult> {
  const { host, port } = parseListen(optionalStringOpt(inv, 'listen') ?? '127.0.0.1:8421');
  const identity = tlsIdentity(optionalStringOpt(inv, 'tls-cert'), optionalStringOpt(inv, 'tls-key'));
  const dataDir = optionalStringOpt(inv, 'data-dir');
  const configFile = optionalStringOpt(inv, 'config');
  if ((dataDir === undefined) === (configFile === undefined)) throw usageError('give exactly one of --data-dir DIR and --config FILE');
  const source = configFile !== undefined ? { config: readHubConfig(configFile) } : { dataDir: dataDir! };
  const line = (l: string) => ctx.stderr.write(l + '\n');
  // Access-log lines are gathered and written once per turn of the event loop: one write for a burst.
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const out = pending.join('\n') + '\n';
    pending = [];
    ctx.stderr.write(out);
  };
  const access = (l: string) => {
    if (pending.push(l) === 1) setImmediate(flush);
  };
  let hub: Awaited<ReturnType<typeof startHub>>;
  try {
    hub = await startHub({ ...source, host, port, ...(identity ? { tls: identity } : {}), log: line, accessLog: access });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
      throw badInput(`cannot listen on ${host}:${port} (${code})`, 'LISTEN_FAILED');
    }
    throw e;
  }
  // The bound URL is the first stdout line, so `--listen 127.0.0.1:0` works in scripts.
  ctx.stdout.write(hub.url + '\n');
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      void hub.close().then(() => {
        flush();
        resolve();
      });
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  return { raw: '' };
}
