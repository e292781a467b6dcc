// node:crypto on first use. Loading it costs a cold process about 6 ms, and read paths such as
// `tree-ring recall` import modules that can hash or make ids without ever doing so.

export function nodeCrypto(): typeof import('node:crypto') {
  return process.getBuiltinModule('node:crypto');
}
