import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/** `whsec_` then 32 random bytes in base64url (43 characters). */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

/** How long the secret replaced by a rotation keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

/** The HMAC key of each secret in use, made once (issue 28, point 5); bounded, as secrets rotate. */
const keys = new Map<string, KeyObject>();
const KEYS_MAX = 1000;
function keyOf(secret: string): KeyObject {
  let k = keys.get(secret);
  if (!k) {
    if (keys.size >= KEYS_MAX) keys.clear();
    k = createSecretKey(Buffer.from(secret, 'utf8'));
    keys.set(secret, k);
  }
  return k;
}

/**
 * `t=<unix seconds>,v1=<hex>[,v1=<hex>]` (DESIGN 5): lowercase hex HMAC-SHA256 keyed by the whole
 * `whsec_…` string over `"<t>.<raw body>"`, one v1 per secret given, the newest first.
 */
export function signatureHeader(secrets: readonly string[], body: string, t: number): string {
  const signed = `${t}.${body}`;
  let header = `t=${t}`;
  for (const s of secrets) header += `,v1=${createHmac('sha256', keyOf(s)).update(signed).digest('hex')}`;
  return header;
}
