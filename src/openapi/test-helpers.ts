import { z } from 'zod';
import { CheckoutSessionObject } from '../checkout/presenter.ts';
import { objectName, unixTime } from '../lib/objects.ts';
import { PaymentObject } from '../payments/presenter.ts';
import type { presentTestPayment, presentTimeAdvance } from '../test-helpers/presenter.ts';

/** The answer of POST /v1/test-helpers/checkout/sessions/:id/pay. */
export const TestPaymentObject = z
  .strictObject({
    object: objectName('test_helpers.checkout_payment'),
    livemode: z.boolean().meta({ description: 'Always false: test helpers work in test mode only.' }),
    checkout_session: CheckoutSessionObject,
    payment: PaymentObject,
  })
  .meta({
    id: 'test_helpers.checkout_payment',
    description:
      'The session and the payment attempt after a test payment: SUCCEEDED, FAILED for a decline, or PENDING with `next_action` `three_d_secure` at a challenge left waiting.',
  });

/** The answer of POST /v1/test-helpers/advance-time. */
export const TimeAdvanceObject = z
  .strictObject({
    object: objectName('test_helpers.time_advance'),
    livemode: z.boolean().meta({ description: 'Always false: test helpers work in test mode only.' }),
    seconds: z.number().int().meta({ description: 'How far ahead the work was looked for.' }),
    as_of: unixTime('The moment work was looked ahead to (nothing keeps it).'),
    checkout_sessions_expired: z.number().int().meta({ description: 'Checkout sessions expired.' }),
    invoice_reminders_sent: z.number().int().meta({ description: 'Invoice reminders sent.' }),
    installments_charged: z.number().int().meta({ description: 'Charges of installment parts made (paid or declined), retries included.' }),
    has_more: z.boolean().meta({ description: 'True when more work was due than one call does: call again.' }),
  })
  .meta({ id: 'test_helpers.time_advance', description: 'What one advance-time did.' });

// The presenters of src/test-helpers return exactly these objects (checked by tsc: a field added
// there fails here until it is documented).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameTestPayment: Same<ReturnType<typeof presentTestPayment>, z.infer<typeof TestPaymentObject>> = true;
const sameTimeAdvance: Same<ReturnType<typeof presentTimeAdvance>, z.infer<typeof TimeAdvanceObject>> = true;
export const TEST_HELPER_OBJECTS_CHECKED = sameTestPayment && sameTimeAdvance;
