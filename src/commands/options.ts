// Small typed accessors for parsed options. The parser already enforced presence of required options;
// these turn the raw values into typed ones with USAGE errors for malformed values. Commands with
// richer option sets validate with one zod schema instead.

import * as fs from 'node:fs';
import { ID_RE, isRepository } from '../core/contract/paths.js';
import { badInput, usageError } from '../core/errors.js';
import type { Invocation } from '../cli/types.js';
import { readCaFile } from '../core/hub-client/answer.js';

export function stringOpt(inv: Invocation, flag: string): string {
  const v = inv.opts[flag];
  if (typeof v !== 'string' || v === '') throw usageError(`--${flag} needs a non-empty value`);
  return v;
}

/** Refuses a command line without one of flags, which the command needs unless `unless` (e.g. "--uninstall") was given. */
export function requireOpts(inv: Invocation, flags: readonly string[], unless: string): void {
  for (const flag of flags) if (inv.opts[flag] === undefined) throw usageError(`missing required option --${flag} (unless ${unless})`);
}

export function optionalStringOpt(inv: Invocation, flag: string): string | undefined {
  const v = inv.opts[flag];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v === '') throw usageError(`--${flag} needs a non-empty value`);
  return v;
}

/** A directory that must exist already (BAD_INPUT otherwise): the installers write into a project, never create one. */
export function existingDir(p: string, what: string): string {
  const st = fs.statSync(p, { throwIfNoEntry: false });
  if (!st || !st.isDirectory()) throw badInput(`${what} ${p} is not an existing directory`, 'NOT_A_DIRECTORY');
  return p;
}

/** --ca-file as HubClient options: the CA certificates to trust for an https Hub, when given. */
export function caFileOpt(inv: Invocation): { ca?: Buffer } {
  const file = optionalStringOpt(inv, 'ca-file');
  return file === undefined ? {} : { ca: readCaFile(file) };
}

export function boolOpt(inv: Invocation, flag: string): boolean {
  return inv.opts[flag] === true;
}

/** A positive safe integer option (e.g. --lease-ms). */
export function intOpt(inv: Invocation, flag: string, min = 1, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = inv.opts[flag];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^[0-9]+$/.test(v)) throw usageError(`--${flag} must be a whole number`);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw usageError(`--${flag} must be between ${min} and ${max}`);
  return n;
}


/** A contract identifier option ([A-Za-z0-9._:-]{1,128}). */
export function idOpt(inv: Invocation, flag: string): string {
  const v = stringOpt(inv, flag);
  if (!ID_RE.test(v)) throw usageError(`--${flag} must match [A-Za-z0-9._:-]{1,128}`);
  return v;
}

/** An identifier positional argument. */
export function idArg(inv: Invocation, index: number, name: string): string {
  const v = inv.args[index];
  if (v === undefined || !ID_RE.test(v)) throw usageError(`${name} must match [A-Za-z0-9._:-]{1,128}`);
  return v;
}

/** --repository OWNER/NAME. */
export function repositoryOpt(inv: Invocation, flag = 'repository'): string {
  const v = stringOpt(inv, flag);
  if (!isRepository(v)) throw usageError(`--${flag} must be OWNER/NAME`);
  return v;
}
