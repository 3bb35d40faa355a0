import { z } from 'zod';
import { currencySchema, MAX_AMOUNT } from '../lib/currency.ts';
import { listQuerySchema } from '../lib/pagination.ts';
import { metadataSchema, text, unixSeconds } from '../lib/validate.ts';
import { installmentOptionsSchema } from '../lib/installments.ts';

export const LINK_TYPES = ['SINGLE', 'MULTI'] as const;
export const LINK_STATUSES = ['ACTIVE', 'COMPLETED', 'CANCELLED'] as const;
export const LINK_SOURCES = ['DIRECT', 'EMBED', 'WHATSAPP', 'QR'] as const;
export type LinkType = (typeof LINK_TYPES)[number];
export type LinkStatus = (typeof LINK_STATUSES)[number];
export type LinkSource = (typeof LINK_SOURCES)[number];

const amount = z
  .number({ error: 'must be an integer amount in the smallest currency unit' })
  .int('must be an integer amount in the smallest currency unit')
  .min(1, 'must be at least 1')
  .max(MAX_AMOUNT, `must be at most ${MAX_AMOUNT}`)
  .meta({ description: 'Charged per successful payment, in the smallest currency unit (the object shows it as `amount_cents`).' });

/**
 * A link's slug, the last segment of its public URL. The one definition: the API's schema and the
 * public pages test it here; migrations/0004_payment_links.sql repeats it in a CHECK (SQL cannot
 * import it) and points back here.
 */
export const SLUG_PATTERN = /^[a-z0-9-]{3,64}$/;

export const slugSchema = z.string().regex(SLUG_PATTERN, 'must be 3 to 64 characters of lowercase letters, digits and hyphens');

/** Writable on create and on update. Counters, url, status on create, id and the timestamps are not. */
const writable = {
  amount,
  currency: currencySchema,
  type: z.enum(LINK_TYPES),
  name: text(200).nullable(),
  slug: slugSchema.nullable(),
  description: text(1000).nullable(),
  customer_id: z.string().nullable(),
  collect_name: z.boolean(),
  collect_email: z.boolean(),
  collect_phone: z.boolean(),
  installment_enabled: z.boolean().meta({ description: 'The page offers to pay in installments (`installment_options`) besides paying in full.' }),
  installment_options: installmentOptionsSchema.nullable(),
  quantity_limit: z.number().int('must be an integer').min(1, 'must be at least 1').max(1_000_000_000).nullable(),
  expires_at: unixSeconds().nullable(),
  metadata: metadataSchema.nullable(),
};

export const CreatePaymentLink = z.strictObject(writable).partial().required({ amount: true, currency: true });
export type CreatePaymentLink = z.infer<typeof CreatePaymentLink>;

/** `status` moves a link between ACTIVE and CANCELLED; COMPLETED is reached only by payments. */
export const UpdatePaymentLink = z
  .strictObject({ ...writable, status: z.enum(['ACTIVE', 'CANCELLED']) })
  .partial();
export type UpdatePaymentLink = z.infer<typeof UpdatePaymentLink>;

export const ListPaymentLinks = listQuerySchema('pl', {
  status: z.enum(LINK_STATUSES).optional(),
  type: z.enum(LINK_TYPES).optional(),
});
export type ListPaymentLinks = z.infer<typeof ListPaymentLinks>;

/** `?src=` of the public page: anything unknown counts as DIRECT rather than losing the view. */
export function parseSource(value: unknown): LinkSource {
  const v = typeof value === 'string' ? value.toUpperCase() : '';
  return (LINK_SOURCES as readonly string[]).includes(v) ? (v as LinkSource) : 'DIRECT';
}
