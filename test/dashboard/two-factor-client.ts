import { generate } from 'otplib';
import { expect } from 'vitest';
import type { DashClient } from './client.ts';

/** The TOTP code of `secret` at a moment `offsetSeconds` from now, computed as an authenticator app does. */
export const totpCode = (secret: string, offsetSeconds = 0): Promise<string> => generate({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSeconds });

/** The key shown once by an enrolment page, read from its otpauth:// URI. */
export function secretOf(html: string): string {
  const uri = /data-totp-uri>([^<]+)</.exec(html)?.[1]?.replaceAll('&amp;', '&');
  if (!uri) throw new Error('no otpauth URI on the page');
  const secret = new URL(uri).searchParams.get('secret');
  if (!secret) throw new Error(`no secret in ${uri}`);
  return secret;
}

/** The recovery codes shown once, as the page shows them (xxxx-xxxx-xxxx). */
export const recoveryCodesOf = (html: string): string[] => [...html.matchAll(/<li><code>([a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4})<\/code><\/li>/g)].map((m) => m[1]!);

/**
 * A signed-in user turns the authenticator app on from the security page, with a code computed
 * from the key the page showed. Answers the key, the recovery codes and the code it confirmed with.
 */
export async function enrolTotp(c: DashClient): Promise<{ secret: string; codes: string[]; code: string }> {
  await c.get('/dashboard/security');
  const started = await c.post('/dashboard/security/totp', {});
  expect(started.status).toBe(200);
  const secret = secretOf(started.html);
  const code = await totpCode(secret);
  const done = await c.post('/dashboard/security/totp/confirm', { code });
  expect(done.status).toBe(200);
  const codes = recoveryCodesOf(done.html);
  expect(codes).toHaveLength(10);
  return { secret, codes, code };
}
