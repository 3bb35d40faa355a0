import { paidPayment } from '../helpers/factories.ts';
import type { TestServer } from '../helpers/server.ts';

export { disputed, disputeOf } from '../helpers/factories.ts';

/** Pays a new session on the hosted page with `card`; answers the payment id. */
export async function pay(t: TestServer, key: string, card: string, amount = 1999): Promise<string> {
  return (await paidPayment(t, key, { amount, card })).paymentId;
}
