import { z } from 'zod';
import { listQuerySchema } from '../lib/pagination.ts';

/** The longest overlap of a roll: the old key may keep working for up to 7 days. */
export const ROLL_OVERLAP_MAX_SECONDS = 7 * 24 * 3600;

/** POST /v1/api-keys takes no parameters: a key has no name or scope (spec 5.6). */
export const CreateApiKey = z.strictObject({});

/** POST /v1/api-keys/:id/roll: how long the old key keeps working (default 0: it ends now). */
export const RollApiKey = z.strictObject({
  expires_in: z
    .number({ error: `must be a whole number of seconds between 0 and ${ROLL_OVERLAP_MAX_SECONDS}` })
    .int(`must be a whole number of seconds between 0 and ${ROLL_OVERLAP_MAX_SECONDS}`)
    .min(0, `must be a whole number of seconds between 0 and ${ROLL_OVERLAP_MAX_SECONDS}`)
    .max(ROLL_OVERLAP_MAX_SECONDS, `must be a whole number of seconds between 0 and ${ROLL_OVERLAP_MAX_SECONDS} (7 days)`)
    .default(0),
});

/** POST /v1/api-keys/:id/revoke takes no parameters. */
export const RevokeApiKey = z.strictObject({});

export const ListApiKeys = listQuerySchema('key', {});
