// Constants shared by the zod contract and the zod-free collector code.

/** A pinned image: the full content ID (source of runtime-probe's IMAGE_ID_RE). */
export const IMAGE_ID_RE_SOURCE = '^sha256:[0-9a-f]{64}$';
