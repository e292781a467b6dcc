// Reference path and identifier rules of seed 000, without zod so that the hook path can use them too.
// The hooks test ids with the stand-ins (ID, HOOK_ID, isRepository), which run no RegExp
// (../ascii-pattern.ts); schemas use the RegExps, and a test holds each pair equal.

import { allIn, asciiClass, AsciiRun } from '../ascii-pattern.js';

/** Contract identifiers (task, attempt, step, change, profile, owner, agent ids). */
export const ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
export const ID = new AsciiRun('A-Za-z0-9._:-', 1, 128);
/** Ids and failure codes as the Stop hook checks them in a qualification answer. */
export const HOOK_ID_RE = /^[A-Za-z0-9._-]{1,128}$/;
export const HOOK_ID = new AsciiRun('A-Za-z0-9._-', 1, 128);
/** OWNER/NAME: two non-dot segments of [A-Za-z0-9._-]. */
export const REPOSITORY_RE = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}\/[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/;
export const MAX_REFERENCE_PATH = 1024;

const REPO_FIRST = asciiClass('A-Za-z0-9_');
const REPO_REST = asciiClass('A-Za-z0-9._-');

/** s[from, to) as one REPOSITORY_RE segment: 1..max characters, the first not a dot. */
function repositorySegment(s: string, from: number, to: number, max: number): boolean {
  if (to - from < 1 || to - from > max) return false;
  const c = s.charCodeAt(from);
  return c < 128 && REPO_FIRST[c] === 1 && allIn(s, REPO_REST, from + 1, to);
}

/** REPOSITORY_RE's test, and neither segment "." or ".." (which its first character already excludes). */
export function isRepository(s: string): boolean {
  const slash = s.indexOf('/');
  return slash > 0 && repositorySegment(s, 0, slash, 64) && repositorySegment(s, slash + 1, s.length, 100);
}

/**
 * Why a canonical relative reference path is refused, or undefined when it is acceptable: ASCII only,
 * "/" as the only separator, no empty, "." or ".." component, no leading "/", no backslash, no control
 * character (NUL..US and DEL) and no ":" (drive letters, URL schemes, NTFS streams).
 */
export function referencePathProblem(p: string): string | undefined {
  if (p.length === 0) return 'is empty';
  if (p.length > MAX_REFERENCE_PATH) return `is longer than ${MAX_REFERENCE_PATH} characters`;
  for (let i = 0; i < p.length; i++) {
    const c = p.charCodeAt(i);
    if (c > 0x7e) return c === 0x7f ? 'contains a control character' : 'is not ASCII';
    if (c < 0x20) return 'contains a control character';
  }
  if (p.includes('\\')) return 'contains a backslash';
  if (p.includes(':')) return 'contains ":" (drive or prefix form)';
  if (p.startsWith('/')) return 'is absolute';
  for (const seg of p.split('/')) {
    if (seg === '') return 'has an empty component';
    if (seg === '.' || seg === '..') return `has a "${seg}" component`;
  }
  return undefined;
}
