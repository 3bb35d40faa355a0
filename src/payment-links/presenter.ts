import { z } from 'zod';
import { amountCents, created, currencyCode, livemode, metadataObject, nullableUnixTime, objectId, objectName, refId, updated } from '../lib/objects.ts';
import { unix } from '../lib/time.ts';
import { effectiveOptions, InstallmentOptionObject } from '../lib/installments.ts';
import { LINK_SOURCES, LINK_STATUSES, LINK_TYPES } from './schema.ts';
import type { PaymentLinkRow, SourceTotals } from './store.ts';

const count = (description: string) => z.number().int().meta({ description });

/** The payment_link object of the API (spec 2.2). */
export const PaymentLinkObject = z
  .strictObject({
    id: objectId('pl', 'payment link'),
    object: objectName('payment_link'),
    livemode: livemode(),
    type: z.enum(LINK_TYPES).meta({ description: '`SINGLE` ends after one successful payment; `MULTI` is reusable.' }),
    name: z.string().nullable().meta({ description: 'Internal name, never shown to payers.' }),
    slug: z.string().nullable().meta({ description: 'The last segment of the pretty link URL.' }),
    url: z.string().meta({ description: 'The public page to share: the slug, or the id without one, under `PUBLIC_LINK_URL`.' }),
    status: z
      .enum(LINK_STATUSES)
      .meta({ description: '`ACTIVE` takes payments; `COMPLETED` once `quantity_limit` is reached (or a SINGLE link paid); `CANCELLED` by an update.' }),
    amount_cents: amountCents('Charged per successful payment.'),
    currency: currencyCode(),
    description: z.string().nullable().meta({ description: 'Shown to the payer on the page.' }),
    customer_id: refId('cus', 'The attached customer.'),
    collect_name: z.boolean().meta({ description: "The page asks for the payer's name." }),
    collect_email: z.boolean().meta({ description: "The page asks for the payer's email." }),
    collect_phone: z.boolean().meta({ description: "The page asks for the payer's phone number." }),
    installment_enabled: z.boolean().meta({ description: 'The link offers installment payment: the payer may choose a plan of `installment_options` instead of paying in full.' }),
    installment_options: z
      .array(InstallmentOptionObject)
      .meta({ description: 'The plans offered when `installment_enabled` (the default when none were set: 3 monthly payments). Options that would split the amount into parts under 1 are not offered.' }),
    quantity_limit: z.number().int().nullable().meta({ description: 'Hard cap on successful payments; reaching it makes the link COMPLETED.' }),
    view_count: count('Times the public page was loaded.'),
    payment_count: count('Successful payments through the link.'),
    total_collected_cents: amountCents('Running total of successful payments (gross: refunds do not lower it).'),
    expires_at: nullableUnixTime('After this the link takes no payment.'),
    metadata: metadataObject(),
    created: created(),
    updated: updated(),
  })
  .meta({ id: 'payment_link', description: 'A reusable or one-time public URL that collects a payment.' });
export type PaymentLink = z.infer<typeof PaymentLinkObject>;

const figures = {
  views: count('Page views.'),
  payments: count('Successful payments.'),
  amount_collected_cents: amountCents('Collected by those payments (gross).'),
  amount_refunded_cents: amountCents('Refunded of those payments (SUCCEEDED refunds).'),
  net_collected_cents: amountCents('Collected less refunded.'),
};

/** GET /v1/payment-links/:id/analytics. */
export const PaymentLinkAnalyticsObject = z
  .strictObject({
    object: objectName('payment_link_analytics'),
    payment_link: z.string().meta({ description: 'The id of the payment link.', example: 'pl_01m89emrkt0006k689spej1tdy0e8' }),
    livemode: livemode(),
    currency: currencyCode(),
    ...figures,
    sources: z
      .array(
        z
          .strictObject({ source: z.enum(LINK_SOURCES).meta({ description: 'Where the payer came from (`?src=` of the public page).' }), ...figures })
          .meta({ id: 'payment_link_source_totals', description: 'The figures of one source.' }),
      )
      .meta({ description: 'The same figures per source: DIRECT, EMBED, WHATSAPP, QR.' }),
  })
  .meta({ id: 'payment_link_analytics', description: 'Views, payments and amounts of a payment link, in all and per source.' });
export type PaymentLinkAnalytics = z.infer<typeof PaymentLinkAnalyticsObject>;

/** The payment_link object of the API (spec 2.2); webhook payloads use this same function. */
export function presentPaymentLink(row: PaymentLinkRow, publicLinkUrl: string): PaymentLink {
  return {
    id: row.id,
    object: 'payment_link',
    livemode: row.livemode,
    type: row.type,
    name: row.name,
    slug: row.slug,
    url: `${publicLinkUrl}/${row.path}`,
    status: row.status,
    amount_cents: row.amount_cents,
    currency: row.currency,
    description: row.description,
    customer_id: row.customer_id,
    collect_name: row.collect_name,
    collect_email: row.collect_email,
    collect_phone: row.collect_phone,
    installment_enabled: row.installment_enabled,
    installment_options: effectiveOptions(row.installment_options).map((o) => ({ count: o.count, interval: o.interval })),
    quantity_limit: row.quantity_limit,
    view_count: row.view_count,
    payment_count: row.payment_count,
    total_collected_cents: row.total_collected_cents,
    expires_at: row.expires_at ? unix(row.expires_at) : null,
    metadata: row.metadata,
    created: unix(row.created_at),
    updated: unix(row.updated_at),
  };
}
/** GET /v1/payment-links/:id/analytics: totals, then the same figures per source. */
export function presentAnalytics(link: PaymentLinkRow, bySource: SourceTotals[]): PaymentLinkAnalytics {
  const sum = (k: 'views' | 'payments' | 'amount_collected_cents' | 'amount_refunded_cents') => bySource.reduce((n, s) => n + s[k], 0);
  return {
    object: 'payment_link_analytics',
    payment_link: link.id,
    livemode: link.livemode,
    currency: link.currency,
    views: sum('views'),
    payments: sum('payments'),
    // Gross, as total_collected_cents on the link: refunds never lower it (docs/decisions.md, Refunds).
    amount_collected_cents: sum('amount_collected_cents'),
    amount_refunded_cents: sum('amount_refunded_cents'),
    net_collected_cents: sum('amount_collected_cents') - sum('amount_refunded_cents'),
    sources: bySource.map((s) => ({
      source: s.source,
      views: s.views,
      payments: s.payments,
      amount_collected_cents: s.amount_collected_cents,
      amount_refunded_cents: s.amount_refunded_cents,
      net_collected_cents: s.amount_collected_cents - s.amount_refunded_cents,
    })),
  };
}
