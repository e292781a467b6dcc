// DSSE (Dead Simple Signing Envelope, secure-systems-lab/dsse v1.0): the pre-authentication encoding
// a signature is over, and the envelope's JSON shape. PAE(type, body) =
// "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, with LEN the ASCII decimal byte length.

export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';

export interface DsseSignature {
  /** Base64 of the 64 Ed25519 signature bytes. */
  readonly sig: string;
  readonly keyid: string;
}

export interface DsseEnvelope {
  /** Base64 (standard alphabet, padded) of the payload bytes. */
  readonly payload: string;
  readonly payloadType: string;
  readonly signatures: readonly DsseSignature[];
}

export function pae(payloadType: string, payload: Uint8Array): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `, 'ascii'), type, Buffer.from(` ${payload.length} `, 'ascii'), payload]);
}

/** Strict standard base64 (padded, no whitespace): the decoding must re-encode to the same text. */
export function decodeBase64Strict(text: unknown): Buffer | undefined {
  if (typeof text !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  const b = Buffer.from(text, 'base64');
  return b.toString('base64') === text ? b : undefined;
}
