import {
  createHash,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import { bech32Decode, bech32Encode } from '../../shared/bech32.ts';

/** A Scout key: a 32-byte X25519 secret, with the names of its forms (docs/archive-format.md, The Scout key). */
export interface ScoutKey {
  secret: Buffer;
  publicKey: Buffer;
  /** Lowercase hex SHA-256 of the public key. */
  fingerprint: string;
  /** Unpadded base64url of the secret. */
  keyBase64: string;
  ageIdentity: string;
  ageRecipient: string;
}

export function privateKeyObject(secret: Uint8Array): KeyObject {
  const x = publicFromSecret(secret);
  return createPrivateKey({
    key: {
      kty: 'OKP',
      crv: 'X25519',
      d: Buffer.from(secret).toString('base64url'),
      x: x.toString('base64url'),
    },
    format: 'jwk',
  });
}

export function publicKeyObject(publicKey: Uint8Array): KeyObject {
  return createPublicKey({
    key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(publicKey).toString('base64url') },
    format: 'jwk',
  });
}

function publicFromSecret(secret: Uint8Array): Buffer {
  // The JWK import needs `x`; derive it from a key built from the secret alone (PKCS#8).
  const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b656e04220420', 'hex'), Buffer.from(secret)]);
  const jwk = createPublicKey(createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })).export({
    format: 'jwk',
  });
  return Buffer.from(jwk.x ?? '', 'base64url');
}

/** X25519(secret, public): the shared secret. */
export function x25519(secret: Uint8Array, publicKey: Uint8Array): Buffer {
  return diffieHellman({ privateKey: privateKeyObject(secret), publicKey: publicKeyObject(publicKey) });
}

export function scoutKeyFromSecret(secret: Uint8Array): ScoutKey {
  if (secret.length !== 32) throw new Error('a Scout key is 32 bytes');
  const publicKey = publicFromSecret(secret);
  return {
    secret: Buffer.from(secret),
    publicKey,
    fingerprint: createHash('sha256').update(publicKey).digest('hex'),
    keyBase64: Buffer.from(secret).toString('base64url'),
    ageIdentity: bech32Encode('AGE-SECRET-KEY-', secret).toUpperCase(),
    ageRecipient: bech32Encode('age', publicKey),
  };
}

export function generateScoutKey(): ScoutKey {
  return scoutKeyFromSecret(randomBytes(32));
}

/** Reads a key given as base64url (`key_base64`) or as an age identity (`AGE-SECRET-KEY-1…`). */
export function parseScoutKey(text: string): ScoutKey {
  const trimmed = text.trim();
  if (/^AGE-SECRET-KEY-1/i.test(trimmed)) {
    const { hrp, data } = bech32Decode(trimmed);
    if (hrp !== 'age-secret-key-' || data.length !== 32) throw new Error('not an age X25519 identity');
    return scoutKeyFromSecret(data);
  }
  const secret = Buffer.from(trimmed, 'base64url');
  if (secret.length !== 32 || secret.toString('base64url') !== trimmed) {
    throw new Error('a Scout key is 32 bytes of unpadded base64url text (or an AGE-SECRET-KEY-1… identity)');
  }
  return scoutKeyFromSecret(secret);
}

/** The X25519 public key of an `age1…` recipient. */
export function parseRecipient(text: string): Buffer {
  const { hrp, data } = bech32Decode(text.trim());
  if (hrp !== 'age' || data.length !== 32) throw new Error('not an age X25519 recipient');
  return Buffer.from(data);
}
