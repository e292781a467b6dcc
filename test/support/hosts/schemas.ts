// Codex's own JSON Schemas for command-hook input and output (copied into ./codex-schemas from the
// Codex source). Codex rejects hook output that does not match (the hook counts as failed and does
// not block), so tests check the exact bytes a hook printed against them, and check that what Codex
// sent a hook still matches its input schema.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Ajv, type ValidateFunction } from 'ajv';

const SCHEMA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../test/support/hosts/codex-schemas');

export type CodexSchemaName =
  | 'session-start.command.output'
  | 'stop.command.input'
  | 'stop.command.output'
  | 'subagent-start.command.input'
  | 'subagent-start.command.output'
  | 'subagent-stop.command.input'
  | 'subagent-stop.command.output';

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new Map<CodexSchemaName, ValidateFunction>();

function validator(name: CodexSchemaName): ValidateFunction {
  let v = compiled.get(name);
  if (!v) {
    const schema: unknown = JSON.parse(fs.readFileSync(path.join(SCHEMA_DIR, `${name}.schema.json`), 'utf8'));
    v = ajv.compile(schema as object);
    compiled.set(name, v);
  }
  return v;
}

/** Errors of `value` against the named Codex schema; empty when it conforms. */
export function codexSchemaErrors(name: CodexSchemaName, value: unknown): string[] {
  const v = validator(name);
  if (v(value)) return [];
  return (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'invalid'} ${JSON.stringify(e.params)}`);
}

/**
 * Checks what a hook printed on stdout the way Codex reads it: empty stdout is "no output" (allowed);
 * otherwise it must be exactly one JSON object conforming to the schema. Throws with the reasons.
 */
export function assertCodexHookStdout(name: CodexSchemaName, stdout: string): void {
  if (stdout.trim() === '') return;
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch (err) {
    throw new Error(`hook stdout is not one JSON document (${(err as Error).message}): ${JSON.stringify(stdout)}`);
  }
  const errors = codexSchemaErrors(name, value);
  if (errors.length > 0) throw new Error(`hook stdout does not match Codex ${name}:\n${errors.join('\n')}\n${stdout}`);
}
