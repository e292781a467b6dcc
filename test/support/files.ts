// Copies of test trees that keep what the product checks.

import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * fs.cpSync of a tree, then each directory's mode set as in the source: Node 22's cpSync makes every
 * directory with the default mode (0755 here), and a data dir copied so is no longer owner-private, which
 * every command refuses.
 */
export function copyTree(src: string, dst: string): void {
  fs.cpSync(src, dst, { recursive: true });
  const modes = (s: string, d: string): void => {
    const st = fs.lstatSync(s);
    if (!st.isDirectory()) return;
    fs.chmodSync(d, st.mode & 0o7777);
    for (const name of fs.readdirSync(s)) modes(path.join(s, name), path.join(d, name));
  };
  modes(src, dst);
}
