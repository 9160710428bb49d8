/**
 * What failed, in the terms of the age test vectors (c2sp.org/CCTV/age): the ASCII armor is
 * malformed, the header does not parse, no identity opens a stanza, the header MAC is wrong,
 * or the payload is damaged.
 */
export type AgeFailure = 'armor' | 'header' | 'no_match' | 'hmac' | 'payload';

export class AgeError extends Error {
  override name = 'AgeError';
  readonly kind: AgeFailure;
  constructor(message: string, kind: AgeFailure) {
    super(message);
    this.kind = kind;
  }
}
