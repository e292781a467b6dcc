// Reference path and identifier rules of seed 000, without zod so that the hook path can use them too.

/** Contract identifiers (task, attempt, step, change, profile, owner, agent ids). */
export const ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
/** Ids and failure codes as the Stop hook checks them in a qualification answer. */
export const HOOK_ID_RE = /^[A-Za-z0-9._-]{1,128}$/;
/** OWNER/NAME: two segments of [A-Za-z0-9._-], neither starting with a dot (so neither is "." or ".."). */
export const REPOSITORY_RE = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}\/[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/;
export const MAX_REFERENCE_PATH = 1024;

export function isRepository(s: string): boolean {
  return REPOSITORY_RE.test(s);
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
