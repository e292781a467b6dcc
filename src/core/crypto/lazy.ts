// node:crypto on first use. Loading it costs a cold process about 6 ms, and read paths such as
// `tree-ring recall` import modules that can hash or make ids without ever doing so. Once a process has
// it (it hashes in bulk, as the Stop hooks' workspace scan does), short digests use it too: there the
// plain-JavaScript SHA-256 would only add cold, un-optimized work.

let loaded: typeof import('node:crypto') | undefined;

export function nodeCrypto(): typeof import('node:crypto') {
  loaded ??= process.getBuiltinModule('node:crypto');
  return loaded;
}

/** Whether this process has loaded node:crypto through nodeCrypto(). */
export function nodeCryptoLoaded(): boolean {
  return loaded !== undefined;
}
