// `hub serve`: the Hub's own entry point, and the only command that imports src/hub.

import * as tls from 'node:tls';
import { startHub } from '../../hub/server.js';
import { readHubConfig } from '../../hub/config.js';
import type { TlsIdentity } from '../../hub/http.js';
import { receiptKey, type ReceiptKey } from '../../hub/signing.js';
import { loadKey } from '../../core/crypto/keystore.js';
import { publishHubKey } from '../../core/crypto/hub-key.js';
import { FORGE_DEFAULTS, type ForgeOptions } from '../../hub/forge.js';
import { badInput, usageError } from '../../core/errors.js';
import { readBoundedInput, readPrivateFile, requireAbsolute } from '../../core/fs/safe.js';
import type { CommandContext, CommandResult, Invocation } from '../../cli/types.js';
import { intOpt, stringOpt, optionalStringOpt } from '../options.js';

const FORGE_API = { github: 'https://api.github.com', gitlab: 'https://gitlab.com/api/v4' } as const;

/** --forge, --forge-api, --forge-token-file and the timing options, or undefined without --forge. */
export function forgeOptions(inv: Invocation): ForgeOptions | undefined {
  const kind = optionalStringOpt(inv, 'forge');
  if (kind === undefined) {
    if (optionalStringOpt(inv, 'forge-token-file') !== undefined || optionalStringOpt(inv, 'forge-api') !== undefined) throw usageError('--forge-api and --forge-token-file need --forge');
    return undefined;
  }
  if (kind !== 'github' && kind !== 'gitlab') throw usageError('--forge must be github or gitlab');
  const api = optionalStringOpt(inv, 'forge-api') ?? FORGE_API[kind];
  let u: URL;
  try {
    u = new URL(api);
  } catch {
    throw badInput('--forge-api must be an http(s) URL', 'BAD_ENDPOINT');
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw badInput('--forge-api must be an http(s) URL', 'BAD_ENDPOINT');
  const tokenFile = requireAbsolute(stringOpt(inv, 'forge-token-file'), '--forge-token-file');
  const token = readPrivateFile(tokenFile, 'forge token file', 64 * 1024).toString('utf8').trim();
  if (token === '' || /[\s]/.test(token)) throw badInput('the forge token file must hold one token', 'BAD_TOKEN_FILE');
  return {
    kind,
    api,
    token,
    pollMs: intOpt(inv, 'forge-poll-ms', 10, 3_600_000) ?? FORGE_DEFAULTS.pollMs,
    retryMs: intOpt(inv, 'forge-retry-ms', 1, 600_000) ?? FORGE_DEFAULTS.retryMs,
    maxAttempts: intOpt(inv, 'forge-max-attempts', 1, 100) ?? FORGE_DEFAULTS.maxAttempts,
  };
}

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
  // The receipt key signs qualification answers and receipt bundles; its public key is recorded in each
  // served data dir for install-stop to pin.
  const keyDir = optionalStringOpt(inv, 'receipt-key-dir');
  const key: ReceiptKey | undefined = keyDir !== undefined ? receiptKey(loadKey(keyDir)) : undefined;
  const forge = forgeOptions(inv);
  let hub: Awaited<ReturnType<typeof startHub>>;
  try {
    hub = await startHub({ ...source, host, port, ...(identity ? { tls: identity } : {}), ...(key ? { receiptKey: key } : {}), ...(forge ? { forge } : {}), log: line, accessLog: access });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
      throw badInput(`cannot listen on ${host}:${port} (${code})`, 'LISTEN_FAILED');
    }
    throw e;
  }
  if (key) {
    const dirs = 'config' in source ? [...new Set(source.config.agent_task_profiles.map((e) => e.data_dir))] : [source.dataDir];
    try {
      for (const d of dirs) publishHubKey(d, key.publicKey);
    } catch (e) {
      await hub.close();
      throw e;
    }
    ctx.stderr.write(`hub: receipt key ${key.keyId}\n`);
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
