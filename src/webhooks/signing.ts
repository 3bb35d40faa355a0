import { createHmac, randomBytes } from 'node:crypto';

/** `whsec_` then 32 random bytes in base64url (43 characters). */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

/** How long the secret replaced by a rotation keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

/**
 * `t=<unix seconds>,v1=<hex>[,v1=<hex>]` (DESIGN 5): lowercase hex HMAC-SHA256 keyed by the whole
 * `whsec_…` string over `"<t>.<raw body>"`, one v1 per secret given, the newest first.
 */
export function signatureHeader(secrets: readonly string[], body: string, t: number): string {
  const signed = `${t}.${body}`;
  return [`t=${t}`, ...secrets.map((s) => `v1=${createHmac('sha256', s).update(signed).digest('hex')}`)].join(',');
}
