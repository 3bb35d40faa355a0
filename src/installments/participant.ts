import type { PaymentParticipant } from '../checkout/participants.ts';
import { isPlanChoice } from '../lib/installments.ts';
import type { Services } from '../services.ts';
import { applyNewCard, createPlanFromFirstPart, customerOfPlan } from './service.ts';

/**
 * Installment plans in the checkout flow (listed in the composition root, src/compose.ts): the success of a session
 * that carries a chosen plan (its first part) creates the plan, in the transaction that records it;
 * a card-update setup session that saved a card makes it the plan's card. Nothing is refused here:
 * a link's places and an invoice's amount are their own participants' (which know a plan's first
 * part counts once and its total must fit).
 */
export function installmentParticipant(s: Services): PaymentParticipant {
  return {
    name: 'installments',
    beforeCharge: () => Promise.resolve(null),

    // The first part of a plan belongs to the plan's customer, like every later part.
    customerOf: (tx, session, attempt) => (isPlanChoice(session.installment) ? customerOfPlan(tx, session, attempt, session.installment) : Promise.resolve(null)),

    async afterSuccess(tx, session, payment) {
      if (isPlanChoice(session.installment)) await createPlanFromFirstPart(tx, s, session, payment, session.installment);
    },

    async afterSetup(tx, session, setup) {
      if (session.installment?.kind === 'card_update') await applyNewCard(tx, s, session, setup, session.installment.plan_id);
    },
  };
}
