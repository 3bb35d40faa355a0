import { createSession } from '../checkout/helpers.ts';
import { Payer } from '../helpers/payer.ts';
import type { TestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';

export const DISPUTED_CARD = '4000 0000 0000 0259';

/** Pays a new session on the hosted page with `card`; answers the payment id. */
export async function pay(t: TestServer, key: string, card: string, amount = 1999): Promise<string> {
  const cs = await createSession(t, key, { amount });
  const res = await new Payer(t).pay(cs.id, { card_number: card });
  if (res.status !== 303) throw new Error(`pay: ${res.status}`);
  const session = await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key });
  return session.body.payment_id as string;
}

/** The dispute of a payment, once the service has learnt of it (within `timeoutMs`). */
export async function disputeOf(t: TestServer, key: string, paymentId: string, timeoutMs = 15_000) {
  return eventually(async () => {
    const res = await t.request('GET', `/v1/disputes?payment_id=${paymentId}`, { key });
    return res.body.data?.[0];
  }, timeoutMs);
}

/** A payment made with the disputed card, and its dispute. */
export async function disputed(t: TestServer, key: string, amount = 1999) {
  const paymentId = await pay(t, key, DISPUTED_CARD, amount);
  return { paymentId, dispute: await disputeOf(t, key, paymentId) };
}
