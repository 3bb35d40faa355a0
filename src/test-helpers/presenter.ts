import { presentSession } from '../checkout/presenter.ts';
import { unix } from '../lib/time.ts';
import { presentPayment } from '../payments/presenter.ts';
import type { TestPayment, TimeAdvance } from './service.ts';

/**
 * The answer of the pay helper: the session as GET /v1/checkout/sessions/:id shows it and the
 * payment attempt as GET /v1/payments/:id shows it (SUCCEEDED, FAILED for a decline, or PENDING
 * with next_action three_d_secure at a challenge left waiting).
 */
export function presentTestPayment(r: TestPayment, checkoutUrl: string) {
  return {
    object: 'test_helpers.checkout_payment' as const,
    livemode: r.session.livemode,
    checkout_session: presentSession(r.session, checkoutUrl),
    payment: presentPayment(r.payment, checkoutUrl),
  };
}

/** What one advance-time did. `as_of` is the moment work was looked ahead to; nothing keeps it. */
export function presentTimeAdvance(r: TimeAdvance) {
  return {
    object: 'test_helpers.time_advance' as const,
    livemode: false,
    seconds: r.seconds,
    as_of: unix(r.asOf),
    checkout_sessions_expired: r.sessionsExpired,
    invoice_reminders_sent: r.remindersSent,
    installments_charged: r.installmentsCharged,
    has_more: r.hasMore,
  };
}
