import { unix } from '../lib/time.ts';
import type { PaymentLinkRow, SourceTotals } from './store.ts';

/** The payment_link object of the API (spec 2.2); webhook payloads use this same function. */
export function presentPaymentLink(row: PaymentLinkRow, publicLinkUrl: string) {
  return {
    id: row.id,
    object: 'payment_link' as const,
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
export type PaymentLink = ReturnType<typeof presentPaymentLink>;

/** GET /v1/payment-links/:id/analytics: totals, then the same figures per source. */
export function presentAnalytics(link: PaymentLinkRow, bySource: SourceTotals[]) {
  const sum = (k: 'views' | 'payments' | 'amount_collected_cents' | 'amount_refunded_cents') => bySource.reduce((n, s) => n + s[k], 0);
  return {
    object: 'payment_link_analytics' as const,
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
