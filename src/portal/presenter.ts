import { z } from 'zod';
import { created, livemode, objectName, unixTime } from '../lib/objects.ts';
import { unix } from '../lib/time.ts';
import type { MerchantPortalLink } from './service.ts';

/** The answer of POST /v1/customers/:id/portal-sessions: a one-time sign-in link to the customer's portal. */
export const PortalSessionObject = z
  .strictObject({
    object: objectName('portal_session'),
    livemode: livemode(),
    customer_id: z.string().meta({ description: 'The customer the link signs in.', example: 'cus_01m89emrkt0006k689spej1tdy0e8' }),
    url: z.string().meta({
      description:
        'The one-time sign-in link: send the customer there (a redirect from your site, or a link in your own email). It works once, until `expires_at`, then the portal offers to email a new one. Shown only in this answer.',
      example: 'https://pay.example/portal/acct_01m89emrkt0006k689spej1tdy0e8/sign-in?token=…',
    }),
    expires_at: unixTime('When the link stops working (15 minutes after it was made).'),
    return_url: z.string().nullable().meta({ description: 'The `return_url` given, shown in the portal as "Back to <business name>"; null without one.' }),
    created: created(),
  })
  .meta({
    id: 'portal_session',
    description:
      'A one-time link that signs a customer in to the customer portal, where they see their own payments, receipts, invoices and installment plans with you. Nothing is kept that could show the link again.',
  });
export type PortalSession = z.infer<typeof PortalSessionObject>;

export function presentPortalSession(p: MerchantPortalLink): PortalSession {
  return {
    object: 'portal_session',
    livemode: p.livemode,
    customer_id: p.customerId,
    url: p.url,
    expires_at: unix(p.expiresAt),
    return_url: p.returnUrl,
    created: unix(p.createdAt),
  };
}
