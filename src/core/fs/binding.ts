// The fs binding node:fs itself calls, on the Node versions whose synchronous functions throw from the
// binding (20.19 and later of 20), for code that runs in a cold process: node:fs's JavaScript is
// compiled on first use in every process, and for a hook that costs more than the system calls it
// makes. direct.ts (node:fs in the hook bundles) and the bundles' loaders (src/cli/code-cache.ts) use
// it; on any other Node, on Windows, or under the permission model, they use node:fs.

/** The binding functions used, as Node 20.19+ defines them. */
export interface FsBinding {
  lstat(path: string, bigint: boolean, req: undefined, throwIfNoEntry: boolean): Float64Array | BigInt64Array | undefined;
  stat(path: string, bigint: boolean, req: undefined, throwIfNoEntry: boolean): Float64Array | BigInt64Array | undefined;
  fstat(fd: number, bigint: boolean, req: undefined, shouldNotThrow: boolean): Float64Array | BigInt64Array;
  open(path: string, flags: number, mode: number): number;
  close(fd: number): void;
  read(fd: number, buffer: Uint8Array, offset: number, length: number, position: number | bigint): number;
  readFileUtf8(path: string, flags: number): string;
  readdir(path: string, encoding: 'utf8', withFileTypes: boolean): string[] | [string[], number[]];
  readlink(path: string, encoding: 'utf8'): string;
  rename(from: string, to: string): void;
  mkdir(path: string, mode: number, recursive: false): void;
  chmod(path: string, mode: number): void;
  fchmod(fd: number, mode: number): void;
  fsync(fd: number): void;
  unlink(path: string): void;
  link(from: string, to: string): void;
  existsSync(path: string): boolean;
  writeFileUtf8(path: string, data: string, flags: number, mode: number): void;
  realpath(path: string, encoding: 'utf8'): string;
  /** Reports a failure in ctx (errno) instead of throwing. */
  writeBuffer(fd: number, buffer: Uint8Array, offset: number, length: number, position: null, req: undefined, ctx: { errno?: number }): number;
}

const FUNCTIONS = [
  'lstat', 'stat', 'fstat', 'open', 'close', 'read', 'readFileUtf8', 'readdir', 'readlink', 'rename', 'mkdir', 'chmod', 'fchmod', 'fsync', 'unlink',
  'link', 'existsSync', 'writeFileUtf8', 'realpath', 'writeBuffer',
] as const;

let found: FsBinding | null | undefined;

/** The binding, or undefined where node:fs must be used. */
export function fsBinding(): FsBinding | undefined {
  if (found === undefined) {
    found = null;
    const [major, minor] = process.versions.node.split('.').map(Number);
    // Under the permission model node:fs checks some access in JavaScript too, and on Windows it turns
    // paths into namespaced ones first: leave both to it.
    if (major === 20 && minor! >= 19 && process.platform !== 'win32' && (process as unknown as { permission?: unknown }).permission === undefined) {
      try {
        const b = (process as unknown as { binding(name: string): Record<string, unknown> }).binding('fs');
        if (FUNCTIONS.every((f) => typeof b[f] === 'function')) found = b as unknown as FsBinding;
      } catch {
        // no binding: node:fs it is
      }
    }
  }
  return found ?? undefined;
}
