import { z } from 'zod';
import { text } from '../lib/validate.ts';

/** POST /v1/customers/:id/portal-sessions. */
export const CreatePortalSession = z.strictObject({
  return_url: text(2048)
    .optional()
    .meta({
      description:
        'Where the portal\'s "Back to <business name>" link goes: an absolute https URL, or a URL of this service. Without it the portal shows no such link.',
      example: 'https://shop.example/account',
    }),
});
export type CreatePortalSession = z.infer<typeof CreatePortalSession>;
