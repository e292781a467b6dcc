// Incoming JSON from hosts and plugins (lifecycle-hook events, preflight stdin requests). Fields on the
// whitelist are validated; benign host metadata is ignored and never read further; fields that carry a
// capability or claim a root, store, bridge, harness or receipt state are rejected.

import * as fs from 'node:fs';
import { parseStrictJson, type JsonValue } from '../../canonical/json.js';
import { badInput } from '../../errors.js';
import { asciiLowercase } from '../text.js';

export const STDIN_MAX_BYTES = 1 << 20;

// Matched case-insensitively: against the key with its ASCII letters lowercased (upstream's rule, which
// folds no other letter). A key carries a capability when CAPABILITY_KEY matches it, and claims a field
// when it is one of CLAIM.
export const CAPABILITY_KEY = /capab|token|authori[sz]|secret|passw|credential|coordinator|api[_-]?key|cookie|bearer/;
export const CLAIM: ReadonlySet<string> = new Set([
  'store', 'store_id', 'store_root', 'root', 'memory_root', 'project_root', 'project_root_fingerprint', 'bridge', 'bridge_fingerprint', 'bridge_path',
  'harness', 'harness_id', 'adapter_version', 'receipt', 'receipt_id', 'receipt_state', 'state', 'manifest', 'descriptor',
]);

/** Rejects dangerous keys; returns the object. Raw input is never stored or echoed. */
export function screenInput(bytes: Uint8Array, what: string): Record<string, JsonValue> {
  const doc = parseStrictJson(bytes, { maxBytes: STDIN_MAX_BYTES, what });
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw badInput(`${what} must be a JSON object`, 'BAD_INPUT');
  for (const key of Object.keys(doc)) {
    const k = asciiLowercase(key);
    if (CAPABILITY_KEY.test(k)) throw badInput(`${what} carries a capability-bearing field; refused`, 'CAPABILITY_FIELD');
    if (CLAIM.has(k)) throw badInput(`${what} claims a root, store, bridge, harness or receipt field; refused`, 'CLAIM_FIELD');
  }
  return doc as Record<string, JsonValue>;
}

export function requiredString(o: Record<string, JsonValue>, key: string, what: string, max = 4096): string {
  const v = o[key];
  if (typeof v !== 'string' || v.length === 0 || v.length > max) throw badInput(`${what}: ${key} must be a non-empty string`, 'BAD_INPUT');
  return v;
}

export function optionalString(o: Record<string, JsonValue>, key: string, what: string, max = 4096): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length > max) throw badInput(`${what}: ${key} must be a string`, 'BAD_INPUT');
  return v;
}

/**
 * Reads file descriptor 0 synchronously to its end (the hook's bundled entry: no stream machinery to
 * load). Returns undefined when the descriptor is non-blocking and not ready, so the caller can fall
 * back to the stream.
 */
export function readFd0Bounded(maxBytes: number): Buffer | undefined {
  const chunks: Buffer[] = [];
  let total = 0;
  const buf = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = fs.readSync(0, buf, 0, buf.length, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN' && total === 0) return undefined;
      if (code === 'EOF') break;
      throw badInput(`cannot read stdin: ${code ?? 'error'}`, 'STDIN');
    }
    if (n === 0) break;
    total += n;
    if (total > maxBytes) throw badInput(`input is over the ${maxBytes}-byte limit`, 'TOO_LARGE');
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks, total);
}

/** Reads a stream to its end, refusing more than maxBytes. */
export async function readBounded(stream: NodeJS.ReadableStream, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    total += b.length;
    if (total > maxBytes) throw badInput(`input is over the ${maxBytes}-byte limit`, 'TOO_LARGE');
    chunks.push(b);
  }
  return Buffer.concat(chunks, total);
}
