// The safe lifecycle alias of a project name: what the capture checkpoint passes as --project and
// what preflight accepts besides the original basename (names with spaces and the like).

import { asciiClass } from '../../ascii-pattern.js';

const ALIAS_CHARS = asciiClass('A-Za-z0-9._-');

/**
 * name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'project', written out (no RegExp
 * for the hook's path): every run of other characters becomes one "-", then leading and trailing "-"
 * go.
 */
export function projectAlias(name: string): string {
  let out = '';
  for (let i = 0; i < name.length; ) {
    const c = name.charCodeAt(i);
    if (c < 128 && ALIAS_CHARS[c] === 1) {
      out += name[i];
      i++;
    } else {
      while (i < name.length && !(name.charCodeAt(i) < 128 && ALIAS_CHARS[name.charCodeAt(i)] === 1)) i++;
      out += '-';
    }
  }
  let a = 0;
  let b = out.length;
  while (a < b && out[a] === '-') a++;
  while (b > a && out[b - 1] === '-') b--;
  return out.slice(a, b) || 'project';
}
