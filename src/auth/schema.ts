import { PermissionsInput } from './scopes.ts';
import { z } from 'zod';
import { listQuerySchema } from '../lib/pagination.ts';
import { businessNameProblem } from './keys.ts';

/** The longest overlap of a roll: the old key may keep working for up to 7 days. */
export const ROLL_OVERLAP_MAX_SECONDS = 7 * 24 * 3600;

/** POST /v1/api-keys takes no parameters: a key has no name or scope (spec 5.6). */
export const CreateApiKey = z.strictObject({ permissions: PermissionsInput });

/** POST /v1/api-keys/:id/roll: how long the old key keeps working (default 0: it ends now). */
export const RollApiKey = z.strictObject({
  expires_in: z
    .number({ error: `must be a whole number of seconds between 0 and ${ROLL_OVERLAP_MAX_SECONDS}` })
    .int(`must be a whole number of seconds between 0 and ${ROLL_OVERLAP_MAX_SECONDS}`)
    .min(0, `must be a whole number of seconds between 0 and ${ROLL_OVERLAP_MAX_SECONDS}`)
    .max(ROLL_OVERLAP_MAX_SECONDS, `must be a whole number of seconds between 0 and ${ROLL_OVERLAP_MAX_SECONDS} (7 days)`)
    .default(0)
    .meta({ description: 'How long the old key keeps working, in seconds: 0 (it ends now) to 604800 (7 days).' }),
});

/** POST /v1/api-keys/:id/revoke takes no parameters. */
export const RevokeApiKey = z.strictObject({});

export const ListApiKeys = listQuerySchema('key', {});

/** The longest logo_url: the address goes into every hosted page and its CSP. */
export const LOGO_URL_MAX = 2000;

/** Why `v` cannot be a logo address, or null: https only, no user or password, at most LOGO_URL_MAX characters. */
export function logoUrlProblem(v: string): string | null {
  if (v.length > LOGO_URL_MAX) return `must be at most ${LOGO_URL_MAX} characters`;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return 'must be an absolute https URL, like https://example.com/logo.png';
  }
  if (u.protocol !== 'https:') return 'must be an https URL (the hosted pages are served over https and allow images from that origin only)';
  if (u.username || u.password) return 'must not contain a user name or password';
  // The origin goes into the pages' Content-Security-Policy: a host name or an IP address, nothing else.
  if (!/^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$|^\[[0-9a-f:.]+\]$/.test(u.hostname)) return 'must have a valid host name';
  if (/[\s"'<>\\]/.test(v)) return 'must not contain spaces, quotes, angle brackets or backslashes';
  return null;
}

/**
 * POST (or PATCH) /v1/account: what the merchant may set on its account, shared by both modes.
 * Each field is optional (absent: unchanged) and null clears it.
 */
export const UpdateAccount = z.strictObject({
  business_name: z
    .string()
    .trim()
    .superRefine((v, ctx) => {
      const problem = businessNameProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .nullable()
    .optional(),
  support_email: z
    .string()
    .trim()
    .max(254, 'must be at most 254 characters')
    .pipe(z.email('must be an email address, like support@example.com'))
    .transform((v) => v.toLowerCase())
    .nullable()
    .optional(),
  brand_color: z
    .string()
    .regex(/^#[0-9a-fA-F]{6}$/, 'must be a colour as #rrggbb, like #0a7cff')
    .transform((v) => v.toLowerCase())
    .nullable()
    .optional(),
  logo_url: z
    .string()
    .superRefine((v, ctx) => {
      const problem = logoUrlProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .nullable()
    .optional(),
});
