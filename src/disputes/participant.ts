import type { PaymentParticipant } from '../checkout/participants.ts';
import type { Services } from '../services.ts';
import { enqueueSyncAfterPayment } from './jobs.ts';

/**
 * Disputes take part in a payment only to learn of a dispute sooner: once a payment succeeded, a
 * delayed job asks the processor for new disputes (in test mode, card 0259 is disputed a second
 * later). Listed in the composition root (src/compose.ts). The reconcile pass asks too, so nothing depends on this job.
 */
export function disputePaymentParticipant(s: Services): PaymentParticipant {
  return {
    name: 'disputes',
    async beforeCharge() {
      return null;
    },
    async afterSuccess(tx, _session, payment) {
      tx.afterCommit(() => enqueueSyncAfterPayment(s, payment.id));
    },
  };
}
